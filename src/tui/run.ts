// A live run in a terminal: the run screen (phases, activity) for prompt/build/resume, the arms board for bon.
// Each has one named controller; keys reach the core through it and the lifecycle's interrupt ladder.
import type { PreparedBon } from '../commands/bon.js';
import type { PreparedFlow } from '../commands/prepared.js';
import { errorMessage } from '../contract/errors.js';
import type { Lifecycle, Rung } from '../lifecycle.js';
import type { Run } from '../engine/runner.js';
import { overlayDoctor } from './doctor.js';
import { importUi, mountScreen, type Mounted, type Ui } from './mount.js';

interface UiPatchable {
  getState(): {
    setUi(patch: { abortRequested?: boolean; quitting?: boolean; quitArmed?: boolean; statusLine?: string }): void;
  };
}

/** A rung climbed by a signal shows on the screen as if the key had been pressed: one ladder, one picture. */
function showRung(store: UiPatchable, statusAborting: string, statusQuitting: string) {
  return (rung: Rung) => {
    if (rung === 1) store.getState().setUi({ abortRequested: true, quitArmed: false, statusLine: statusAborting });
    else if (rung >= 2) store.getState().setUi({ quitting: true, quitArmed: false, statusLine: statusQuitting });
  };
}

/** The controller of the run screen: Ctrl-C climbs the ladder, a confirmed `q` quits, `d` opens the doctor. */
export function runScreenController(lifecycle: Lifecycle, openDoctor: () => void) {
  return { abort: () => lifecycle.interrupt(), quit: () => lifecycle.quit(), doctor: openDoctor };
}

/** How a screen tells someone who looked away (./notify.ts): on by default, `--no-notify` turns it off. */
export interface ScreenOptions {
  notify?: boolean;
}

async function notifyOn(run: Run, opts: ScreenOptions): Promise<void> {
  if (opts.notify === false) return;
  const { notifier } = await import('./notify.js');
  run.subscribe(notifier(process.stdout, process.env));
}

export async function runFlowScreen(
  prepared: PreparedFlow,
  lifecycle: Lifecycle,
  execute: (run: Run) => Promise<number>,
  opts: ScreenOptions = {},
): Promise<number> {
  const [ui, { createRunStore }, { RunScreen }, { STATUS_ABORTING, STATUS_QUITTING }, { pacedStore }] =
    await Promise.all([
      importUi(),
      import('../../state/run/store.js'),
      import('../../components/RunScreen.js'),
      import('../../state/controller.js'),
      import('../../state/paced.js'),
    ]);
  const { run } = prepared;
  const store = createRunStore();
  run.subscribe((event) => store.getState().apply(event));
  await notifyOn(run, opts);
  let mounted: Mounted | undefined;
  const controller = runScreenController(
    lifecycle,
    () => mounted && overlayDoctor(ui, mounted, prepared.workspace, 'run'),
  );
  const detach = lifecycle.attach({
    abort: () => run.abort(),
    onRung: showRung(store, STATUS_ABORTING, STATUS_QUITTING),
  });
  // The screen reads the store at most once a frame (../../state/paced.ts): a busy run costs no render between frames.
  const view = pacedStore(store);
  mounted = mountScreen(ui, lifecycle, ui.React.createElement(RunScreen, { store: view, controller }), view);
  try {
    const exit = await execute(run);
    // The final frame stays on screen: unmount once it is drawn.
    await mounted.settled();
    return exit;
  } finally {
    await mounted.close();
    detach();
  }
}

/**
 * `factory bon` in a terminal: the arms board, live; it stays once the harvest is in, so the arms can be compared
 * (enter: the diff) and one applied (p), until q.
 */
export async function runBonScreen(
  prepared: PreparedBon,
  lifecycle: Lifecycle,
  execute: (run: Run) => Promise<number>,
  opts: ScreenOptions = {},
): Promise<number> {
  const [
    ui,
    { createBonStore },
    { BonScreen },
    { STATUS_ABORTING, STATUS_QUITTING },
    { applyWinner, readArmPatch },
    { pacedStore },
  ] = await Promise.all([
    importUi(),
    import('../../state/bon/store.js'),
    import('../../components/BonScreen.js'),
    import('../../state/controller.js'),
    import('../commands/bon.js'),
    import('../../state/paced.js'),
  ]);
  const { run, session, workspace } = prepared;
  const store = createBonStore();
  run.subscribe((event) => store.getState().apply(event));
  await notifyOn(run, opts);
  // Someone watches: an arm at its cap pauses for a raise, a forecast above the threshold asks.
  session.watched = true;
  let quit: () => void = () => {};
  const quitting = new Promise<void>((resolve) => (quit = resolve));
  // Status lines come from the core (an apply's motif quotes gate output) without passing through an event.
  const say = (statusLine: string) => store.getState().setUi({ statusLine: run.redact(statusLine) });
  let mounted: Mounted | undefined;
  const controller = bonScreenController(
    lifecycle,
    prepared,
    say,
    { applyWinner, readArmPatch },
    () => mounted && overlayDoctor(ui, mounted, workspace, 'board'),
  );
  const detach = lifecycle.attach({
    abort: () => run.abort(),
    quit: () => quit(),
    onRung: showRung(store, STATUS_ABORTING, STATUS_QUITTING),
  });
  const view = pacedStore(store);
  mounted = mountScreen(ui, lifecycle, ui.React.createElement(BonScreen, { store: view, controller }), view);
  try {
    let exit = await execute(run);
    // --apply: the winner is verified and applied while the board stays (the follow-up says what it does).
    if (prepared.finish && !run.interrupted) exit = await prepared.finish(exit, say);
    await quitting;
    await mounted.settled();
    return exit;
  } finally {
    await mounted.close();
    detach();
  }
}

type BonCommands = Pick<typeof import('../commands/bon.js'), 'applyWinner' | 'readArmPatch'>;

/** The controller of the arms board: the run screen's keys, plus abort/clone an arm, read a patch, apply one. */
export function bonScreenController(
  lifecycle: Lifecycle,
  prepared: PreparedBon,
  say: (line: string) => void,
  bon: BonCommands,
  openDoctor: () => void,
) {
  const { session, workspace } = prepared;
  // An arm its guards had to refuse something of is applied on a second `p` on it: the first says what it tried.
  let consentAsked: number | undefined;
  return {
    ...runScreenController(lifecycle, openDoctor),
    abortArm: (arm: number) => session.abortArm(arm),
    raiseArm: (arm: number) => {
      const refused = session.raiseArm(arm);
      if (refused) say(refused);
    },
    confirmFanOut: (yes: boolean) => {
      const refused = session.confirmFanOut(yes);
      if (refused) say(refused);
    },
    steerArm: (arm: number, text: string) => {
      const refused = session.steerArm(arm, text);
      if (refused) say(refused);
      else say(`sent to arm ${arm}: it reads it before its next model call`);
    },
    // A refusal comes back as an event (clone_refused): the board says it and counts the clone asked as answered.
    cloneArm: () => void session.addArm(),
    apply: (arm: number) => {
      const consent = consentAsked === arm;
      consentAsked = undefined;
      say(`applying arm ${arm}: checking its paths, then its gates on HEAD in a scratch worktree…`);
      void bon.applyWinner(session, workspace, arm, consent).then(
        (outcome) => {
          if (!outcome.needsConsent) return say(outcome.line);
          consentAsked = arm;
          // What to do first: a narrow status line cuts the end, and the caution can be long.
          say(`p again applies it anyway — ${outcome.line.replace(/ — not applied without a yes: .*$/, '')}`);
        },
        (error: unknown) => say(`apply failed: ${errorMessage(error)}`),
      );
    },
    // The patch file is the arm's work as it is (sealed, applied byte for byte); the screen shows it masked.
    readPatch: (arm: number) => session.run.redact(bon.readArmPatch(session, arm)),
  };
}

export type { Ui };
