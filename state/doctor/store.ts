// The doctor store: the checklist the cockpit draws while `runDoctor` streams. Checks are planned (○), start
// (spinner) and resolve (✓ ! ✗ –) in any order. `reduceDoctor` is pure (the tests fold actions through it) and
// returns, with the next state, what the core must do for an accepted key: run the doctor again, or leave.
// Every pass of the doctor carries a generation number, so a late callback of a pass the user already re-ran can
// never repaint a row of the new pass. The doctor's intents live here too (the store is the only state the doctor
// screen has): `dispatchDoctorIntent` folds what the key asked, then runs the reducer's effect on the
// DoctorController that the core implements (src/tui/doctor.ts) on top of src/doctor/run.ts. The doctor's types and marks
// are re-exported, so the views need nothing from src/doctor.

import { scrollAction, type ScrollIntent } from '../scrollAction.js';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { doctorCounts, doctorSummary, STATUS_MARK } from '../../src/doctor/report.js';
import {
  DOCTOR_CATEGORIES,
  type DoctorCategory,
  type DoctorResult,
  type DoctorSeverity,
  type DoctorStatus,
} from '../../src/doctor/types.js';
import { clampDoctorOffset, doctorLines, problemOffset } from './scroll.js';
import { errorText } from '../errorText.js';
import { stay, type Step } from '../step.js';

export type { DoctorCategory, DoctorResult, DoctorSeverity, DoctorStatus };

/** What a row knows of its check before it resolves (a `DoctorCheck` fits: it has these fields). */
export interface DoctorCheckInfo {
  id: string;
  category: DoctorCategory;
  severity: DoctorSeverity;
  title: string;
}

export type DoctorRowStatus = 'pending' | 'running' | DoctorStatus;

export interface DoctorRow extends DoctorCheckInfo {
  status: DoctorRowStatus;
  /** Set once resolved. */
  result?: DoctorResult;
}

/**
 * How the doctor was opened: `factory doctor` (closing it quits), or `d` on the home screen, a run or the arms
 * board (closing goes back to that screen, which the key help names).
 */
export type DoctorVia = 'command' | 'home' | 'run' | 'board';

export interface DoctorState {
  via: DoctorVia;
  /** The pass in flight or last shown; 0 before the first one. */
  generation: number;
  rows: DoctorRow[];
  /** The pass has returned every result. */
  finished: boolean;
  /** Why the pass could not run at all (a check that throws is a failed row, never this). */
  crash?: string;
  /** One line telling the user what their last key did. */
  statusLine?: string;
  closing: boolean;
  /** The first checklist line the screen's window shows (doctorScroll.ts); the screen clamps it to its height. */
  offset: number;
  /** The user moved the window during this pass: its end no longer moves it to the first problem. */
  scrolled: boolean;
}

export type DoctorAction =
  | { type: 'begin'; generation: number }
  | { type: 'planned'; generation: number; checks: readonly DoctorCheckInfo[] }
  | { type: 'started'; generation: number; check: DoctorCheckInfo }
  | { type: 'resolved'; generation: number; result: DoctorResult }
  | { type: 'finished'; generation: number; results: readonly DoctorResult[] }
  | { type: 'crashed'; generation: number; message: string }
  | { type: 'rerun' }
  /** Move the window by `by` lines, or to an end; `page` is the window's height, known to the screen. */
  | { type: 'scroll'; by: number; page: number; fixWidth?: number }
  | { type: 'scroll_to'; to: 'top' | 'bottom'; page: number; fixWidth?: number }
  /** Leave the doctor; `quit`: Ctrl-C from the home's doctor, which quits the cockpit. */
  | { type: 'close'; quit?: boolean };

/** What the core must do for an accepted doctor action. */
export type DoctorEffect = { type: 'rerun' } | { type: 'close' } | { type: 'quit' };

export type DoctorStep = Step<DoctorState, DoctorEffect>;

export function initialDoctorState(via: DoctorVia = 'command'): DoctorState {
  return { via, generation: 0, rows: [], finished: false, closing: false, offset: 0, scrolled: false };
}

function info(check: DoctorCheckInfo): DoctorCheckInfo {
  return { id: check.id, category: check.category, severity: check.severity, title: check.title };
}

/** Rows back to planned (the list does not jump, every old mark is gone), the pass not finished. */
function cleared(state: DoctorState): DoctorState {
  return {
    ...state,
    rows: state.rows.map((row) => ({ ...info(row), status: 'pending' })),
    finished: false,
    crash: undefined,
  };
}

export const PLANNED_MARK = '○';

export const RERUN_REFUSED = 'the doctor is still running: r once it is done';

function resolvedRow(result: DoctorResult): DoctorRow {
  return { ...info(result), status: result.status, result };
}

/** Replace the row `id` (or append it when the check was never planned), keeping the order of first sight. */
function upsert(rows: readonly DoctorRow[], row: DoctorRow): DoctorRow[] {
  const index = rows.findIndex((candidate) => candidate.id === row.id);
  if (index < 0) return [...rows, row];
  const next = rows.slice();
  next[index] = row;
  return next;
}

export function reduceDoctor(state: DoctorState, action: DoctorAction): DoctorStep {
  if (state.closing) return stay(state);
  switch (action.type) {
    case 'begin':
      if (action.generation <= state.generation) return stay(state);
      return stay({ ...cleared(state), generation: action.generation, scrolled: false });
    case 'planned':
      if (action.generation !== state.generation) return stay(state);
      return stay({
        ...state,
        rows: action.checks.map(
          (check) =>
            state.rows.find((row) => row.id === check.id && row.status !== 'pending') ?? {
              ...info(check),
              status: 'pending',
            },
        ),
      });
    case 'started': {
      if (action.generation !== state.generation || state.finished) return stay(state);
      const existing = state.rows.find((row) => row.id === action.check.id);
      // A check that already resolved (a skipped one resolves before its neighbours start) keeps its mark.
      if (existing !== undefined && existing.status !== 'pending') return stay(state);
      return stay({ ...state, rows: upsert(state.rows, { ...info(action.check), status: 'running' }) });
    }
    case 'resolved':
      if (action.generation !== state.generation || state.finished) return stay(state);
      return stay({ ...state, rows: upsert(state.rows, resolvedRow(action.result)) });
    case 'finished': {
      if (action.generation !== state.generation) return stay(state);
      // The returned results are the truth of the pass: rows no callback reported are filled in, and rows
      // planned but not run (a selection narrower than the plan) are dropped.
      let rows: DoctorRow[] = state.rows.filter((row) => action.results.some((result) => result.id === row.id));
      for (const result of action.results) rows = upsert(rows, resolvedRow(result));
      // The pass is in: the window opens on the first warning or failure, unless the user already moved it.
      const offset = state.scrolled ? state.offset : problemOffset(doctorLines(rows));
      return stay({ ...state, rows, finished: true, offset });
    }
    case 'crashed':
      if (action.generation !== state.generation) return stay(state);
      return stay({ ...state, finished: true, crash: action.message });
    case 'rerun':
      // Checks share probes and the battery; two passes at once would race, so `r` waits for the end.
      if (!state.finished) return stay({ ...state, statusLine: RERUN_REFUSED });
      return { state: { ...cleared(state), statusLine: undefined }, effect: { type: 'rerun' } };
    case 'scroll':
    case 'scroll_to': {
      const total = doctorLines(state.rows, action.fixWidth).length;
      const from = clampDoctorOffset(state.offset, total, action.page);
      const target = action.type === 'scroll' ? from + action.by : action.to === 'top' ? 0 : total;
      return stay({ ...state, offset: clampDoctorOffset(target, total, action.page), scrolled: true });
    }
    case 'close':
      return {
        state: { ...state, closing: true, statusLine: state.via === 'command' ? 'quitting…' : undefined },
        effect: { type: action.quit === true ? 'quit' : 'close' },
      };
    default: {
      const unreachable: never = action;
      return unreachable;
    }
  }
}

/** The results in, in row order. */
export function resolvedResults(state: Pick<DoctorState, 'rows'>): DoctorResult[] {
  return state.rows.flatMap((row) => (row.result !== undefined ? [row.result] : []));
}

/** The summary line, live: "3 ok, 1 warning, 0 failed, 0 skipped · 2 running". */
export function doctorProgressLine(state: Pick<DoctorState, 'rows' | 'finished'>): string {
  const summary = doctorSummary(resolvedResults(state));
  const waiting = state.rows.filter((row) => row.result === undefined).length;
  return state.finished || waiting === 0 ? summary : `${summary} · ${waiting} running`;
}

/** The colour the summary wears: red when something failed, yellow for a warning, green when all is well. */
export function doctorTone(state: Pick<DoctorState, 'rows'>): 'red' | 'yellow' | 'green' {
  const counts = doctorCounts(resolvedResults(state));
  if (counts.fail > 0) return 'red';
  if (counts.warn > 0) return 'yellow';
  return 'green';
}

/** The mark a check's row wears: ○ while planned, ✓ ! ✗ – once resolved (as on stderr); undefined while it runs (a spinner). */
export function doctorMark(row: Pick<DoctorRow, 'status'>): string | undefined {
  if (row.status === 'running') return undefined;
  if (row.status === 'pending') return PLANNED_MARK;
  return STATUS_MARK[row.status];
}

/** What follows a resolved row's detail: `(optional)` for an optional check that is not ok, as the headless rows say. */
export function optionalNote(row: Pick<DoctorRow, 'severity' | 'result'>): string {
  return row.result !== undefined && row.severity === 'optional' && row.result.status !== 'ok' ? ' (optional)' : '';
}

/** Some check is running and the doctor is not closing: the spinners need the clock. */
export function doctorSpinning(state: Pick<DoctorState, 'rows' | 'closing'>): boolean {
  return !state.closing && state.rows.some((row) => row.status === 'running');
}

/** Rows grouped by category in display order (the order of report.ts, so screen and stderr agree). */
export function doctorGroups(rows: readonly DoctorRow[]): Array<{ category: DoctorCategory; rows: DoctorRow[] }> {
  return DOCTOR_CATEGORIES.map((category) => ({
    category,
    rows: rows.filter((row) => row.category === category),
  })).filter((group) => group.rows.length > 0);
}

export interface DoctorActions {
  /** Fold one action; returns what the core must do for it, when anything. */
  dispatch(action: DoctorAction): DoctorEffect | undefined;
}

export type DoctorStoreState = DoctorState & DoctorActions;
export type DoctorStore = StoreApi<DoctorStoreState>;

export function createDoctorStore(initial: DoctorState = initialDoctorState()): DoctorStore {
  return createStore<DoctorStoreState>()((set, get) => ({
    ...initial,
    dispatch: (action) => {
      const { state, effect } = reduceDoctor(get(), action);
      set(state);
      return effect;
    },
  }));
}

// ── Feeding a pass and the keys.

/** The callbacks `runDoctor` takes (RunDoctorOptions.onStart / onUpdate), bound to one pass of the store. */
export interface DoctorHooks {
  onStart(check: DoctorCheckInfo): void;
  onUpdate(id: string, result: DoctorResult): void;
}

/**
 * Run one pass of the doctor into the store: `run` is the core's `(hooks) => runDoctor(ctx, {…, ...hooks})`.
 * `planned` (the selected checks, when the caller knows them) draws every row at once before any starts.
 * Resolves with the results, or undefined when the pass could not run (the store then shows why).
 */
export async function runDoctorInto(
  store: DoctorStore,
  run: (hooks: DoctorHooks) => Promise<DoctorResult[]>,
  planned?: readonly DoctorCheckInfo[],
): Promise<DoctorResult[] | undefined> {
  const { dispatch } = store.getState();
  const generation = store.getState().generation + 1;
  dispatch({ type: 'begin', generation });
  if (planned !== undefined) dispatch({ type: 'planned', generation, checks: planned });
  try {
    const results = await run({
      onStart: (check) => dispatch({ type: 'started', generation, check }),
      onUpdate: (_id, result) => dispatch({ type: 'resolved', generation, result }),
    });
    dispatch({ type: 'finished', generation, results });
    return results;
  } catch (error) {
    dispatch({ type: 'crashed', generation, message: errorText(error) });
    return undefined;
  }
}

/** Implemented by the core (src/tui/doctor.ts). */
export interface DoctorController {
  /** Run the doctor again (typically `runDoctorInto` with the same selection). */
  rerun(): void;
  /** Leave the doctor: back to the home screen, or quit when it was opened by `factory doctor`. */
  close(): void;
  /** Ctrl-C from the home's doctor: quit the cockpit (falls back to close when absent). */
  quit?(): void;
}

export type DoctorIntent = 'rerun' | 'close' | 'quit' | DoctorScrollIntent;
export type DoctorScrollIntent = ScrollIntent;

/** What the screen knows that a scroll key needs: the height of its window (every line, when it shows them all). */
export interface DoctorView {
  page: number;
  /** The room a fix has on a line: fixes wrap at it, so the window counts the lines the screen draws. */
  fixWidth?: number;
}

/**
 * The doctor's input modes:
 * - running: checks in flight; only leaving is bound (a re-run waits for the end);
 * - finished: every result is in (or the pass could not run); `r` runs it again;
 * - closing: close() or quit() was sent; keys are ignored.
 */
export type DoctorMode = 'running' | 'finished' | 'closing';

export function doctorModeOf(state: Pick<DoctorState, 'closing' | 'finished'>): DoctorMode {
  if (state.closing) return 'closing';
  return state.finished ? 'finished' : 'running';
}

/** Carry out what the doctor reducer asked for. */
export function runDoctorEffect(controller: DoctorController, effect: DoctorEffect | undefined): void {
  if (effect === undefined) return;
  switch (effect.type) {
    case 'rerun':
      controller.rerun();
      return;
    case 'close':
      controller.close();
      return;
    case 'quit':
      if (controller.quit !== undefined) controller.quit();
      else controller.close();
      return;
    default: {
      const unreachable: never = effect;
      throw new Error(`unknown doctor effect ${String(unreachable)}`);
    }
  }
}

/** The action of each intent; PgUp/PgDn keep one line of the last page in view. */
function actionOf(intent: DoctorIntent, view: DoctorView): DoctorAction {
  switch (intent) {
    case 'rerun':
      return { type: 'rerun' };
    case 'close':
      return { type: 'close' };
    case 'quit':
      return { type: 'close', quit: true };
    case 'up':
    case 'down':
    case 'page-up':
    case 'page-down':
    case 'top':
    case 'bottom':
      return {
        ...scrollAction(intent, view.page),
        ...(view.fixWidth !== undefined ? { fixWidth: view.fixWidth } : {}),
      };
    default: {
      const unreachable: never = intent;
      throw new Error(`unknown doctor intent ${String(unreachable)}`);
    }
  }
}

/**
 * Apply one doctor intent: the reducer decides, then its effect is run on the controller. `view`: the screen's
 * window; without one (no screen measured it) the window is the whole checklist and scrolling moves nothing.
 */
export function dispatchDoctorIntent(
  store: DoctorStore,
  controller: DoctorController,
  intent: DoctorIntent,
  view?: DoctorView,
): void {
  const page = view?.page ?? doctorLines(store.getState().rows).length;
  runDoctorEffect(
    controller,
    store
      .getState()
      .dispatch(actionOf(intent, { page, ...(view?.fixWidth !== undefined ? { fixWidth: view.fixWidth } : {}) })),
  );
}
