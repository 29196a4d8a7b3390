// The cockpit home (`factory` alone) in a real terminal (tmux), over runs the built CLI recorded in a temp repo
// through the real pi 0.85.1 and the scripted model: the runs list, moving the selection, a run's phase graph
// replayed from the trace, back to the list, quit; then `r` on a failed run resumes it live, in its session.
import { afterEach, describe, expect, it } from 'vitest';
import { formatCost, formatTokens } from '../../src/contract/format.js';
import { readLedger } from '../../src/trace/ledger.js';
import { report, say } from '../../src/scripted/tape.js';
import type { RunRow } from '../../src/trace/store.js';
import { FACTORY_BIN, runCli, type CliRun } from '../helpers/cli.js';
import { promptBench, type PromptBench } from '../helpers/factory.js';
import { hasTmux, startTmux, type TmuxSession } from '../helpers/tmux.js';

const GOOD = { status: 'success', summary: 'Three files.', artifacts: [], notes_for_next_agent: '' };

let bench: PromptBench | undefined;
let term: TmuxSession | undefined;
afterEach(async () => {
  term?.close();
  term = undefined;
  await bench?.cleanup();
  bench = undefined;
});

function cli(b: PromptBench, args: string[]): Promise<CliRun> {
  return runCli(args, { cwd: b.repo.dir, env: { ...b.rig.env, CI: 'true' } });
}

function adwIdOf(stderr: string): string {
  const match = /^\[([0-9a-f]{8})\]/.exec(stderr);
  if (!match) throw new Error(`no run id in:\n${stderr}`);
  return match[1]!;
}

/**
 * Two runs recorded headless: a green one, then a failed one (no envelope, --retries 0). The failed run's tape
 * holds a good report after the bad answer: that is what its resume gets.
 */
async function twoRecordedRuns(): Promise<{ b: PromptBench; greenId: string; failedId: string }> {
  const b = await promptBench({ green: [report(GOOD)], bad: [say('No JSON from me.'), report(GOOD)] });
  bench = b;
  const green = await cli(b, ['prompt', '[tape:green] Which files make up this repo?', '--model', 'scripted/alpha']);
  expect(green.code).toBe(0);
  const failed = await cli(b, [
    'prompt',
    '[tape:bad] Which files make up this repo?',
    '--retries',
    '0',
    '--model',
    'scripted/alpha',
  ]);
  expect(failed.code).toBe(1);
  return { b, greenId: adwIdOf(green.stderr), failedId: adwIdOf(failed.stderr) };
}

async function runRows(b: PromptBench): Promise<RunRow[]> {
  const r = await cli(b, ['runs', '--json']);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as RunRow[];
}

/** The screen line that carries the selection marker. */
function selectedLine(screen: string): string | undefined {
  return screen.split('\n').find((line) => line.trimStart().startsWith('›'));
}

const onList = (screen: string) => screen.includes('recent runs');

// tmux is part of this project's test machine; without it there is no real terminal to drive.
describe.skipIf(!hasTmux())('factory home in a real terminal', () => {
  it('lists the runs, moves the selection, replays a run, goes back, and quits with 0', async () => {
    const { b, greenId, failedId } = await twoRecordedRuns();
    const rows = await runRows(b);
    const green = rows.find((r) => r.adwId === greenId)!;
    const failed = rows.find((r) => r.adwId === failedId)!;
    term = startTmux([process.execPath, FACTORY_BIN], { cwd: b.repo.dir, env: b.rig.env });

    const list = await term.waitForScreen((s) => onList(s) && s.includes(greenId) && s.includes(failedId));
    expect(list).toMatch(new RegExp(`${failedId}\\s+adw_prompt\\s+✗ failed\\s+0/2`));
    expect(list).toMatch(new RegExp(`${greenId}\\s+adw_prompt\\s+✓ green\\s+2/2`));
    // Newest first, and the selection starts on it.
    expect(list.indexOf(failedId)).toBeLessThan(list.indexOf(greenId));
    expect(selectedLine(list)).toContain(failedId);

    term.sendKeys('Down');
    const moved = await term.waitForScreen((s) => selectedLine(s)?.includes(greenId) === true);
    expect(selectedLine(moved)).not.toContain(failedId);

    term.sendKeys('Enter');
    const replay = await term.waitForScreen((s) => s.includes('replayed from the trace'));
    expect(replay).toContain(greenId);
    expect(replay).toMatch(/✓ agent\s+prompt/);
    expect(replay).toMatch(/✓ code\s+dispose/);
    expect(replay).toContain(`cost ${formatCost(green.cost)} · tokens ${formatTokens(green.tokens)}`);
    expect(replay).toContain('run green (exit 0)');
    expect(onList(replay)).toBe(false);

    term.sendKeys('Escape');
    const back = await term.waitForScreen((s) => onList(s) && !s.includes('replayed from the trace'));
    expect(selectedLine(back)).toContain(greenId);

    // The failed run replays as failed, with its figures.
    term.sendKeys('Up');
    await term.waitForScreen((s) => selectedLine(s)?.includes(failedId) === true);
    term.sendKeys('Enter');
    const failedReplay = await term.waitForScreen((s) => s.includes('replayed from the trace'));
    expect(failedReplay).toMatch(/✗ agent\s+prompt/);
    expect(failedReplay).toContain(`cost ${formatCost(failed.cost)} · tokens ${formatTokens(failed.tokens)}`);
    expect(failedReplay).toContain('FAILED at prompt (exit 1)');
    term.sendKeys('Escape');
    await term.waitForScreen((s) => onList(s) && !s.includes('replayed from the trace'));

    term.sendKeys('q');
    expect(await term.waitForExit()).toBe(0);
    // Looking never starts a model call.
    expect(b.rig.model.requests).toHaveLength(2);
  });

  it('r on the failed run resumes it live in its own session and it ends green', async () => {
    const { b, greenId, failedId } = await twoRecordedRuns();
    const before = readLedger(b.paths.ledgerFile).filter((line) => line.adw_id === failedId);
    expect(before).toHaveLength(1);
    const sessionId = before[0]!.session_id;

    term = startTmux([process.execPath, FACTORY_BIN], { cwd: b.repo.dir, env: b.rig.env });
    await term.waitForScreen((s) => onList(s) && s.includes(greenId) && selectedLine(s)?.includes(failedId) === true);
    // r on a green run is refused with a reason, and nothing starts.
    term.sendKeys('Down');
    await term.waitForScreen((s) => selectedLine(s)?.includes(greenId) === true);
    term.sendKeys('r');
    await term.waitForScreen((s) => s.includes(`${greenId} is green: only a failed or interrupted run can be resumed`));
    term.sendKeys('Up');
    await term.waitForScreen((s) => selectedLine(s)?.includes(failedId) === true);

    term.sendKeys('r');
    const done = await term.waitForScreen((s) => s.includes('run green'));
    // The live run screen of that very run (the home frame above it is Ink's last frame of the list).
    expect(done).toContain(`factory · adw_prompt · ${failedId}`);
    expect(done).toMatch(/✓ agent\s+prompt/);
    expect(done).toMatch(/✓ code\s+dispose/);
    expect(await term.waitForExit()).toBe(0);

    // The same session was continued: a new ledger line, same session id; the model saw that session's history.
    const after = readLedger(b.paths.ledgerFile).filter((line) => line.adw_id === failedId);
    expect(after).toHaveLength(2);
    expect(after.map((line) => line.session_id)).toEqual([sessionId, sessionId]);
    const resumed = b.rig.model.requestsFor('bad');
    expect(resumed).toHaveLength(2);
    expect(JSON.stringify(resumed[1])).toContain('No JSON from me.');

    const rows = await runRows(b);
    const resumedRow = rows.find((r) => r.adwId === failedId)!;
    expect(resumedRow).toMatchObject({ status: 'green', phases: '2/2', exitCode: 0 });
    // What the screen showed live is what the trace kept: both lives of the run on one bill.
    expect(done).toContain(`cost ${formatCost(resumedRow.cost)} · tokens ${formatTokens(resumedRow.tokens)}`);
    expect(rows.find((r) => r.adwId === greenId)).toMatchObject({ status: 'green' });
    expect(rows).toHaveLength(2);
  });
});
