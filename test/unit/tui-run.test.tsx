import React from 'react';
import stringWidth from 'string-width';
import { afterEach, describe, expect, it } from 'vitest';
import { RunScreen } from '../../components/RunScreen.js';
import { phaseSeconds } from '../../state/run/store.js';
import { spinnerFrame } from '../../components/Spinner.js';
import { SPINNER_INTERVAL_MS } from '../../components/theme.js';
import { formatCost, formatSeconds, formatTokens } from '../../src/contract/format.js';
import { tailHeight } from '../../components/layout.js';
import { STATUS_ABORTING, STATUS_CONFIRM_QUIT, type RunController } from '../../state/controller.js';
import { createRunStore, type RunStore } from '../../state/run/store.js';
import type { RunEvent } from '../../src/contract/events.js';
import { KEYS, renderInk, waitFor, type InkHarness } from '../helpers/ink.js';

const ADW = 'a1b2c3d4';
const SPIN = '[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]';

type Payload<T extends RunEvent['type']> = Omit<Extract<RunEvent, { type: T }>, 'type' | 'adwId' | 'ts'>;

/** Feeds events into the store the way the core's listener does, with wall-clock timestamps. */
function feeder(store: RunStore, clockStart = Date.now()) {
  return <T extends RunEvent['type']>(type: T, payload: Payload<T>, at = Date.now() - clockStart): void => {
    store.getState().apply({ type, adwId: ADW, ts: clockStart + at, ...payload } as unknown as RunEvent);
  };
}

function recorder(): RunController & { calls: string[] } {
  const calls: string[] = [];
  return { calls, abort: () => calls.push('abort'), quit: () => calls.push('quit') };
}

function lineOf(ui: InkHarness, pattern: RegExp): string {
  const line = ui.lines().find((l) => pattern.test(l));
  if (line === undefined) throw new Error(`no line matches ${pattern} in:\n${ui.lastFrame()}`);
  return line;
}

const PLAN = [
  { name: 'prompt', kind: 'agent' as const, attempts: 3 },
  { name: 'dispose', kind: 'code' as const, attempts: 1 },
];

let mounted: InkHarness | undefined;
afterEach(() => {
  mounted?.unmount();
  mounted = undefined;
});

async function mount(
  store: RunStore,
  controller: RunController = recorder(),
  size?: { columns?: number; rows?: number },
) {
  mounted = await renderInk(<RunScreen store={store} controller={controller} />, size);
  return mounted;
}

describe('RunScreen on an adw_prompt run', () => {
  it('draws the phase graph live: badges, states, retry with attempt 2/3, motif, totals, key help', async () => {
    const store = createRunStore();
    const send = feeder(store);
    const ui = await mount(store);
    await ui.waitForFrame('waiting for the run');

    send('run_started', { adwName: 'adw_prompt', cwd: '/home/dev/payload', phases: PLAN });
    await ui.waitForFrame('factory · adw_prompt · a1b2c3d4 · /home/dev/payload');
    expect(lineOf(ui, /agent prompt/)).toMatch(/^○ agent prompt\s*$/);
    expect(lineOf(ui, /dispose/)).toMatch(/^○ code  dispose\s*$/);
    // The two nodes are joined by the connector.
    expect(ui.lines().slice(2, 5)).toEqual(['○ agent prompt', '│', '○ code  dispose']);

    send('phase_started', { phase: 'prompt', kind: 'agent' });
    send('attempt_started', { phase: 'prompt', attempt: 1, attempts: 3, sessionId: 's-1', model: 'scripted/fast' });
    send('activity', { phase: 'prompt', activity: { kind: 'tool_start', tool: 'read', detail: 'specs/prompt.md' } });
    send('activity', { phase: 'prompt', activity: { kind: 'text', text: 'Here is\nthe answer' } });
    send('usage', { phase: 'prompt', tokens: 1234, cost: 0.003078 });
    await ui.waitForFrame('1.2k tok');
    expect(lineOf(ui, /agent prompt/)).toMatch(
      new RegExp(`^${SPIN} agent prompt   attempt 1/3  \\d+\\.\\ds  1\\.2k tok  \\$0\\.0031$`),
    );
    expect(ui.lastFrame()).toContain('── prompt activity');
    expect(ui.lastFrame()).toContain('  ⚙ read specs/prompt.md');
    expect(ui.lastFrame()).toContain('  Here is the answer');
    expect(lineOf(ui, /^cost/)).toMatch(/^cost \$0\.0031 · tokens 1\.2k · elapsed \d+\.\ds$/);
    expect(ui.lastFrame()).toContain('ctrl-c abort turn (twice: quit) · q quit (asks first)');

    send('attempt_failed', {
      phase: 'prompt',
      attempt: 1,
      attempts: 3,
      motif: 'no JSON object in the answer',
      willRetry: true,
    });
    await ui.waitForFrame('↻ agent prompt');
    expect(lineOf(ui, /agent prompt/)).toMatch(/^↻ agent prompt   attempt 2\/3 /);
    expect(ui.lastFrame()).toContain('│   ↳ attempt 1/3 failed: no JSON object in the answer');
    expect(ui.lastFrame()).toContain(
      '↻ attempt 1/3 failed: no JSON object in the answer — retrying in the same session',
    );

    send('attempt_started', { phase: 'prompt', attempt: 2, attempts: 3, sessionId: 's-1' });
    send('usage', { phase: 'prompt', tokens: 400, cost: 0.0012 });
    await ui.waitForFrame('tokens 1.6k');
    expect(lineOf(ui, /agent prompt/)).toMatch(
      new RegExp(`^${SPIN} agent prompt   attempt 2/3 .* 1\\.6k tok  \\$0\\.0043$`),
    );

    send('phase_ok', {
      phase: 'prompt',
      kind: 'agent',
      attempt: 2,
      attempts: 3,
      seconds: 4.2,
      tokens: 1634,
      cost: 0.004278,
      sessionId: 's-1',
    });
    send('phase_started', { phase: 'dispose', kind: 'code' });
    await ui.waitForFrame(new RegExp(`${SPIN} code  dispose`));
    expect(lineOf(ui, /agent prompt/)).toBe('✓ agent prompt   attempt 2/3  4.2s  1.6k tok  $0.0043');
    // The failed attempt's motif stays under the node, dimmed, once the retry succeeded.
    expect(ui.lastFrame()).toContain('↳ attempt 1/3 failed: no JSON object in the answer');
    // The tail follows the phase that started last.
    expect(ui.lastFrame()).toContain('── dispose activity');

    send('phase_ok', { phase: 'dispose', kind: 'code', attempt: 1, attempts: 1, seconds: 0.3, tokens: 0, cost: 0 });
    send('run_finished', { exit: 0, seconds: 4.6, tokens: 1634, cost: 0.004278 });
    await ui.waitForFrame('run green (exit 0)');
    expect(lineOf(ui, /code {2}dispose/)).toBe('✓ code  dispose  0.3s');
    expect(lineOf(ui, /^cost/)).toBe('cost $0.0043 · tokens 1.6k · elapsed 4.6s  run green (exit 0)');
    expect(ui.lastFrame()).toContain('q/ctrl-c quit');
    expect(ui.lastFrame()).not.toContain('abort turn');
  });

  it('a failed run: ✗ with its motif beneath, the rest skipped, the outcome in the totals', async () => {
    const store = createRunStore();
    const send = feeder(store);
    const ui = await mount(store);
    send('run_started', { adwName: 'adw_prompt', cwd: '/w', phases: PLAN });
    send('phase_started', { phase: 'prompt', kind: 'agent' });
    send('phase_failed', {
      phase: 'prompt',
      kind: 'agent',
      attempts: 3,
      motif: 'status: "success" | "fail" expected',
      seconds: 12.3,
      tokens: 5100,
      cost: 0.0153,
    });
    send('run_finished', { exit: 1, seconds: 12.5, tokens: 5100, cost: 0.0153, failedPhase: 'prompt' });
    await ui.waitForFrame('FAILED at prompt (exit 1)');
    expect(lineOf(ui, /agent prompt/)).toBe('✗ agent prompt   12.3s  5.1k tok  $0.0153');
    expect(ui.lastFrame()).toContain('│   ↳ status: "success" | "fail" expected');
    expect(lineOf(ui, /dispose/)).toBe('– code  dispose');
  });

  it('a running phase shows a live clock from its start', async () => {
    const store = createRunStore();
    const send = feeder(store, Date.now() - 65_000);
    const ui = await mount(store);
    send('run_started', { adwName: 'adw_prompt', cwd: '/w', phases: PLAN }, 0);
    send('phase_started', { phase: 'prompt', kind: 'agent' }, 0);
    // Started 65 s ago: the clock reads over a minute, whatever instant the frame is drawn.
    await ui.waitForFrame(/agent prompt .*1m0\ds/);
    expect(lineOf(ui, /^cost/)).toMatch(/elapsed 1m0\ds/);
  });
});

describe('RunScreen keys', () => {
  it('Ctrl-C once aborts the running turn and says so; a second Ctrl-C quits', async () => {
    const store = createRunStore();
    feeder(store)('run_started', { adwName: 'adw_prompt', cwd: '/w', phases: PLAN });
    feeder(store)('phase_started', { phase: 'prompt', kind: 'agent' });
    const controller = recorder();
    const ui = await mount(store, controller);
    await ui.press(KEYS.ctrlC);
    await waitFor(() => controller.calls.length === 1);
    expect(controller.calls).toEqual(['abort']);
    await ui.waitForFrame(STATUS_ABORTING);
    expect(ui.lastFrame()).toContain('ctrl-c/q quit now');
    await ui.press(KEYS.ctrlC);
    await waitFor(() => controller.calls.length === 2);
    expect(controller.calls).toEqual(['abort', 'quit']);
    await ui.waitForFrame('quitting…');
  });

  it('q while running asks first, esc keeps the run, and nothing reaches the core', async () => {
    const store = createRunStore();
    feeder(store)('run_started', { adwName: 'adw_prompt', cwd: '/w', phases: PLAN });
    const controller = recorder();
    const ui = await mount(store, controller);
    await ui.press('q');
    await ui.waitForFrame(STATUS_CONFIRM_QUIT);
    expect(ui.lastFrame()).toContain('q/ctrl-c abort run and quit · esc keep running');
    await ui.press(KEYS.escape);
    await waitFor(() => !ui.lastFrame().includes(STATUS_CONFIRM_QUIT), { describe: () => ui.lastFrame() });
    expect(controller.calls).toEqual([]);
    await ui.press('x');
    await ui.press('q');
    await ui.press('q');
    await waitFor(() => controller.calls.length === 1);
    expect(controller.calls).toEqual(['quit']);
  });
});

describe('RunScreen layout', () => {
  it('truncates every line on a narrow terminal instead of wrapping, and re-lays out on resize', async () => {
    const store = createRunStore();
    const send = feeder(store);
    send('run_started', {
      adwName: 'adw_prompt',
      cwd: '/home/someone/projects/a-rather-long/payload-repo',
      phases: PLAN,
    });
    send('phase_started', { phase: 'prompt', kind: 'agent' });
    send('activity', {
      phase: 'prompt',
      activity: { kind: 'tool_start', tool: 'bash', detail: 'npm test -- --reporter verbose '.repeat(5) },
    });
    send('attempt_failed', {
      phase: 'prompt',
      attempt: 1,
      attempts: 3,
      motif: 'changed_files: array expected, string received',
      willRetry: true,
    });
    const ui = await mount(store);
    await ui.waitForFrame('/home/someone/projects/a-rather-long/payload-repo');
    const wideRows = ui.lines().length;

    ui.resize(40);
    await waitFor(() => ui.lines().every((line) => [...line].length <= 40), { describe: () => ui.lastFrame() });
    // Same number of rows: nothing wrapped onto a second line.
    expect(ui.lines().length).toBe(wideRows);
    expect(lineOf(ui, /agent prompt/)).toMatch(/^↻ agent prompt   attempt 2\/3/);
    expect(ui.lastFrame()).toContain('…');

    ui.resize(120);
    await ui.waitForFrame('factory · adw_prompt · a1b2c3d4 · /home/someone/projects/a-rather-long/payload-repo');
    expect(ui.lines().length).toBe(wideRows);
  });

  it('lines phase details up by display width when phase names have CJK characters or emoji', async () => {
    const store = createRunStore();
    const send = feeder(store);
    const phases = [
      { name: '構築', kind: 'agent' as const, attempts: 1 },
      { name: 'ワークフローの長い名前フェーズ', kind: 'agent' as const, attempts: 1 },
      { name: '🚀 ship', kind: 'code' as const, attempts: 1 },
      { name: 'check', kind: 'code' as const, attempts: 1 },
    ];
    send('run_started', { adwName: 'adw_構築', cwd: '/home/開発/プロジェクト🚀', phases });
    phases.forEach(({ name, kind }, i) => {
      send('phase_started', { phase: name, kind });
      send('phase_ok', { phase: name, kind, attempt: 1, attempts: 1, seconds: i + 1, tokens: 0, cost: 0 });
    });
    const ui = await mount(store, recorder(), { columns: 60 });
    await ui.waitForFrame('4.0s');
    expect(
      ui.lines().every((line) => stringWidth(line) <= 60),
      ui.lastFrame(),
    ).toBe(true);
    const nodes = ui.lines().filter((l) => /^✓ (agent|code) /.test(l));
    expect(nodes).toHaveLength(4);
    // The longest name is cut at 24 columns; every detail starts after the same 24-column name cell.
    expect(nodes[1]).toContain('ワークフローの長い名前…');
    expect(new Set(nodes.map((l) => stringWidth(l.slice(0, l.search(/\d\.\ds/)))))).toEqual(new Set([2 + 6 + 24 + 2]));
  });

  it('bounds the activity tail to the terminal height, newest lines kept', async () => {
    const store = createRunStore();
    const send = feeder(store);
    send('run_started', { adwName: 'adw_prompt', cwd: '/w', phases: PLAN });
    send('phase_started', { phase: 'prompt', kind: 'agent' });
    for (let i = 1; i <= 30; i++) {
      send('activity', { phase: 'prompt', activity: { kind: 'tool_start', tool: 'read', detail: `file-${i}.ts` } });
    }
    const ui = await mount(store, recorder(), { rows: 16 });
    const height = tailHeight(16, 3);
    await ui.waitForFrame('file-30.ts');
    const shown = ui.lines().filter((line) => line.includes('⚙ read'));
    expect(shown).toHaveLength(height);
    expect(shown.at(-1)).toContain('file-30.ts');
    expect(ui.lastFrame()).not.toContain(`file-${30 - height}.ts`);
  });
});

describe('formats and pure view helpers', () => {
  it('compacts tokens, cost and durations', () => {
    expect([0, 850, 1234, 9999, 45_600, 999_999, 1_234_567, 42_000_000].map(formatTokens)).toEqual([
      '0',
      '850',
      '1.2k',
      '10k',
      '46k',
      '1M',
      '1.2M',
      '42M',
    ]);
    expect([0, 0.003078, 0.00004, 0.0153, 1.5].map(formatCost)).toEqual([
      '$0.0000',
      '$0.0031',
      '<$0.0001',
      '$0.0153',
      '$1.50',
    ]);
    expect([0, 4.25, 65, 3725].map(formatSeconds)).toEqual(['0.0s', '4.3s', '1m05s', '1h02m']);
  });

  it('phase duration: measured once finished, from startedAt while live', () => {
    const base = {
      name: 'p',
      kind: 'agent' as const,
      attempt: 1,
      attempts: 1,
      tokens: 0,
      cost: 0,
      settledTokens: 0,
      settledCost: 0,
      activity: [],
    };
    expect(phaseSeconds({ ...base, status: 'pending' }, 5000)).toBeUndefined();
    expect(phaseSeconds({ ...base, status: 'running', startedAt: 1000 }, 3500)).toBe(2.5);
    expect(phaseSeconds({ ...base, status: 'ok', startedAt: 1000, seconds: 9 }, 3500)).toBe(9);
  });

  it('one spinner frame per interval, cycling', () => {
    expect(spinnerFrame(0)).toBe('⠋');
    expect(spinnerFrame(SPINNER_INTERVAL_MS)).toBe('⠙');
    expect(spinnerFrame(SPINNER_INTERVAL_MS - 1)).toBe('⠋');
    expect(spinnerFrame(10 * SPINNER_INTERVAL_MS)).toBe('⠋');
  });

  it('tail height follows the terminal rows within bounds', () => {
    expect(tailHeight(undefined, 3)).toBe(8);
    expect(tailHeight(16, 3)).toBe(5);
    expect(tailHeight(10, 20)).toBe(1);
    expect(tailHeight(200, 3)).toBe(15);
  });
});
