import { describe, expect, it } from 'vitest';
import { HOME_KEYS, helpText, intentFor, keyLabel } from '../../components/keymap.js';
import {
  dispatchHomeIntent,
  homeModeOf,
  type HomeController,
  type HomeMode,
  type RunRow,
} from '../../state/controller.js';
import {
  canResume,
  createHomeStore,
  initialHomeState,
  reduceHome,
  replayRun,
  selectedRow,
  type HomeAction,
  type HomeEffect,
  type HomeState,
} from '../../state/home/store.js';
import type { RunEvent } from '../../src/contract/events.js';
import { foldSteps } from '../../state/step.js';
import { waitFor } from '../helpers/ink.js';

const T0 = 1_700_000_000_000;

function row(adwId: string, status: RunRow['status'], extra: Partial<RunRow> = {}): RunRow {
  return { adwId, adwName: 'adw_prompt', status, phases: '1/2', tokens: 1200, cost: 0.0031, startedAt: T0, ...extra };
}

const ROWS = [
  row('aaaa0001', 'green'),
  row('bbbb0002', 'failed'),
  row('cccc0003', 'interrupted'),
  row('dddd0004', 'running'),
];

function fold(actions: HomeAction[], state: HomeState = initialHomeState()): HomeState {
  return foldSteps(reduceHome, actions, state).state;
}

const loaded = fold([{ type: 'rows_loaded', rows: ROWS }]);

function events(adwId: string): RunEvent[] {
  return [
    {
      type: 'run_started',
      adwId,
      ts: T0,
      adwName: 'adw_prompt',
      cwd: '/w',
      phases: [
        { name: 'prompt', kind: 'agent', attempts: 3 },
        { name: 'dispose', kind: 'code', attempts: 1 },
      ],
    },
    { type: 'phase_started', adwId, ts: T0 + 1, phase: 'prompt', kind: 'agent' },
    { type: 'attempt_started', adwId, ts: T0 + 1, phase: 'prompt', attempt: 1, attempts: 3, sessionId: 's-1' },
    { type: 'usage', adwId, ts: T0 + 500, phase: 'prompt', tokens: 900, cost: 0.002 },
  ];
}

describe('reduceHome: the list', () => {
  it('starts loading with nothing selected; rows arrive with the first one selected', () => {
    expect(homeModeOf(initialHomeState())).toBe('loading');
    expect(loaded).toMatchObject({ loaded: true, selected: 0, screen: 'list' });
    expect(homeModeOf(loaded)).toBe('list');
    expect(homeModeOf(fold([{ type: 'rows_loaded', rows: [] }]))).toBe('empty');
  });

  it('moves the selection within bounds', () => {
    expect(fold([{ type: 'move', by: -1 }], loaded).selected).toBe(0);
    expect(
      fold(
        [
          { type: 'move', by: 1 },
          { type: 'move', by: 1 },
        ],
        loaded,
      ).selected,
    ).toBe(2);
    expect(
      fold(
        Array.from({ length: 9 }, () => ({ type: 'move', by: 1 }) as HomeAction),
        loaded,
      ).selected,
    ).toBe(3);
    // Nothing to move through in an empty list.
    expect(fold([{ type: 'move', by: 1 }], fold([{ type: 'rows_loaded', rows: [] }])).selected).toBe(0);
  });

  it('keeps the selection on the same run when the list is read again', () => {
    const onFailed = fold([{ type: 'move', by: 1 }], loaded);
    expect(selectedRow(onFailed)?.adwId).toBe('bbbb0002');
    const newer = [row('eeee0005', 'running'), ...ROWS];
    expect(selectedRow(fold([{ type: 'rows_loaded', rows: newer }], onFailed))?.adwId).toBe('bbbb0002');
    // The selected run gone: the selection stays in range.
    const last = fold([{ type: 'move', by: 3 }], loaded);
    expect(fold([{ type: 'rows_loaded', rows: ROWS.slice(0, 2) }], last).selected).toBe(1);
  });

  it('a list that can not be read says so, once loaded or on the status line', () => {
    const failed = fold([{ type: 'rows_failed', message: 'database is locked' }]);
    expect(failed).toMatchObject({ loaded: true, loadError: 'database is locked' });
    expect(homeModeOf(failed)).toBe('empty');
    const later = fold([{ type: 'rows_failed', message: 'database is locked' }], loaded);
    expect(later.rows).toHaveLength(4);
    expect(later.statusLine).toBe('could not read the runs: database is locked');
  });
});

describe('reduceHome: open and back', () => {
  it('open shows the selected run, waiting for its events; the events replay it', () => {
    const opened = fold([{ type: 'move', by: 1 }, { type: 'open' }], loaded);
    expect(opened).toMatchObject({ screen: 'run', replay: { adwId: 'bbbb0002' } });
    expect(opened.replay?.run).toBeUndefined();
    expect(homeModeOf(opened)).toBe('replay');
    const replayed = fold([{ type: 'replay_loaded', adwId: 'bbbb0002', events: events('bbbb0002') }], opened);
    expect(replayed.replay?.run?.adwId).toBe('bbbb0002');
    // Moving is for the list only.
    expect(fold([{ type: 'move', by: 1 }], replayed).selected).toBe(1);
  });

  it('back returns to the list with the selection where it was', () => {
    const back = fold([{ type: 'move', by: 2 }, { type: 'open' }, { type: 'back' }], loaded);
    expect(back).toMatchObject({ screen: 'list', selected: 2 });
    expect(back.replay).toBeUndefined();
    expect(homeModeOf(back)).toBe('list');
  });

  it('drops a replay that arrives after the user went back, or for another run', () => {
    const back = fold([{ type: 'open' }, { type: 'back' }], loaded);
    expect(fold([{ type: 'replay_loaded', adwId: 'aaaa0001', events: events('aaaa0001') }], back)).toBe(back);
    const opened = fold([{ type: 'open' }], loaded);
    expect(fold([{ type: 'replay_loaded', adwId: 'bbbb0002', events: events('bbbb0002') }], opened)).toBe(opened);
  });

  it('a run with no events, or whose events can not be read, goes back to the list and says why', () => {
    const opened = fold([{ type: 'open' }], loaded);
    expect(fold([{ type: 'replay_loaded', adwId: 'aaaa0001', events: [] }], opened)).toMatchObject({
      screen: 'list',
      statusLine: 'no events recorded for aaaa0001',
    });
    expect(fold([{ type: 'replay_failed', adwId: 'aaaa0001', message: 'no such run' }], opened)).toMatchObject({
      screen: 'list',
      statusLine: 'could not replay aaaa0001: no such run',
    });
  });
});

describe('reduceHome: resume', () => {
  it('is allowed only for a failed or interrupted run', () => {
    expect(ROWS.map((r) => [r.status, canResume(r)])).toEqual([
      ['green', false],
      ['failed', true],
      ['interrupted', true],
      ['running', false],
    ]);
    expect(canResume(row('x', 'infrastructure'))).toBe(false);
    const green = fold([{ type: 'resume' }], loaded);
    expect(green.resuming).toBeUndefined();
    expect(green.statusLine).toBe('aaaa0001 is green: only a failed or interrupted run can be resumed');
    const failed = fold([{ type: 'move', by: 1 }, { type: 'resume' }], loaded);
    expect(failed).toMatchObject({ resuming: 'bbbb0002', statusLine: 'resuming bbbb0002…' });
    const interrupted = fold([{ type: 'move', by: 2 }, { type: 'open' }, { type: 'resume' }], loaded);
    expect(interrupted.resuming).toBe('cccc0003');
  });

  it('after quit, nothing changes any more', () => {
    const quitting = fold([{ type: 'quit' }], loaded);
    expect(homeModeOf(quitting)).toBe('quitting');
    expect(fold([{ type: 'move', by: 1 }, { type: 'open' }, { type: 'resume' }], quitting)).toBe(quitting);
  });
});

describe('reduceHome effects: what the core is asked for, folded over a list of actions', () => {
  const effects = (actions: HomeAction[], state: HomeState = loaded): HomeEffect[] =>
    foldSteps(reduceHome, actions, state).effects;

  it("open reads the selected run's events; back reads the list again; neither when refused", () => {
    expect(
      effects([{ type: 'move', by: 1 }, { type: 'open' }, { type: 'open' }, { type: 'back' }, { type: 'back' }]),
    ).toEqual([{ type: 'load_replay', adwId: 'bbbb0002' }, { type: 'load_runs' }]);
    expect(effects([{ type: 'open' }], initialHomeState())).toEqual([]);
  });

  it('resume once for a run that stopped short, never for a green or a running one', () => {
    expect(effects([{ type: 'resume' }, { type: 'move', by: 3 }, { type: 'resume' }])).toEqual([]);
    expect(
      effects([
        { type: 'move', by: 2 },
        { type: 'resume' },
        { type: 'resume' },
        { type: 'move', by: -1 },
        { type: 'resume' },
      ]),
    ).toEqual([
      { type: 'resume', adwId: 'cccc0003' },
      { type: 'resume', adwId: 'bbbb0002' },
    ]);
  });

  it('quit once; after it nothing more is asked', () => {
    expect(effects([{ type: 'quit' }, { type: 'quit' }, { type: 'open' }, { type: 'resume' }])).toEqual([
      { type: 'quit' },
    ]);
  });

  it('a store dispatch returns the effect of the action it folded', () => {
    const store = createHomeStore(loaded);
    expect(store.getState().dispatch({ type: 'move', by: 1 })).toBeUndefined();
    expect(store.getState().dispatch({ type: 'resume' })).toEqual({ type: 'resume', adwId: 'bbbb0002' });
    expect(store.getState().resuming).toBe('bbbb0002');
  });
});

describe('replayRun', () => {
  it('folds the events through the run reducer', () => {
    const run = replayRun(events('bbbb0002'));
    expect(run.phases.map((p) => [p.name, p.status, p.attempt, p.tokens])).toEqual([
      ['prompt', 'running', 1, 900],
      ['dispose', 'pending', 0, 0],
    ]);
    expect(run.exit).toBeUndefined();
  });

  it('closes a run the trace store knows is over but whose events stop short (cockpit killed)', () => {
    const run = replayRun(
      events('cccc0003'),
      row('cccc0003', 'interrupted', { finishedAt: T0 + 600, tokens: 900, cost: 0.002 }),
    );
    expect(run).toMatchObject({ exit: 130, interrupted: true, failedPhase: 'prompt' });
    expect(run.phases.map((p) => p.status)).toEqual(['failed', 'skipped']);
    expect(run.totals).toMatchObject({ tokens: 900, cost: 0.002, seconds: 0.6 });
    // A run still going elsewhere is left live.
    expect(replayRun(events('dddd0004'), row('dddd0004', 'running')).exit).toBeUndefined();
  });
});

/** A controller that records the calls and answers from fixed rows and events. */
function recorder(): HomeController & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    listRuns: () => (calls.push('listRuns'), ROWS),
    runEvents: (adwId) => (calls.push(`runEvents ${adwId}`), events(adwId)),
    resume: (adwId) => calls.push(`resume ${adwId}`),
    quit: () => calls.push('quit'),
  };
}

describe('dispatchHomeIntent', () => {
  it('calls resume once for a failed run, never for a green one', () => {
    const store = createHomeStore(loaded);
    const controller = recorder();
    dispatchHomeIntent(store, controller, 'resume');
    expect(controller.calls).toEqual([]);
    dispatchHomeIntent(store, controller, 'down');
    dispatchHomeIntent(store, controller, 'resume');
    dispatchHomeIntent(store, controller, 'resume');
    expect(controller.calls).toEqual(['resume bbbb0002']);
  });

  it('open asks for the selected run events and replays them', async () => {
    const store = createHomeStore(loaded);
    const controller = recorder();
    dispatchHomeIntent(store, controller, 'down');
    dispatchHomeIntent(store, controller, 'open');
    expect(controller.calls).toEqual(['runEvents bbbb0002']);
    await waitFor(() => store.getState().replay?.run !== undefined);
    expect(store.getState().replay?.run?.adwId).toBe('bbbb0002');
  });
});

describe('home key tables', () => {
  const modes = Object.keys(HOME_KEYS) as HomeMode[];

  it('no key means two things in the same mode, and the help names every binding', () => {
    for (const mode of modes) {
      const table = HOME_KEYS[mode];
      const keys = table.flatMap((binding) => binding.keys);
      expect(new Set(keys).size, mode).toBe(keys.length);
      for (const binding of table) for (const name of binding.keys) expect(helpText(table)).toContain(keyLabel(name));
    }
  });

  it('arrows and j/k move, enter opens, r resumes, q quits the list but goes back from a replay', () => {
    expect(['up', 'k', 'down', 'j', 'return', 'r', 'q', 'ctrl+c'].map((k) => intentFor(HOME_KEYS.list, k))).toEqual([
      'up',
      'up',
      'down',
      'down',
      'open',
      'resume',
      'quit',
      'quit',
    ]);
    expect(['escape', 'q', 'r', 'ctrl+c', 'return'].map((k) => intentFor(HOME_KEYS.replay, k))).toEqual([
      'back',
      'back',
      'resume',
      'quit',
      undefined,
    ]);
    expect(helpText(HOME_KEYS.list)).toBe('↑/k up · ↓/j down · enter open · r resume · q/ctrl-c quit · d doctor');
    expect(intentFor(HOME_KEYS.empty, 'return')).toBeUndefined();
    expect(HOME_KEYS.quitting).toEqual([]);
  });
});
