// The arm's fence, as pure decisions: the user's tree and the other trees of the run are out of reach of its
// tools — by path for read/write/edit/grep/find/ls, by text for bash — while its own tree (inside a fenced folder)
// and links out of it (its node_modules) stay readable.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fencedInCommand, fencedRoots, fenceReason } from '../lib/fence.js';
import { decideToolCall, parseRules } from '../extensions/damage-control.js';

const USER = '/home/u/repo';
const RUN = '/tmp/factory-worktrees/repo-0123456789/ab12cd34';
const OWN = path.join(RUN, 'arm_2');
const FENCE = [USER, RUN];

describe('the fence of an arm', () => {
  it('reads the fenced folders from FACTORY_FENCED, absolute paths only', () => {
    expect(fencedRoots({ FACTORY_FENCED: JSON.stringify([USER, 'relative/x', 3, RUN]) })).toEqual([USER, RUN]);
    expect(fencedRoots({ FACTORY_FENCED: 'not json' })).toEqual([]);
    expect(fencedRoots({})).toEqual([]);
  });

  it("refuses paths into the user tree or another arm, never the arm's own tree", () => {
    expect(fenceReason(`${USER}/src/a.js`, OWN, FENCE)).toMatch(
      /^\/home\/u\/repo\/src\/a\.js is in another tree of this run .* \(intent fenced\)$/,
    );
    expect(fenceReason(`${RUN}/arm_1/src/a.js`, OWN, FENCE)).toMatch(/intent fenced/);
    expect(fenceReason(`../prime/specs/x.md`, OWN, FENCE)).toMatch(/intent fenced/);
    expect(fenceReason(`@${USER}/README.md`, OWN, FENCE)).toMatch(/intent fenced/);
    expect(fenceReason('src/a.js', OWN, FENCE)).toBeUndefined();
    expect(fenceReason(`${OWN}/src/a.js`, OWN, FENCE)).toBeUndefined();
    expect(fenceReason('node_modules/kit/index.js', OWN, FENCE)).toBeUndefined(); // a link to the user's package, read as written
    expect(fenceReason('/etc/hosts', OWN, FENCE)).toBeUndefined(); // not fenced: the write guard judges writes there
    expect(fenceReason(`${USER}/x`, OWN, [])).toBeUndefined();
  });

  it('refuses a bash command naming a fenced path outside the own tree', () => {
    expect(fencedInCommand(`cat ${USER}/.env`, OWN, FENCE)).toMatch(/^\/home\/u\/repo\/\.env is in another tree/);
    expect(fencedInCommand(`cd "${RUN}/arm_1" && ls`, OWN, FENCE)).toMatch(/arm_1 is in another tree/);
    expect(fencedInCommand(`ls ${OWN}/src; node --test`, OWN, FENCE)).toBeUndefined();
    expect(fencedInCommand('npm test', OWN, FENCE)).toBeUndefined();
  });

  it('damage-control applies it to every path tool, and to bash before its own rules', () => {
    const rules = parseRules('bash:\n  deny: []\n  ask: []\npaths:\n  protected: []\n', 'rules.yaml');
    if (!rules.ok) throw new Error(rules.error);
    for (const tool of ['read', 'write', 'edit', 'grep', 'find', 'ls']) {
      expect(decideToolCall(rules.rules, tool, { path: `${USER}/README.md` }, OWN, { fenced: FENCE })).toMatchObject({
        action: 'deny',
        reason: expect.stringMatching(/intent fenced/),
      });
    }
    expect(decideToolCall(rules.rules, 'bash', { command: `ls ${USER}` }, OWN, { fenced: FENCE })).toMatchObject({
      action: 'deny',
    });
    expect(decideToolCall(rules.rules, 'read', { path: 'README.md' }, OWN, { fenced: FENCE })).toEqual({
      action: 'allow',
    });
    expect(decideToolCall(rules.rules, 'read', { path: `${USER}/README.md` }, OWN, {})).toEqual({ action: 'allow' });
  });
});
