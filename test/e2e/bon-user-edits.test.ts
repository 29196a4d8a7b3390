// The user's tree is the user's (issue 24, point 4), through the real pi and the scripted model in worktree mode:
// the user edits line 1 of a file every arm changes at line 18 while the arms work, then line 2, and starts a file of
// their own. Each arm is judged on the run's base commit, so every arm is green and the run exits 0; the user's
// edits are still theirs, and `factory apply` lands the winner around them.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/contract/events.js';
import { call, calls, report, type Tapes } from '../../src/scripted/tape.js';
import { bonBench, runBon, type BonBench } from '../helpers/bon.js';
import { runCli } from '../helpers/cli.js';
import { ofType } from '../helpers/factory.js';
import { git, tempDir } from '../helpers/repo.js';

let bench: BonBench | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
  for (const c of cleanups.splice(0).reverse()) c();
});

const LONG = 'src/notes.txt';
const LINES = Array.from({ length: 24 }, (_, i) => `note ${i + 1}`);
const text = (lines: string[]): string => `${lines.join('\n')}\n`;
const withLine = (lines: string[], n: number, value: string): string[] =>
  lines.map((l, i) => (i === n - 1 ? value : l));
const FAREWELL = 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n';

/** An arm that writes the farewell the spec asks for and changes line 18 of the notes, its own way. */
function arm(line18: string) {
  return [
    calls([
      { name: 'write', args: { path: 'src/farewell.js', content: FAREWELL } },
      { name: 'write', args: { path: LONG, content: text(withLine(LINES, 18, line18)) } },
    ]),
    report({
      status: 'success',
      summary: 'farewell added, notes updated',
      artifacts: [],
      notes_for_next_agent: '',
      changed_files: ['src/farewell.js', LONG],
    }),
  ];
}

const TAPES: Tapes = {
  'model:alpha': [
    call('read', { path: 'specs/farewell.md' }),
    report({ status: 'success', summary: 'Plan: add src/farewell.js; update the notes.', changed_files: [] }),
    ...arm('note 18, by alpha'),
  ],
  'model:beta': arm('note 18, by beta'),
  'model:gamma': arm('note 18, by gamma'),
};

describe('factory bon in worktrees while the user edits the file the arms change', () => {
  it('every arm is green on the run base, the user keeps their edit, and factory apply lands the winner around it', async () => {
    // The spec asks for the notes too: a change there is in its scope (src/bon/harvest/scope.ts).
    const spec =
      '# farewell\n\nAdd `src/farewell.js` exporting `farewell(name)` that returns `Goodbye, <name>!`, and note it at line 18 of `src/notes.txt`.\nThe test `test/farewell.test.js` must pass (`node --test`).\n';
    const b = await bonBench(TAPES, { [LONG]: text(LINES), 'specs/farewell.md': spec });
    bench = b;
    b.env = { ...b.env, FACTORY_WORKTREES: tempDir('factory-trees-edits-', cleanups) };
    const first = withLine(LINES, 1, 'note 1, edited by the user while the arms ran');
    const mine = withLine(first, 2, 'note 2, edited again');
    let edited = false;
    let again = false;
    const { exit, events, prepared } = await runBon(b, {
      onEvent: (e: RunEvent) => {
        // The model has served an arm its first answer (a tool call): the arms are at work, none is judged yet.
        if (!edited && e.type === 'activity' && e.phase.startsWith('arm_') && e.activity.kind === 'tool_start') {
          edited = true;
          fs.writeFileSync(path.join(b.dir, LONG), text(first));
        }
        // An arm's work is harvested: the user edits the file again, and starts a file of their own.
        if (edited && !again && e.type === 'arm_patch') {
          again = true;
          fs.writeFileSync(path.join(b.dir, LONG), text(mine));
          fs.writeFileSync(path.join(b.dir, 'src/mine.txt'), "a file of the user's own, untracked\n");
        }
      },
    });
    expect({ edited, again }).toEqual({ edited: true, again: true });
    const failed = ofType(events, 'phase_failed').map((e) => `${e.phase}: ${e.motif}`);
    expect(failed).toEqual([]);
    expect(exit).toBe(0);
    const harvest = ofType(events, 'harvest')[0]!;
    expect(harvest.ranking.map((r) => [r.arm, r.green]).sort()).toEqual([
      [1, true],
      [2, true],
      [3, true],
    ]);
    expect(harvest.winner).toBeDefined();
    // The user's tree: their edits and their new file, and nothing of any arm.
    expect(git(b.dir, 'status', '--porcelain', '--untracked-files=all')).toBe(` M ${LONG}\n?? src/mine.txt\n`);
    expect(fs.readFileSync(path.join(b.dir, LONG), 'utf8')).toBe(text(mine));
    // The proposal applies the winner around the user's edits: into their tree, and staged on HEAD's content in the
    // index (the user's own edits stay unstaged, theirs to stage).
    const applied = await runCli(['apply', prepared.run.adwId], { cwd: b.dir, env: b.env, timeoutMs: 90_000 });
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(applied.stdout).toMatch(new RegExp(`^applied arm ${harvest.winner} `));
    const winner = ['alpha', 'beta', 'gamma'][harvest.winner! - 1]!;
    const by = `note 18, by ${winner}`;
    expect(fs.readFileSync(path.join(b.dir, LONG), 'utf8')).toBe(text(withLine(mine, 18, by)));
    expect(git(b.dir, 'show', `:${LONG}`)).toBe(text(withLine(LINES, 18, by)));
    expect(fs.readFileSync(path.join(b.dir, 'src/mine.txt'), 'utf8')).toContain('untracked');
    expect(fs.readFileSync(path.join(b.dir, 'src/farewell.js'), 'utf8')).toBe(FAREWELL);
  });

  it('in the sandbox the user may stage, make a branch and set their own config while the arms work: all kept, no arm red', async () => {
    const b = await bonBench(TAPES, { [LONG]: text(LINES) });
    bench = b;
    b.env = { ...b.env, FACTORY_WORKTREES: tempDir('factory-trees-stage-', cleanups) };
    const first = withLine(LINES, 1, 'note 1, edited and staged by the user while the arms ran');
    let acted = false;
    const { exit, events } = await runBon(b, {
      onEvent: (e: RunEvent) => {
        if (!acted && e.type === 'activity' && e.phase.startsWith('arm_') && e.activity.kind === 'tool_start') {
          acted = true;
          fs.writeFileSync(path.join(b.dir, LONG), text(first));
          git(b.dir, 'add', LONG);
          git(b.dir, 'config', 'user.signingkey', 'the-users-own');
          git(b.dir, 'branch', 'users-own-branch');
        }
      },
    });
    expect(acted).toBe(true);
    expect(ofType(events, 'phase_failed').map((e) => `${e.phase}: ${e.motif}`)).toEqual([]);
    expect(exit).toBe(0);
    // The user's acts are the user's: the staged edit, the config value and the branch are where the user left them.
    expect(git(b.dir, 'status', '--porcelain', '--untracked-files=all')).toBe(`M  ${LONG}\n`);
    expect(git(b.dir, 'show', `:${LONG}`)).toBe(text(first));
    expect(git(b.dir, 'config', '--get', 'user.signingkey').trim()).toBe('the-users-own');
    expect(git(b.dir, 'branch', '--list', 'users-own-branch').trim()).toBe('users-own-branch');
  });
});
