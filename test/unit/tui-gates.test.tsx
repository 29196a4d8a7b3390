import React from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { gateChipsHeight, gateMotifLines } from '../../components/GateChips.js';
import { phaseGraphHeight } from '../../components/PhaseGraph.js';
import { RunScreen } from '../../components/RunScreen.js';
import type { RunController } from '../../state/controller.js';
import { createRunStore, initialRunState, reduceRun, type RunState, type RunStore } from '../../state/run/store.js';
import { execute, Run, type Phase } from '../../src/engine/runner.js';
import type { RunEvent } from '../../src/contract/events.js';
import { renderInk, waitFor, type InkHarness } from '../helpers/ink.js';
import { PhaseFailure } from '../../src/contract/errors.js';

const ADW = 'b0b0b0b0';
const SPIN = '[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]';
const MOTIF = '`npm test` exited 1: FAIL test/sum.test.js › sum adds two numbers | expected 3, received 4';

type Payload<T extends RunEvent['type']> = Omit<Extract<RunEvent, { type: T }>, 'type' | 'adwId' | 'ts'>;

function feeder(store: RunStore) {
  return <T extends RunEvent['type']>(type: T, payload: Payload<T>): void => {
    store.getState().apply({ type, adwId: ADW, ts: Date.now(), ...payload } as unknown as RunEvent);
  };
}

const controller: RunController = { abort: () => undefined, quit: () => undefined };

let mounted: InkHarness | undefined;
afterEach(() => {
  mounted?.unmount();
  mounted = undefined;
});

function lineOf(ui: InkHarness, pattern: RegExp): string {
  const line = ui.lines().find((l) => pattern.test(l));
  if (line === undefined) throw new Error(`no line matches ${pattern} in:\n${ui.lastFrame()}`);
  return line;
}

/** An adw_build run up to its first gates verdict: check ok, build ok on attempt 1, gates red. */
function untilRedGates(send: ReturnType<typeof feeder>): void {
  send('run_started', {
    adwName: 'adw_build',
    cwd: '/w',
    phases: [
      { name: 'check', kind: 'code', attempts: 1 },
      { name: 'build', kind: 'agent', attempts: 3 },
      { name: 'gates', kind: 'code', attempts: 1 },
    ],
  });
  send('phase_started', { phase: 'check', kind: 'code' });
  send('phase_ok', { phase: 'check', kind: 'code', attempt: 1, attempts: 1, seconds: 0.01, tokens: 0, cost: 0 });
  send('phase_started', { phase: 'build', kind: 'agent' });
  send('attempt_started', { phase: 'build', attempt: 1, attempts: 3, sessionId: 's-b' });
  send('phase_ok', {
    phase: 'build',
    kind: 'agent',
    attempt: 1,
    attempts: 3,
    seconds: 6,
    tokens: 2100,
    cost: 0.0063,
    sessionId: 's-b',
  });
  send('phase_started', { phase: 'gates', kind: 'code' });
  send('attempt_started', { phase: 'gates', attempt: 1, attempts: 1 });
  send('gate_result', { phase: 'gates', gate: 'changed_files', ok: true, seconds: 0.004 });
}

describe('gate chips under the gates phase', () => {
  it('shows ✓ and ✗ chips as they come, and the red gate motif dimmed beneath', async () => {
    const store = createRunStore();
    const send = feeder(store);
    untilRedGates(send);
    const ui = await renderInk(<RunScreen store={store} controller={controller} />, { columns: 120 });
    mounted = ui;
    await ui.waitForFrame('✓ changed_files');
    expect(lineOf(ui, /gates/)).toMatch(new RegExp(`^${SPIN} code  gates`));
    expect(lineOf(ui, /changed_files/)).toBe('    ✓ changed_files');

    send('gate_result', { phase: 'gates', gate: 'npm test', ok: false, motif: MOTIF, seconds: 3.2 });
    await ui.waitForFrame('✗ npm test');
    expect(lineOf(ui, /changed_files/)).toBe('    ✓ changed_files  ✗ npm test 3.2s');
    expect(lineOf(ui, /↳ `npm test`/)).toBe(`    ↳ ${MOTIF}`);
  });

  it('truncates a long motif to the terminal width instead of wrapping', async () => {
    const store = createRunStore();
    const send = feeder(store);
    untilRedGates(send);
    send('gate_result', { phase: 'gates', gate: 'npm test', ok: false, motif: MOTIF.repeat(3), seconds: 3.2 });
    const ui = await renderInk(<RunScreen store={store} controller={controller} />, { columns: 50 });
    mounted = ui;
    await ui.waitForFrame('↳ `npm test` exited 1');
    expect(ui.lines().every((line) => [...line].length <= 50)).toBe(true);
    expect(lineOf(ui, /↳ `npm test`/)).toMatch(/…$/);
  });

  it('a build sent back by the gates shows running on attempt 2/3, the gates ↻ with their motif until they run again', async () => {
    const store = createRunStore();
    const send = feeder(store);
    untilRedGates(send);
    const ui = await renderInk(<RunScreen store={store} controller={controller} />, { columns: 120 });
    mounted = ui;
    send('gate_result', { phase: 'gates', gate: 'npm test', ok: false, motif: MOTIF, seconds: 3.2 });
    send('attempt_failed', { phase: 'gates', attempt: 1, attempts: 1, motif: MOTIF, willRetry: true });
    send('phase_started', { phase: 'build', kind: 'agent' });
    send('attempt_started', { phase: 'build', attempt: 2, attempts: 3, sessionId: 's-b' });
    send('usage', { phase: 'build', tokens: 500, cost: 0.0015 });

    await ui.waitForFrame('↻ code  gates');
    expect(lineOf(ui, /agent build/)).toMatch(
      new RegExp(`^${SPIN} agent build  attempt 2/3  \\d+\\.\\ds  2\\.6k tok  \\$0\\.0078$`),
    );
    expect(lineOf(ui, /code {2}gates/)).toMatch(/^↻ code {2}gates {2}\d+\.\ds {2}sent back$/);
    expect(lineOf(ui, /↳ `npm test`/)).toBe(`    ↳ ${MOTIF}`);
    // The motif is said once: under its red chip, not again as the phase motif.
    expect(ui.lastFrame().split(MOTIF)).toHaveLength(2);
    // The tail follows the build, which runs again.
    expect(ui.lastFrame()).toContain('── build activity');

    send('phase_ok', {
      phase: 'build',
      kind: 'agent',
      attempt: 2,
      attempts: 3,
      seconds: 4,
      tokens: 2600,
      cost: 0.0078,
      sessionId: 's-b',
    });
    send('phase_started', { phase: 'gates', kind: 'code' });
    send('attempt_started', { phase: 'gates', attempt: 1, attempts: 1 });
    await ui.waitForFrame(new RegExp(`${SPIN} code  gates`));
    expect(lineOf(ui, /agent build/)).toMatch(/^✓ agent build {2}attempt 2\/3 {2}10\.0s {2}2\.6k tok {2}\$0\.0078$/);
    // The graph drops the old verdict (the tail keeps it as history).
    const graph = ui.lastFrame().split('── gates activity')[0];
    expect(graph).not.toContain('✗ npm test');
    expect(graph).not.toContain(MOTIF);
    expect(ui.lastFrame()).toContain(`  · sent back: ${MOTIF}`);

    send('gate_result', { phase: 'gates', gate: 'changed_files', ok: true, seconds: 0.004 });
    send('gate_result', { phase: 'gates', gate: 'npm test', ok: true, seconds: 2.9 });
    send('phase_ok', { phase: 'gates', kind: 'code', attempt: 1, attempts: 1, seconds: 2.9, tokens: 0, cost: 0 });
    send('run_finished', { exit: 0, seconds: 20, tokens: 2600, cost: 0.0078 });
    await ui.waitForFrame('run green (exit 0)');
    expect(lineOf(ui, /code {2}gates/)).toMatch(/^✓ code {2}gates {2}\d+\.\ds$/);
    expect(lineOf(ui, /changed_files/)).toBe('    ✓ changed_files  ✓ npm test 2.9s');
  });

  it('gates sent back with no red gate report (only green chips so far) say "sent back" with the phase motif', async () => {
    const store = createRunStore();
    const send = feeder(store);
    untilRedGates(send);
    send('attempt_failed', { phase: 'gates', attempt: 1, attempts: 1, motif: 'npm test exited 1', willRetry: true });
    const ui = await renderInk(<RunScreen store={store} controller={controller} />);
    mounted = ui;
    await ui.waitForFrame('↳ sent back: npm test exited 1');
    await waitFor(() => /^↻ code {2}gates/.test(lineOf(ui, /code {2}gates/)));
  });

  it('the graph height counts the chip line and one line per red motif', () => {
    const gates = [
      { gate: 'changed_files', ok: true, seconds: 0 },
      { gate: 'npm test', ok: false, motif: 'exited 1', seconds: 1 },
      { gate: 'npm run lint', ok: false, seconds: 1 },
    ];
    // A motif that names its gate is shown as is; one that does not is prefixed with the gate's name.
    expect(gateMotifLines(gates)).toEqual(['npm test: exited 1']);
    expect(
      gateMotifLines([
        { gate: 'changed_files', ok: false, motif: 'changed_files: src/x.ts does not exist', seconds: 0 },
      ]),
    ).toEqual(['changed_files: src/x.ts does not exist']);
    expect(gateChipsHeight(gates)).toBe(2);
    expect(gateChipsHeight([])).toBe(0);
    const store = createRunStore();
    const send = feeder(store);
    untilRedGates(send);
    send('gate_result', { phase: 'gates', gate: 'npm test', ok: false, motif: 'exited 1', seconds: 1 });
    // 3 nodes + 2 connectors + chip line + 1 red motif.
    expect(phaseGraphHeight(store.getState().phases)).toBe(7);
  });
});

describe('the real runner sending a build back', () => {
  it('its event sequence folds to build ok on attempt 2/3 and gates green with a fresh chip list', async () => {
    // Real runner (execute), with in-test phases: the build phase stands for an agent (it announces its
    // attempts like agentPhase does, no pi here); the gates judge it, red once then green.
    const run = new Run('adw_build', '/w');
    const events: RunEvent[] = [];
    run.subscribe((event) => events.push(event));
    const snapshots: RunState[] = [];
    let state = initialRunState();
    run.subscribe((event) => {
      state = reduceRun(state, event);
      if (event.type === 'attempt_started' && event.phase === 'build' && event.attempt === 2) snapshots.push(state);
    });
    let gatesRuns = 0;
    const phases: Phase[] = [
      {
        name: 'build',
        kind: 'agent',
        retries: 2,
        action: (r, ctx) => {
          r.attemptStarted('build', ctx.attempt + 1, ctx.attempts, { sessionId: 's-b' });
          r.charge('build', 100, 0.001);
          return { status: 'success' };
        },
      },
      {
        name: 'gates',
        kind: 'code',
        judges: 'build',
        action: (r) => {
          gatesRuns += 1;
          const ok = gatesRuns > 1;
          r.emit({
            type: 'gate_result',
            adwId: r.adwId,
            ts: Date.now(),
            phase: 'gates',
            gate: 'npm test',
            ok,
            ...(ok ? {} : { motif: MOTIF }),
            seconds: 0.01,
          });
          if (!ok) throw new PhaseFailure(MOTIF);
          return [];
        },
      },
    ];
    expect(await execute(run, phases)).toBe(0);

    // While the build ran again: attempt 2/3, gates waiting ↻ with their red chip.
    const during = snapshots[0];
    expect(during.phases.find((p) => p.name === 'build')).toMatchObject({ status: 'running', attempt: 2, attempts: 3 });
    expect(during.phases.find((p) => p.name === 'gates')).toMatchObject({
      status: 'retrying',
      sentBack: true,
      motif: MOTIF,
      gates: [{ gate: 'npm test', ok: false }],
    });

    const final = events.reduce(reduceRun, initialRunState());
    expect(final.phases.map((p) => [p.name, p.status, p.attempt])).toEqual([
      ['build', 'ok', 2],
      ['gates', 'ok', 1],
    ]);
    expect(final.phases.find((p) => p.name === 'gates')?.gates).toEqual([
      { gate: 'npm test', ok: true, seconds: 0.01 },
    ]);
    expect(final.totals.tokens).toBe(200);
  });
});
