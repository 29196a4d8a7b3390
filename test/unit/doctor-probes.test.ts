// The doctor's pure parsers and shape checks: pi's model table, vitest's summary, the rules shape, the
// settings entry that points at the factory, and which extensions are looked at.
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extensionNames } from '../../src/doctor/checks.js';
import { createDoctorContext } from '../../src/doctor/context.js';
import { droppedByFilter, pointsAtFactory, rulesProblem } from '../../src/doctor/nodeFiles.js';
import { runDoctor } from '../../src/doctor/run.js';
import { nodePackageEntry } from '../../src/pi/node.js';
import { factoryRoot } from '../../src/pi/resolve.js';
import { parseModelList } from '../../src/doctor/probes.js';

describe('parseModelList', () => {
  it('reads the padded table pi prints, ignoring lines before its header and trailing blanks', () => {
    const text = [
      'Warning: something first',
      'provider    model                 context  max-out  thinking  images',
      'openrouter  z-ai/glm-5.3          200K     16.4K    yes       no    ',
      'scripted    alpha                 128K     16.4K    no        no    ',
      '',
    ].join('\n');
    expect(parseModelList(text)).toEqual([
      { provider: 'openrouter', model: 'z-ai/glm-5.3' },
      { provider: 'scripted', model: 'alpha' },
    ]);
  });

  it('gives nothing for "No models matching"', () => {
    expect(parseModelList('No models matching "zzz"\n')).toEqual([]);
  });
});

describe('rulesProblem', () => {
  it('accepts the shape damage-control reads and names the first problem otherwise', () => {
    expect(rulesProblem({ bash: { deny: ['rm -rf'], ask: [] }, paths: { protected: ['.env'] } })).toBeUndefined();
    expect(rulesProblem({})).toBeUndefined();
    expect(rulesProblem(['x'])).toBe('a mapping with bash and paths expected');
    expect(rulesProblem({ bash: {}, extra: 1 })).toBe('unknown key(s) extra');
    expect(rulesProblem({ bash: { deny: 'rm' } })).toBe('bash.deny must be a list of strings');
    expect(rulesProblem({ bash: { ask: ['(('] } })).toBe('bash.ask: invalid regular expression "(("');
    expect(rulesProblem({ paths: { protected: ['(('] } })).toBeUndefined(); // globs, not regexes
  });
});

describe('pointsAtFactory', () => {
  it('matches a local source resolving to the factory, as string or entry', () => {
    expect(pointsAtFactory(['../../factory'], '/w/app/.pi', '/w/factory')).toBe(true);
    expect(pointsAtFactory([{ source: '/w/factory/' }], '/w/app/.pi', '/w/factory')).toBe(true);
    expect(pointsAtFactory(['npm:factory', '../other'], '/w/app/.pi', '/w/factory')).toBe(false);
    expect(pointsAtFactory(undefined, '/w/app/.pi', '/w/factory')).toBe(false);
  });
});

describe('extensionNames', () => {
  it('lists all seven extensions of the node, each required: a missing one is a failing row, never a row that disappears', () => {
    expect(
      extensionNames()
        .map((e) => e.name)
        .sort(),
    ).toEqual([
      'damage-control',
      'factory-compact',
      'factory-context',
      'factory-guard',
      'factory-inventory',
      'factory-obs',
      'factory-report',
    ]);
    expect(extensionNames().every((e) => e.required)).toBe(true);
  });
});

describe('the doctor sees the whole node', () => {
  const ALL = extensionNames().map((e) => `.pi/extensions/${e.name}.ts`);

  it('droppedByFilter reads a packages entry as pi does: no key loads all, [] none, !, + and - as documented', () => {
    expect(droppedByFilter('../factory')).toEqual([]);
    expect(droppedByFilter({ source: '../factory' })).toEqual([]);
    expect(droppedByFilter(nodePackageEntry('../factory'))).toEqual([]);
    expect(droppedByFilter({ source: '../f', extensions: ['.pi/extensions'] })).toEqual([]);
    expect(
      droppedByFilter({ source: '../f', extensions: ['.pi/extensions/*.ts', '!.pi/extensions/damage-control.ts'] }),
    ).toEqual(['.pi/extensions/damage-control.ts']);
    expect(droppedByFilter({ source: '../f', extensions: ['!.pi/extensions/factory-compact.ts'] })).toEqual([
      '.pi/extensions/factory-compact.ts',
    ]);
    expect(
      droppedByFilter({ source: '../f', extensions: ['.pi/extensions/*.ts', '-.pi/extensions/factory-obs.ts'] }),
    ).toEqual(['.pi/extensions/factory-obs.ts']);
    expect(
      droppedByFilter({ source: '../f', extensions: ['!.pi/extensions/*.ts', '+.pi/extensions/factory-obs.ts'] }),
    ).toEqual(ALL.filter((f) => !f.endsWith('factory-obs.ts')));
    expect(droppedByFilter({ source: '../f', extensions: [] })).toEqual(ALL);
    expect(droppedByFilter({ source: '../f', extensions: 'all' })).toEqual(ALL);
  });

  it('a missing extension file and a settings filter that drops one are failing rows', async () => {
    const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-doctor-node-')));
    try {
      // A copy of the factory's node without factory-context.ts, and a repo whose settings filter drops damage-control.
      const factory = path.join(scratch, 'factory');
      cpSync(path.join(factoryRoot(), '.pi'), path.join(factory, '.pi'), { recursive: true });
      rmSync(path.join(factory, '.pi/extensions/factory-context.ts'));
      const repo = path.join(scratch, 'repo');
      mkdirSync(path.join(repo, '.pi'), { recursive: true });
      const entry = {
        ...nodePackageEntry('../../factory'),
        extensions: ALL.filter((f) => !f.endsWith('damage-control.ts')),
      };
      writeFileSync(path.join(repo, '.pi/settings.json'), JSON.stringify({ packages: [entry] }));
      const ctx = await createDoctorContext({ cwd: repo, env: { PATH: process.env.PATH }, factoryRoot: factory });
      const rows = Object.fromEntries((await runDoctor(ctx, { only: ['node'] })).map((r) => [r.id, r]));
      expect(rows['node.ext.factory-context']).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(/factory-context\.ts: missing$/),
      });
      expect(rows['node.ext.factory-compact']).toMatchObject({ status: 'ok' });
      expect(rows['node.settings']).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('does not load .pi/extensions/damage-control.ts (its extensions filter)'),
      });
      // Another install of the factory loaded beside this one: pi would refuse to start (report_phase twice).
      const other = path.join(scratch, 'other-install');
      cpSync(path.join(factoryRoot(), '.pi'), path.join(other, '.pi'), { recursive: true });
      writeFileSync(
        path.join(repo, '.pi/settings.json'),
        JSON.stringify({ packages: [nodePackageEntry('../../other-install'), nodePackageEntry('../../factory')] }),
      );
      const twice = Object.fromEntries((await runDoctor(ctx, { only: ['node'] })).map((r) => [r.id, r]));
      expect(twice['node.settings']).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(
          /loads the factory 2 times \("\.\.\/\.\.\/other-install", "\.\.\/\.\.\/factory"\): pi would load the node twice/,
        ),
      });
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
