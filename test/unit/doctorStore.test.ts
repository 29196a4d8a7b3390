// The doctor store: the pure reducer folded by hand, then fed by the real runDoctor (src/doctor/run.ts) on
// fake checks whose promises the test resolves in its own order — no timing involved.
import { describe, expect, it } from 'vitest';
import { DOCTOR_KEYS, helpText, intentFor } from '../../components/keymap.js';
import { runDoctor } from '../../src/doctor/run.js';
import type { CheckResult, DoctorCheck, DoctorContext, DoctorResult } from '../../src/doctor/types.js';
import { emptyDotEnv } from '../../src/config/env.js';
import { workspacePaths } from '../../src/config/paths.js';
import { defaultRoster } from '../../src/config/roster.js';
import { dispatchHomeIntent, type HomeController } from '../../state/controller.js';
import {
  createDoctorStore,
  dispatchDoctorIntent,
  doctorGroups,
  doctorMark,
  doctorModeOf,
  doctorProgressLine,
  doctorSpinning,
  doctorTone,
  initialDoctorState,
  optionalNote,
  PLANNED_MARK,
  reduceDoctor,
  RERUN_REFUSED,
  runDoctorInto,
  type DoctorAction,
  type DoctorCheckInfo,
  type DoctorController,
  type DoctorEffect,
  type DoctorState,
  type DoctorStore,
} from '../../state/doctor/store.js';
import { createHomeStore } from '../../state/home/store.js';
import { foldSteps } from '../../state/step.js';

const GIT: DoctorCheckInfo = { id: 'tools.git', category: 'tools', severity: 'required', title: 'git' };
const CLAUDE: DoctorCheckInfo = { id: 'tools.claude', category: 'tools', severity: 'optional', title: 'claude' };
const PI: DoctorCheckInfo = { id: 'pi.version', category: 'pi', severity: 'required', title: 'pi version' };
const BATTERY: DoctorCheckInfo = { id: 'tests.battery', category: 'tests', severity: 'required', title: 'battery' };

function result(check: DoctorCheckInfo, status: DoctorResult['status'], detail: string, fix?: string): DoctorResult {
  return { ...check, status, detail, ms: 1, ...(fix !== undefined ? { fix } : {}) };
}

function fold(actions: DoctorAction[], state: DoctorState = initialDoctorState()): DoctorState {
  return foldSteps(reduceDoctor, actions, state).state;
}

const statuses = (state: DoctorState) => Object.fromEntries(state.rows.map((row) => [row.id, row.status]));

describe('reduceDoctor', () => {
  it('planned → started → resolved, in any order, keeping the planned order and grouping by category', () => {
    const state = fold([
      { type: 'begin', generation: 1 },
      { type: 'planned', generation: 1, checks: [BATTERY, GIT, PI, CLAUDE] },
    ]);
    expect(statuses(state)).toEqual({
      'tests.battery': 'pending',
      'tools.git': 'pending',
      'pi.version': 'pending',
      'tools.claude': 'pending',
    });
    const live = fold(
      [
        { type: 'started', generation: 1, check: PI },
        { type: 'started', generation: 1, check: GIT },
        { type: 'resolved', generation: 1, result: result(PI, 'fail', 'pi 0.80.0 < 0.85.1', 'npm i -g pi') },
      ],
      state,
    );
    expect(statuses(live)).toEqual({
      'tests.battery': 'pending',
      'tools.git': 'running',
      'pi.version': 'fail',
      'tools.claude': 'pending',
    });
    expect(doctorProgressLine(live)).toBe('0 ok, 0 warnings, 1 failed, 0 skipped · 3 running');
    expect(doctorModeOf(live)).toBe('running');
    // Display groups follow the category order (tools, pi, node, models, tests), rows their planned order.
    expect(doctorGroups(live.rows).map((g) => [g.category, g.rows.map((r) => r.id)])).toEqual([
      ['tools', ['tools.git', 'tools.claude']],
      ['pi', ['pi.version']],
      ['tests', ['tests.battery']],
    ]);
  });

  it('a check resolved before it is reported started keeps its mark; an unplanned check is appended', () => {
    const state = fold([
      { type: 'begin', generation: 1 },
      { type: 'resolved', generation: 1, result: result(BATTERY, 'skipped', 'skipped by --quick') },
      { type: 'started', generation: 1, check: BATTERY },
      { type: 'started', generation: 1, check: GIT },
    ]);
    expect(state.rows.map((r) => [r.id, r.status])).toEqual([
      ['tests.battery', 'skipped'],
      ['tools.git', 'running'],
    ]);
  });

  it('finished fills in what no callback said, drops planned rows not run, and sets the tone', () => {
    const state = fold([
      { type: 'begin', generation: 1 },
      { type: 'planned', generation: 1, checks: [GIT, CLAUDE, PI] },
      {
        type: 'finished',
        generation: 1,
        results: [result(GIT, 'ok', 'git 2.43'), result(CLAUDE, 'warn', 'claude not found', 'npm i -g claude')],
      },
    ]);
    expect(state.finished).toBe(true);
    expect(state.rows.map((r) => r.id)).toEqual(['tools.git', 'tools.claude']);
    expect(doctorProgressLine(state)).toBe('1 ok, 1 warning, 0 failed, 0 skipped');
    expect(doctorTone(state)).toBe('yellow');
    expect(doctorModeOf(state)).toBe('finished');
  });

  it('callbacks of an older pass are dropped; a crash ends the pass with its reason', () => {
    let state = fold([
      { type: 'begin', generation: 1 },
      { type: 'finished', generation: 1, results: [result(GIT, 'fail', 'git missing', 'apt install git')] },
      { type: 'rerun' },
      { type: 'begin', generation: 2 },
    ]);
    expect(statuses(state)).toEqual({ 'tools.git': 'pending' });
    expect(state.rows[0].result).toBeUndefined();
    state = fold(
      [
        { type: 'resolved', generation: 1, result: result(GIT, 'fail', 'stale') },
        { type: 'begin', generation: 1 },
        { type: 'finished', generation: 1, results: [] },
      ],
      state,
    );
    expect(statuses(state)).toEqual({ 'tools.git': 'pending' });
    expect(state.finished).toBe(false);
    state = reduceDoctor(state, { type: 'crashed', generation: 2, message: 'roster unreadable' }).state;
    expect(state).toMatchObject({ finished: true, crash: 'roster unreadable' });
  });

  it('rerun is refused while a pass runs, and nothing moves once closing', () => {
    const running = fold([
      { type: 'begin', generation: 1 },
      { type: 'started', generation: 1, check: GIT },
    ]);
    expect(reduceDoctor(running, { type: 'rerun' })).toEqual({
      state: expect.objectContaining({ statusLine: RERUN_REFUSED, finished: false }),
    });
    const closed = reduceDoctor(running, { type: 'close' }).state;
    expect(doctorModeOf(closed)).toBe('closing');
    expect(reduceDoctor(closed, { type: 'resolved', generation: 1, result: result(GIT, 'ok', 'x') }).state).toBe(
      closed,
    );
  });
});

describe('reduceDoctor effects: what the core is asked for, folded over a list of actions', () => {
  const effects = (actions: DoctorAction[], state: DoctorState = initialDoctorState()): DoctorEffect[] =>
    foldSteps(reduceDoctor, actions, state).effects;
  const done: DoctorAction[] = [
    { type: 'begin', generation: 1 },
    { type: 'finished', generation: 1, results: [result(GIT, 'ok', 'git 2.43')] },
  ];

  it('rerun only once a pass is over, once per pass', () => {
    expect(effects([{ type: 'begin', generation: 1 }, { type: 'rerun' }])).toEqual([]);
    expect(effects([...done, { type: 'rerun' }, { type: 'rerun' }])).toEqual([{ type: 'rerun' }]);
  });

  it('close (or quit, from the home) once; nothing after it', () => {
    expect(effects([{ type: 'close' }, { type: 'close' }, { type: 'rerun' }])).toEqual([{ type: 'close' }]);
    expect(effects([...done, { type: 'close', quit: true }, { type: 'close' }, { type: 'rerun' }])).toEqual([
      { type: 'quit' },
    ]);
  });
});

describe('doctor selectors: what the checklist draws', () => {
  it('the mark of a row: planned ○, none while it runs (a spinner), the headless mark once resolved', () => {
    expect(doctorMark({ status: 'pending' })).toBe(PLANNED_MARK);
    expect(doctorMark({ status: 'running' })).toBeUndefined();
    expect(
      ['ok', 'warn', 'fail', 'skipped'].map((status) => doctorMark({ status: status as DoctorResult['status'] })),
    ).toEqual(['✓', '!', '✗', '–']);
  });

  it('(optional) after an optional check that is not ok, as the headless rows say', () => {
    expect(optionalNote({ severity: 'optional', result: result(CLAUDE, 'warn', 'claude not found') })).toBe(
      ' (optional)',
    );
    expect(optionalNote({ severity: 'optional', result: result(CLAUDE, 'ok', 'claude 1.0') })).toBe('');
    expect(optionalNote({ severity: 'required', result: result(GIT, 'fail', 'git missing') })).toBe('');
    expect(optionalNote({ severity: 'optional' })).toBe('');
  });

  it('the clock spins while a check runs, and stops once closing', () => {
    const running = fold([
      { type: 'begin', generation: 1 },
      { type: 'started', generation: 1, check: GIT },
    ]);
    expect(doctorSpinning(running)).toBe(true);
    expect(doctorSpinning(fold([{ type: 'close' }], running))).toBe(false);
    expect(doctorSpinning(fold([{ type: 'resolved', generation: 1, result: result(GIT, 'ok', 'git') }], running))).toBe(
      false,
    );
  });
});

function recorder(): DoctorController & { calls: string[] } {
  const calls: string[] = [];
  return { calls, rerun: () => calls.push('rerun'), close: () => calls.push('close') };
}

/** Route one key through the mode table and the dispatcher, as useKeymap does. */
function press(store: DoctorStore, controller: DoctorController, name: string): void {
  const state = store.getState();
  const intent = intentFor(DOCTOR_KEYS[state.via][doctorModeOf(state)], name);
  if (intent) dispatchDoctorIntent(store, controller, intent);
}

describe('doctor keys', () => {
  it('r re-runs only a finished pass, once; q closes once', () => {
    const store = createDoctorStore();
    const controller = recorder();
    store.getState().dispatch({ type: 'begin', generation: 1 });
    press(store, controller, 'r');
    expect(controller.calls).toEqual([]);
    store.getState().dispatch({ type: 'finished', generation: 1, results: [result(GIT, 'ok', 'git 2.43')] });
    press(store, controller, 'r');
    press(store, controller, 'r'); // the pass it asked for is now running
    expect(controller.calls).toEqual(['rerun']);
    press(store, controller, 'q');
    press(store, controller, 'escape');
    expect(controller.calls).toEqual(['rerun', 'close']);
  });

  it('from the home screen, esc goes back and Ctrl-C quits (close when no quit is given)', () => {
    const scroll = '↑/k/↓/j scroll · PgUp/PgDn page · g top · G end';
    expect(helpText(DOCTOR_KEYS.home.finished)).toBe(`${scroll} · r re-run · q/esc back to runs · ctrl-c quit`);
    expect(helpText(DOCTOR_KEYS.command.running)).toBe(`${scroll} · q/esc/ctrl-c quit`);
    const quitter = {
      ...recorder(),
      quit() {
        this.calls.push('quit');
      },
    };
    const store = createDoctorStore(initialDoctorState('home'));
    press(store, quitter, 'ctrl+c');
    expect(quitter.calls).toEqual(['quit']);
    const closer = recorder();
    const other = createDoctorStore(initialDoctorState('home'));
    press(other, closer, 'ctrl+c');
    expect(closer.calls).toEqual(['close']);
  });

  it('scroll keys move the window within the checklist, a page keeping one line in view; the end of a pass opens on its first problem', () => {
    const store = createDoctorStore();
    const controller = recorder();
    const checks = Array.from(
      { length: 30 },
      (_, i): DoctorCheckInfo => ({ id: `node.c${i}`, category: 'node', severity: 'required', title: `c${i}` }),
    );
    const { dispatch } = store.getState();
    dispatch({ type: 'begin', generation: 1 });
    dispatch({ type: 'planned', generation: 1, checks });
    const results = checks.map((c, i) => result(c, i === 20 ? 'fail' : 'ok', 'x', i === 20 ? 'do this' : undefined));
    dispatch({ type: 'finished', generation: 1, results });
    // 1 heading, 30 rows, 1 fix: the failing row is line 21.
    expect(store.getState().offset).toBe(21);
    const key = (intent: Parameters<typeof dispatchDoctorIntent>[2]) =>
      dispatchDoctorIntent(store, controller, intent, { page: 10 });
    key('down');
    expect(store.getState().offset).toBe(22); // the last window: 32 lines, 10 shown
    key('down');
    expect(store.getState().offset).toBe(22);
    key('page-up');
    expect(store.getState().offset).toBe(13);
    key('top');
    key('up');
    expect(store.getState().offset).toBe(0);
    key('page-down');
    expect(store.getState().offset).toBe(9);
    key('bottom');
    expect(store.getState().offset).toBe(22);
    expect(controller.calls).toEqual([]);
    // Without a measured window the whole checklist is the page: nothing moves.
    dispatchDoctorIntent(store, controller, 'top');
    expect(store.getState().offset).toBe(0);
  });

  it('d on the home screen opens the doctor through the controller', () => {
    const calls: string[] = [];
    const home: HomeController = {
      listRuns: () => [],
      runEvents: () => [],
      resume: () => {},
      quit: () => {},
      doctor: () => calls.push('doctor'),
    };
    dispatchHomeIntent(createHomeStore(), home, 'doctor');
    expect(calls).toEqual(['doctor']);
    // Without a doctor the key is harmless.
    expect(() => dispatchHomeIntent(createHomeStore(), { ...home, doctor: undefined }, 'doctor')).not.toThrow();
  });
});

const ctx: DoctorContext = {
  root: '/w',
  paths: workspacePaths('/w'),
  factoryRoot: '/f',
  env: {},
  dotenv: emptyDotEnv('/w'),
  roster: defaultRoster(),
  pi: new Error('no pi in a unit test'),
};

function deferred(): { promise: Promise<CheckResult>; resolve(r: CheckResult): void } {
  let resolve!: (r: CheckResult) => void;
  const promise = new Promise<CheckResult>((r) => (resolve = r));
  return { promise, resolve };
}

describe('runDoctorInto with the real runDoctor', () => {
  it('streams starts and results into the store, in the order the checks resolve', async () => {
    const git = deferred();
    const pi = deferred();
    const checks: DoctorCheck[] = [
      { ...GIT, run: () => git.promise },
      { ...PI, run: () => pi.promise },
      { ...BATTERY, slow: true, run: () => Promise.reject(new Error('must not run under --quick')) },
    ];
    const store = createDoctorStore();
    const pass = runDoctorInto(store, (hooks) => runDoctor(ctx, { quick: true, checks, ...hooks }), checks);
    await Promise.resolve();
    expect(statuses(store.getState())).toEqual({
      'tools.git': 'running',
      'pi.version': 'running',
      'tests.battery': 'skipped',
    });
    pi.resolve({ status: 'fail', detail: 'pi not found', fix: 'npm i -g @earendil-works/pi-coding-agent' });
    await new Promise((r) => setImmediate(r));
    expect(statuses(store.getState())).toEqual({
      'tools.git': 'running',
      'pi.version': 'fail',
      'tests.battery': 'skipped',
    });
    git.resolve({ status: 'ok', detail: 'git 2.43.0' });
    const results = await pass;
    expect(results?.map((r) => r.status)).toEqual(['ok', 'fail', 'skipped']);
    expect(store.getState().finished).toBe(true);
    expect(doctorProgressLine(store.getState())).toBe('1 ok, 0 warnings, 1 failed, 1 skipped');
    expect(doctorTone(store.getState())).toBe('red');
  });

  it('a pass that can not run at all says why', async () => {
    const store = createDoctorStore();
    const outcome = await runDoctorInto(store, () => Promise.reject(new Error('invalid roster:\n  line 3')));
    expect(outcome).toBeUndefined();
    expect(store.getState()).toMatchObject({ finished: true, crash: 'invalid roster: line 3' });
  });
});
