// The factory on a repository the way users have them (test/helpers/userRepo.ts): `npm test` runs the repo's own
// runner, which colours its output whatever NO_COLOR says and caches under node_modules/.cache; installed
// dependencies, a nested package with its own node_modules, an ignored `.env`. The real pi under test, the
// factory's pi node, the scripted model; build and bon prepared by the commands' own code, the verified apply through
// the command's `--apply` follow-up (applyWinner, which the board's `p` calls too).
import { afterEach, describe, expect, it } from 'vitest';
import { prepareBonRun } from '../../src/commands/bon.js';
import { buildArgs, prepareBuildRun } from '../../src/commands/build.js';
import { openWorkspace, type CommandFlags } from '../../src/commands/workspace.js';
import type { RunEvent } from '../../src/contract/events.js';
import { execute } from '../../src/engine/runner.js';
import { call, contentText, report, type Tapes } from '../../src/scripted/tape.js';
import type { BonBench } from '../helpers/bon.js';
import { ofType } from '../helpers/factory.js';
import { git } from '../helpers/repo.js';
import {
  checksumDiff,
  DOTENV_KEY,
  FAREWELL,
  FAREWELL_BUGGY,
  FAREWELL_GOOD,
  treeChecksum,
  userNpmTest,
  userWorld,
  USER_SPEC,
} from '../helpers/userRepo.js';

/** Escape and control bytes a terminal interprets (tab and newline are text). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
const FLAGS: CommandFlags = { retries: 2, ui: false, json: false };

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

const built = (summary: string) => ({
  status: 'success',
  summary,
  artifacts: [],
  notes_for_next_agent: '',
  changed_files: [FAREWELL],
});

function lastUserText(body: { messages?: { role?: string; content?: unknown }[] }): string {
  return contentText((body.messages ?? []).filter((m) => m.role === 'user').at(-1)?.content);
}

describe('the factory on a user-world repo (npm test, its own runner, node_modules caches)', () => {
  it("build: red on the runner's named failing test, corrected in the same session, then green", async () => {
    bench = await userWorld({
      default: [
        call('write', { path: FAREWELL, content: FAREWELL_BUGGY }),
        report(built('farewell written')),
        call('write', { path: FAREWELL, content: FAREWELL_GOOD }),
        report(built('farewell fixed: Goodbye, capitalized')),
      ],
    });
    const ws = await openWorkspace(FLAGS, { env: bench.env, cwd: bench.dir });
    const prepared = await prepareBuildRun(
      ws,
      buildArgs(USER_SPEC, { ...FLAGS, model: bench.rig.agentDir.route }),
      FLAGS,
    );
    const events: RunEvent[] = [];
    prepared.run.subscribe((e) => events.push(e));
    let exit: number;
    try {
      exit = await execute(prepared.run, prepared.phases);
    } finally {
      await prepared.close();
    }
    expect(exit, JSON.stringify(ofType(events, 'phase_failed'))).toBe(0);
    const gates = ofType(events, 'gate_result');
    expect(gates.map((g) => [g.gate, g.ok])).toEqual([
      ['changed_files', true],
      ['npm test', false],
      ['changed_files', true],
      ['npm test', true],
    ]);
    // The runner painted its failure in colour; the motif is plain text and names the failing test.
    const red = gates[1]!.motif!;
    expect(red).toMatch(/^`npm test` exited 1: ✗ farewell > says goodbye \| Expected values to be strictly equal:/);
    expect(red).not.toMatch(CONTROL);
    // One session: the correction carries the motif and the output's end, both without escape bytes.
    const attempts = ofType(events, 'attempt_started').filter((e) => e.phase === 'build');
    expect(attempts.map((a) => a.sessionId)).toEqual([prepared.run.sessions.build, prepared.run.sessions.build]);
    const correction = lastUserText(bench.rig.model.requests[2]!.body);
    expect(correction).toContain(red);
    expect(correction).toMatch(/end of its output:\n[\s\S]*✗ farewell > says goodbye/);
    expect(correction).not.toMatch(CONTROL);
    expect(correction).not.toContain(DOTENV_KEY);
  });

  it("bon: a red arm named by the runner, a green one; --apply verifies in a scratch tree that touches nothing of the user's", async () => {
    const tapes: Tapes = {
      'model:alpha': [
        call('read', { path: USER_SPEC }),
        report({
          status: 'success',
          summary: 'Plan: write src/farewell.js with case-kit; npm test.',
          changed_files: [],
        }),
        call('write', { path: FAREWELL, content: FAREWELL_BUGGY }),
        report(built('farewell added')),
      ],
      'model:beta': [
        call('write', { path: FAREWELL, content: FAREWELL_GOOD }),
        report(built('farewell added, capitalized')),
      ],
    };
    bench = await userWorld(tapes);
    const b = bench;
    // The user ran their tests before (the runner's cache is filled), then starts the run.
    userNpmTest(b.dir);
    const atStart = treeChecksum(b.dir);
    // `factory bon specs/farewell.md --models scripted/alpha,scripted/beta --apply --no-ui`, as the CLI runs it:
    // prepared by the command, executed, then its finish applies the winner.
    const ws = await openWorkspace(FLAGS, { env: b.env, cwd: b.dir });
    const prepared = await prepareBonRun(
      ws,
      { spec: USER_SPEC, arms: 2, models: ['scripted/alpha', 'scripted/beta'], apply: true },
      FLAGS,
    );
    const events: RunEvent[] = [];
    let before: Map<string, string> | undefined;
    let statusBefore: string | undefined;
    prepared.run.subscribe((e) => {
      events.push(e);
      if (e.type !== 'run_finished') return;
      // The user's tree as the run left it, just before the apply (the arms worked in worktrees of their own).
      before = treeChecksum(b.dir);
      statusBefore = git(b.dir, 'status', '--porcelain', '--untracked-files=all');
    });
    const said: string[] = [];
    let exit: number;
    try {
      exit = await execute(prepared.run, prepared.phases);
      expect(exit, JSON.stringify(ofType(events, 'phase_failed'))).toBe(0);
      exit = await prepared.finish!(exit, (line) => said.push(line));
    } finally {
      await prepared.close();
    }
    const armRed = ofType(events, 'phase_failed').find((e) => e.phase === 'arm_1')!.motif;
    expect(armRed).toMatch(/^`npm test` exited 1: ✗ farewell > says goodbye/);
    expect(armRed).not.toMatch(CONTROL);
    // Arms at once: each arm's gates in order, the arms in any order.
    const byPhase = (rows: (string | boolean)[][]) =>
      [...rows].sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    expect(byPhase(ofType(events, 'gate_result').map((g) => [g.phase, g.gate, g.ok]))).toEqual([
      ['arm_1', 'changed_files', true],
      ['arm_1', 'npm test', false],
      ['arm_2', 'changed_files', true],
      ['arm_2', 'npm test', true],
    ]);
    expect(ofType(events, 'harvest')[0]!.winner).toBe(2);
    expect(statusBefore).toBe('');
    // The arms worked in worktrees of their own: not a byte of the user's tree (node_modules and caches included) moved.
    expect(checksumDiff(atStart, before!)).toEqual([]);
    expect([...before!.keys()].filter((p) => p.startsWith('node_modules/.cache/spot/'))).not.toEqual([]);
    expect([...before!.keys()]).toEqual(
      expect.arrayContaining([
        '.env',
        'node_modules/case-kit/index.js',
        'packages/shout/node_modules/.cache/spot/index.json',
      ]),
    );

    // --apply: verified in a scratch tree, applied with --index.
    expect(exit, said.join('\n')).toBe(0);
    // What the follow-up tells a screen: what it is doing, then how it ended.
    expect(said).toEqual([
      expect.stringMatching(/^applying the winner \(--apply\)/),
      expect.stringMatching(/applied arm 2 \(.*arm-2\.patch\) with git apply --index/),
    ]);
    expect(git(b.dir, 'status', '--porcelain')).toBe(`A  ${FAREWELL}\n`);
    // Only the patch's file differs: no cache entry, no link, nothing of the scratch tree in node_modules.
    expect(checksumDiff(before!, treeChecksum(b.dir))).toEqual([FAREWELL]);
    expect(
      git(b.dir, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
    ).toHaveLength(1);

    // The user's own runs after the apply: green, and green again.
    const first = userNpmTest(b.dir);
    expect(first.code, first.output).toBe(0);
    const second = userNpmTest(b.dir);
    expect(second.code, second.output).toBe(0);
    expect(second.output).toContain('farewell > says goodbye');
  });
});
