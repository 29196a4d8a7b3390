// An arm never moves the user's branch (issue 23 point 0), through the real pi under test and the scripted model.
// In worktrees each arm has a git of its own (its objects borrowed from the user's through alternates) and works in
// the OS sandbox: a hostile arm that finds the user's .git (the alternates file names its object store) and moves
// its branch, tags it, sets its core.hooksPath and plants a hook there is refused by the sandbox, and what it does
// to its own git (a remote, core.hooksPath) makes it red, each act named. In place it does the same from the user's
// tree. After the run every ref, HEAD, packed-refs, the reflogs, the index, the config and the hooks are byte for
// byte as the run found them, the tree is clean; the clean arm wins.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, report, type Tapes } from '../../src/scripted/tape.js';
import { bonBench, gitBytes, runBon, treeStatus, type BonBench } from '../helpers/bon.js';
import { git } from '../helpers/repo.js';

const GOOD = 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n';
const built = {
  status: 'success',
  summary: 'farewell added',
  artifacts: [],
  notes_for_next_agent: '',
  changed_files: ['src/farewell.js'],
};
const write = { path: 'src/farewell.js', content: GOOD };
const primed = report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] });

// A commit with a file: were the user's branch left on it, their tree would show that file as a staged deletion.
const COMMIT = `echo evil > evil.txt && git add evil.txt && git -c user.name=x -c user.email=x@example.invalid commit -q -m evil`;
// From an arm's own tree, the user's .git is the folder above the object store its alternates file names.
const USER_GIT = `USERGIT="$(dirname "$(cat "$(git rev-parse --git-dir)/objects/info/alternates")")"`;
const AT_USER_GIT = [
  `${USER_GIT}; BRANCH="$(git --git-dir "$USERGIT" symbolic-ref HEAD)"; git --git-dir "$USERGIT" update-ref "$BRANCH" "$(git --git-dir "$USERGIT" rev-parse HEAD)~0^{commit}" -m evil; git --git-dir "$USERGIT" tag evil-user-tag; git --git-dir "$USERGIT" config core.hooksPath /tmp/factory-evil-hooks; printf '#!/bin/sh\ntouch /tmp/factory-evil-ran\n' > "$USERGIT/hooks/post-checkout"; echo tried`,
];
const ACTS = [
  'git remote add evil https://example.invalid/evil.git',
  // The node refuses `git config core.hooksPath` by its intent: a program is what a determined model would use.
  `node -e "require('child_process').execFileSync('git',['config','core.hooks'+'Path','/tmp/factory-evil-hooks'])"`,
  'git tag evil-tag',
];

function hostile(first: string): Tapes {
  return {
    'model:alpha': [
      call('read', { path: 'specs/farewell.md' }),
      primed,
      call('bash', { command: first }),
      ...ACTS.map((command) => call('bash', { command })),
      call('write', write),
      report(built),
    ],
    'model:beta': [call('write', write), report(built)],
  };
}

/** What of the user's .git must end as it began: HEAD, ORIG_HEAD, the index, config, packed-refs, refs, reflogs and hooks. */
const sealedBytes = (dir: string) =>
  gitBytes(dir, ['HEAD', 'ORIG_HEAD', 'index', 'config', 'packed-refs', 'refs', 'logs', 'hooks']);

/** The bench's repo with an index git will not rewrite on the next status (no racily clean entry left). */
async function settled(b: BonBench): Promise<void> {
  await new Promise((r) => setTimeout(r, 1100));
  git(b.dir, 'status', '--porcelain');
}

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

function armOf(events: Awaited<ReturnType<typeof runBon>>['events'], arm: number) {
  const harvest = events.find((e) => e.type === 'harvest');
  if (harvest?.type !== 'harvest') throw new Error('no harvest');
  return { winner: harvest.winner, rank: harvest.ranking.find((r) => r.arm === arm) };
}

describe("factory bon: an arm never moves the user's branch (real pi, scripted model)", () => {
  it("in worktrees, an arm that reaches for the user's .git is refused by the sandbox; its remote and core.hooksPath in its own git make it red, each named; the user's .git ends byte for byte as it began", async () => {
    bench = await bonBench(hostile(`${COMMIT} && ${AT_USER_GIT[0]}`));
    const b = bench;
    await settled(b);
    const before = sealedBytes(b.dir);
    const head = git(b.dir, 'rev-parse', 'HEAD');
    const outcome = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'] });
    // On a failure, what each arm was called (a busy CI once gave exit 1 here: the verdicts say why).
    expect(outcome.exit, JSON.stringify(outcome.events.filter((e) => e.type === 'harvest'))).toBe(0);
    const { winner, rank } = armOf(outcome.events, 1);
    expect(winner).toBe(2);
    expect(rank).toMatchObject({ green: false });
    for (const act of ['it changed its git', 'added remote evil', 'set core.hooksPath'])
      expect({ act, motif: rank?.motif }).toEqual({ act, motif: expect.stringContaining(act) });
    // Its commit and its tag are in its own git: its bookkeeping, not an act.
    expect(rank?.motif).not.toMatch(/refs\/tags|moved/);
    expect(armOf(outcome.events, 2).rank).toMatchObject({ green: true });
    expect(sealedBytes(b.dir)).toEqual(before);
    expect(git(b.dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(treeStatus(b.dir)).toBe('');
    expect(fs.readFileSync(path.join(b.dir, '.git/config'), 'utf8')).not.toMatch(/evil|hooksPath/);
    expect(fs.existsSync(path.join(b.dir, '.git/hooks/post-checkout'))).toBe(false);
    expect(git(b.dir, 'tag', '--list')).toBe('');
  });

  it("in place, an arm's commit on the branch is its work (harvested, then undone byte for byte); its remote, core.hooksPath and tag make it red, each named", async () => {
    bench = await bonBench(hostile(`${COMMIT} && echo committed`));
    const b = bench;
    await settled(b);
    const before = sealedBytes(b.dir);
    const head = git(b.dir, 'rev-parse', 'HEAD');
    const outcome = await runBon(b, { inPlace: true, models: ['scripted/alpha', 'scripted/beta'] });
    expect(outcome.exit).toBe(0);
    const { winner, rank } = armOf(outcome.events, 1);
    expect(winner).toBe(2);
    expect(rank).toMatchObject({ green: false });
    for (const act of ['added remote evil', 'set core.hooksPath', 'added refs/tags/evil-tag'])
      expect({ act, motif: rank?.motif }).toEqual({ act, motif: expect.stringContaining(act) });
    expect(rank?.motif).not.toContain(git(b.dir, 'symbolic-ref', 'HEAD').trim());
    // The commit was its work: harvested into its patch before the tree and the branch were put back.
    expect(
      fs.readFileSync(path.join(b.paths.dataDir, 'bon', outcome.prepared.run.adwId, 'arm-1.patch'), 'utf8'),
    ).toMatch(/\+\+\+ b\/evil\.txt/);
    expect(armOf(outcome.events, 2).rank).toMatchObject({ green: true });
    expect(sealedBytes(b.dir)).toEqual(before);
    expect(git(b.dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(treeStatus(b.dir)).toBe('');
    expect(fs.readFileSync(path.join(b.dir, '.git/config'), 'utf8')).not.toMatch(/evil|hooksPath/);
  });
});
