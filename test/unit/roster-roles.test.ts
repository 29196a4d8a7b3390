// A role the workflows do not know is a typo, refused with the nearest known name (issue 23, P4): today
// `bulider:` was accepted and the run used pi's default model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadRoster, RosterError } from '../../src/config/roster.js';
import { editDistance, nearestName, unknownRoleMotif } from '../../src/config/rosterRoles.js';

describe('editDistance and nearestName', () => {
  it('counts a swap of two neighbours as one edit, like an insertion, a deletion or a substitution', () => {
    expect(editDistance('bulider', 'builder')).toBe(1);
    expect(editDistance('buildr', 'builder')).toBe(1);
    expect(editDistance('biulder', 'builder')).toBe(1);
    expect(editDistance('propmter', 'prompter')).toBe(1);
    expect(editDistance('jugde', 'judge')).toBe(1);
    expect(editDistance('builder', 'builder')).toBe(0);
    expect(editDistance('', 'judge')).toBe(5);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('names the nearest candidate only when it is near enough to be the one meant', () => {
    const roles = ['prompter', 'builder', 'judge'];
    expect(nearestName('bulider', roles)).toBe('builder');
    expect(nearestName('build', roles)).toBe('builder');
    expect(nearestName('prompt', roles)).toBe('prompter');
    expect(nearestName('judg', roles)).toBe('judge');
    expect(nearestName('reviewer', roles)).toBeUndefined();
    expect(nearestName('x1', roles)).toBeUndefined();
  });
});

describe('unknownRoleMotif', () => {
  const file = '/repo/adws/adw_config/factory.config.yaml';
  it('is undefined when every role is one the workflows run', () => {
    expect(unknownRoleMotif(['prompter', 'builder', 'judge'], file)).toBeUndefined();
    expect(unknownRoleMotif([], file)).toBeUndefined();
  });

  it('names the nearest role, and that the roster lacks it when it does', () => {
    expect(unknownRoleMotif(['prompter', 'bulider'], file)).toBe(
      `unknown role bulider in ${file}: did you mean builder? (the roster has no builder, which factory build and every bon arm runs)`,
    );
    expect(unknownRoleMotif(['builder', 'bulider'], file)).toBe(
      `unknown role bulider in ${file}: did you mean builder?`,
    );
  });

  it('lists the roles when no known one is near, and counts the other unknown roles', () => {
    expect(unknownRoleMotif(['reviewer', 'critic'], file)).toBe(
      `unknown role reviewer in ${file}: the roles are prompter (factory prompt), builder (factory build and every bon arm), judge (bon --judge) (and 1 more unknown role: critic)`,
    );
  });
});

describe('loadRoster refuses an unknown role in one line', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-roster-roles-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('`bulider:` is a RosterError (exit 2) naming the file and builder', async () => {
    const file = path.join(dir, 'factory.config.yaml');
    fs.writeFileSync(file, 'gateway: ""\nagents:\n  prompter: { model: a/b }\n  bulider:\n    model: a/c\n');
    const error = await loadRoster(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RosterError);
    expect((error as Error).message).toBe(
      `unknown role bulider in ${file}: did you mean builder? (the roster has no builder, which factory build and every bon arm runs)`,
    );
  });

  it('the known roles load as before', async () => {
    const file = path.join(dir, 'factory.config.yaml');
    fs.writeFileSync(
      file,
      'gateway: ""\nagents:\n  prompter: { model: a/b }\n  builder: { model: a/c }\n  judge: { model: a/d }\n',
    );
    expect(Object.keys((await loadRoster(file)).agents)).toEqual(['prompter', 'builder', 'judge']);
  });
});
