#!/usr/bin/env node
// The composition root: the only module that wires the core, the store and the views together. It parses the
// command line, builds a Run, chooses the TUI or the headless printer, and maps outcomes to exit codes
// (0 green, 1 workflow failed, 2 infrastructure or usage, 130 interrupted).
import { errorMessage, UsageError } from './errors.js';
import type { CommandFlags, Prepared, PreparedRun } from './commands.js';
import type { Run } from './runner.js';

const HELP = `
  Usage
    $ factory                      the cockpit home: recent runs (enter replays, r resumes)
    $ factory init [--into <repo>] set a repository up: the pi node, a roster whose gate is its test
                                   command, neutral briefs, adws/adw_data/ ignored (merges, idempotent)
    $ factory prompt "<ask>"       one ask through the typed gate (phases: prompt → dispose)
    $ factory build <spec.md>      implement a spec, judged by the roster's payload gates (check → build → gates)
    $ factory bon <spec.md>        best-of-N by clone: one primer, N arms judged by the gates, ranked
                                   [--arms 3] [--models a,b,c] [--apply]
    $ factory doctor [<id>…]       zero-token preflight of the workstation and the pi node
                                   [--quick] [--strict] [--json]
    $ factory doctor --layer node|station --into <repo>   install the factory's pi layer into another repo
    $ factory runs                 recent runs from the trace
    $ factory show <adw_id>        a run's phases, attempts, sessions and motifs
    $ factory resume <adw_id>      continue a failed or interrupted run in its live session (same folder only)
    $ factory demo [--dir <path>]  an offline run through the real pi and a scripted model (no key, no network)

  Options
    --model      model id (registry id, routed through the roster's gateway; provider/id)
    --harness    pi (default) or claude
    --retries    extra attempts of an agent phase, in the same live session (default 2)
    --cwd        folder to work in (default: the current folder's git top-level)
    --arms       bon: number of arms, 2 to 5 (default 3, or one per --models entry)
    --models     bon: comma-separated models, one per arm (cycled)
    --apply      bon: apply the verified winning patch without asking
    --config     roster file (default adws/adw_config/factory.config.yaml)
    --dir        demo: keep the demo repository in this folder
    --no-ui      plain log lines on stderr, the result on stdout (also when CI is set or stdout is not a TTY)
    --json       one JSON event per line on stdout
    --version    print the version
    --help       this help

  Environment
    FACTORY_PI              the pi executable to use (default: pi on PATH, else the bundled pi)
    FACTORY_FALLBACK_MODEL  model route to relaunch on, in the same session, when the provider is down
    .env                    provider keys, loaded once; an agent with an auth profile gets only its keys

  Exit codes
    0 green · 1 workflow failed · 2 infrastructure or usage · 130 interrupted
`;

function fail(message: string, code = 2): never {
  process.stderr.write(`factory: ${message}\n`);
  process.exit(code);
}

const DESCRIPTION = 'factory — a terminal cockpit for AI Developer Workflows on the pi coding agent';

function showHelp(): number {
  process.stdout.write(`\n  ${DESCRIPTION}\n${HELP.replace(/\s+$/, '')}\n\n`);
  return 0;
}

async function printVersion(): Promise<number> {
  const { readFileSync } = await import('node:fs');
  const { factoryRoot } = await import('./pi/resolve.js');
  const pkg = JSON.parse(readFileSync(`${factoryRoot()}/package.json`, 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
  return 0;
}

/** `factory --version` answers before anything else is loaded: it is what scripts call most. */
async function printVersionFast(): Promise<boolean> {
  const argv = process.argv.slice(2);
  if (argv.length !== 1 || argv[0] !== '--version') return false;
  await printVersion();
  return true;
}

async function main(): Promise<number> {
  if (await printVersionFast()) return 0;
  // Last resort: whatever way the cockpit ends, no child it started outlives it.
  const { killAllChildrenSync } = await import('./process/supervisor.js');
  process.on('exit', killAllChildrenSync);
  const { parseCli } = await import('./cliArgs.js');
  let cli: ReturnType<typeof parseCli>;
  try {
    cli = parseCli(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) fail(error.message);
    throw error;
  }
  if (cli.flags.help) return showHelp();
  if (cli.flags.version) return printVersion();
  const [command, ...rest] = cli.input;
  const flags = cli.flags;
  const interactive = Boolean(process.stdout.isTTY) && flags.ui && !flags.json && !process.env.CI;
  const { prepareCommand } = await import('./commands.js');
  let prepared: Prepared;
  try {
    prepared = await prepareCommand(command, rest, flags, interactive);
  } catch (error) {
    if (error instanceof UsageError) fail(error.message);
    throw error;
  }
  switch (prepared.kind) {
    case 'help':
      return showHelp();
    case 'home':
      // The cockpit home needs a terminal; anywhere else, `factory` alone shows how to use it.
      if (!interactive) return showHelp();
      return runHome(flags);
    case 'print':
      process.stdout.write(prepared.stdout);
      return prepared.exit;
    case 'doctor':
      return runDoctorTui(prepared.ids, flags, 'command');
    case 'run':
      return runPrepared(prepared.prepared, interactive, flags.json);
  }
}

async function runPrepared(prepared: PreparedRun, interactive: boolean, json: boolean): Promise<number> {
  const { run } = prepared;
  const recorder = await attachRecorder(prepared);
  try {
    let exit = interactive ? await runWithTui(prepared) : await runHeadless(prepared, json);
    if (!interactive && prepared.finish) exit = await prepared.finish(exit);
    const envelope = prepared.output();
    if (typeof envelope === 'string') {
      process.stdout.write(json ? `${JSON.stringify({ type: 'proposal', adwId: run.adwId, command: envelope })}\n` : `${envelope}\n`);
    } else if (envelope !== undefined) {
      process.stdout.write(json ? `${JSON.stringify({ type: 'envelope', adwId: run.adwId, envelope })}\n` : `${JSON.stringify(envelope, null, 2)}\n`);
    }
    return exit;
  } finally {
    // pi first (its last trace lines are written as it shuts down), then the trace is synced.
    await prepared.close();
    await recorder.close();
  }
}

/**
 * Ink and React, in their production builds: React's development build records a performance measure per
 * render that Node keeps forever (a leak under a busy board). NODE_ENV is restored right after, so children
 * never see a value the user did not set.
 */
async function importUi(): Promise<[typeof import('ink'), typeof import('react')]> {
  const previous = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    const [ink, react] = await Promise.all([import('ink'), import('react'), import('react/jsx-runtime')]);
    return [ink, react];
  } finally {
    if (previous === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = previous;
  }
}

/**
 * Signals: the first interrupt aborts the running turn; a second one ends every child at once — but the run's
 * own cleanup (an arm's patch harvest and tree reset, pi's close) still runs as the children die; a hard exit
 * only backs it up. SIGTERM/SIGHUP abort the run and call `onTerminate` (a screen waiting on a key quits).
 */
function installSignals(run: Run, onTerminate: () => void = () => {}): () => void {
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    if (interrupts === 1) {
      process.stderr.write(`[${run.adwId}] interrupt: aborting the running turn (again to quit at once)\n`);
      run.abort();
      return;
    }
    void import('./process/supervisor.js').then(({ killAllChildrenSync }) => {
      killAllChildrenSync();
      setTimeout(() => process.exit(130), 10_000).unref();
    });
  };
  const onTerminateSignal = () => {
    run.abort();
    onTerminate();
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onTerminateSignal);
  process.on('SIGHUP', onTerminateSignal);
  return () => {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerminateSignal);
    process.off('SIGHUP', onTerminateSignal);
  };
}

async function runHeadless({ run, phases, resume }: PreparedRun, json: boolean): Promise<number> {
  const [{ headlessListener }, { execute }] = await Promise.all([import('./headless.js'), import('./runner.js')]);
  run.subscribe(headlessListener({ stdout: process.stdout, stderr: process.stderr }, json));
  const uninstall = installSignals(run);
  try {
    return await execute(run, phases, resume);
  } finally {
    uninstall();
  }
}

async function runWithTui(prepared: PreparedRun): Promise<number> {
  if ('session' in prepared) return runBonWithTui(prepared as import('./commands/bon.js').PreparedBon);
  const { run, phases, resume } = prepared;
  const [[{ render }, React], { createRunStore }, { RunScreen }, { execute }] = await Promise.all([
    importUi(),
    import('../state/runStore.js'),
    import('../components/RunScreen.js'),
    import('./runner.js'),
  ]);
  const store = createRunStore();
  run.subscribe((event) => store.getState().apply(event));
  let quitRequested = false;
  const controller = {
    abort: () => run.abort(),
    quit: () => {
      quitRequested = true;
      run.abort();
    },
    doctor: () => overlayDoctor(app, React, screen, prepared.workspace.root),
  };
  const uninstall = installSignals(run);
  const screen = React.createElement(RunScreen, { store, controller });
  const app = render(screen, { exitOnCtrlC: false, patchConsole: true });
  try {
    const exit = await execute(run, phases, resume);
    // Leave the final frame on screen; a finished run waits for nothing unless the user asked to quit.
    await new Promise((r) => setTimeout(r, quitRequested ? 0 : 50));
    return exit;
  } finally {
    app.unmount();
    await app.waitUntilExit().catch(() => undefined);
    uninstall();
  }
}

/**
 * `factory bon` in a terminal: the arms board, live; it stays once the harvest is in, so the arms can be compared
 * (enter: the diff) and one applied (p), until q.
 */
async function runBonWithTui(prepared: import('./commands/bon.js').PreparedBon): Promise<number> {
  const { run, phases, session, workspace } = prepared;
  const [[{ render }, React], { createBonStore }, { BonScreen }, { execute }, { applyWinner, readArmPatch }] = await Promise.all([
    importUi(),
    import('../state/bonStore.js'),
    import('../components/BonScreen.js'),
    import('./runner.js'),
    import('./commands/bon.js'),
  ]);
  const store = createBonStore();
  run.subscribe((event) => store.getState().apply(event));
  let quit: () => void = () => {};
  const quitting = new Promise<void>((resolve) => (quit = resolve));
  const say = (statusLine: string) => store.getState().setUi({ statusLine });
  const controller = {
    abort: () => run.abort(),
    quit: () => {
      run.abort();
      quit();
    },
    abortArm: (arm: number) => session.abortArm(arm),
    cloneArm: () => {
      const refused = session.addArm();
      if (refused) say(refused);
    },
    apply: (arm: number) => {
      say(`applying arm ${arm}: checking its paths, then its gates on HEAD in a scratch worktree…`);
      void applyWinner(session, workspace, arm).then(
        (outcome) => say(outcome.line),
        (error: unknown) => say(`apply failed: ${errorMessage(error)}`),
      );
    },
    readPatch: (arm: number) => readArmPatch(session, arm),
    doctor: () => overlayDoctor(app, React, screen, workspace.root),
  };
  const uninstall = installSignals(run, () => quit());
  const screen = React.createElement(BonScreen, { store, controller });
  const app = render(screen, { exitOnCtrlC: false, patchConsole: true });
  try {
    let exit = await execute(run, phases, prepared.resume);
    if (prepared.finish && !run.interrupted) {
      say('applying the winner (--apply): checking its paths, then its gates on HEAD in a scratch worktree…');
      exit = await prepared.finish(exit, say);
    }
    await quitting;
    return exit;
  } finally {
    app.unmount();
    await app.waitUntilExit().catch(() => undefined);
    uninstall();
  }
}

const warn = (message: string) => process.stderr.write(`factory: ${message}\n`);

/**
 * The trace: every event goes to the run's log at once (cheap, crash-safe: the raw source of truth); the SQLite
 * index is loaded once pi is already working, records live from then on, and catches up from the log at the end.
 */
async function attachRecorder({ run, workspace }: PreparedRun): Promise<{ close(): Promise<void> }> {
  const { createRunRecorder } = await import('./trace/runLog.js');
  const recorder = createRunRecorder(workspace.paths, { onWarning: warn });
  run.subscribe(recorder.listener);
  let store: import('./trace/store.js').TraceStore | undefined;
  let storeReady: Promise<void> | undefined;
  // Opened once pi is starting (an attempt begins: the spawn happens in that same tick, so setImmediate lands after
  // it and SQLite loads while pi boots), at its first activity, or when a phase has ended; never on the path to the
  // spawn itself: that would delay pi by ~20 ms. Events before it opens are ingested from the run log at close.
  const openStore = () =>
    (storeReady ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => import('./trace/store.js'))
      .then((m) => {
        store = m.openTraceStore(workspace.paths, { onWarning: warn });
      })
      .catch((error: unknown) => {
        warn(`trace store unavailable: ${errorMessage(error)} (the run log keeps everything)`);
      }));
  run.subscribe((event) => {
    if (event.type === 'attempt_started' || event.type === 'activity' || event.type === 'phase_ok' || event.type === 'phase_failed' || event.type === 'run_finished') void openStore();
    store?.recordEvent(event);
  });
  return {
    async close() {
      await recorder.close();
      await openStore();
      store?.syncRun(run.adwId);
      store?.close();
    },
  };
}

/**
 * `d` on a run or the arms board: the doctor's checklist takes the screen while the run goes on (its events
 * keep feeding the run's store); closing it puts the run's screen back as it is now.
 */
function overlayDoctor(app: import('ink').Instance, React: typeof import('react'), back: import('react').ReactElement, cwd: string): void {
  void (async () => {
    const [{ createDoctorStore, initialDoctorState, runDoctorInto }, { DoctorScreen }, { doctorSession }] = await Promise.all([
      import('../state/doctorStore.js'),
      import('../components/DoctorScreen.js'),
      import('./commands/doctor.js'),
    ]);
    const session = await doctorSession([], { cwd, retries: 2, ui: true, json: false });
    const store = createDoctorStore(initialDoctorState('home'));
    const pass = () => runDoctorInto(store, (hooks) => session.pass(hooks), session.planned);
    const close = () => app.rerender(back);
    app.rerender(React.createElement(DoctorScreen, { store, controller: { rerun: () => void pass(), close, quit: close } }));
    void pass();
  })().catch((error: unknown) => warn(`doctor: ${errorMessage(error)}`));
}

/** The doctor's checklist, resolving live from spinner to mark; `r` re-runs, q/esc closes. Returns its exit. */
async function runDoctorTui(ids: string[], flags: CommandFlags, via: 'command' | 'home'): Promise<number> {
  const [[{ render }, React], { createDoctorStore, initialDoctorState, runDoctorInto }, { DoctorScreen }, { doctorSession }] = await Promise.all([
    importUi(),
    import('../state/doctorStore.js'),
    import('../components/DoctorScreen.js'),
    import('./commands/doctor.js'),
  ]);
  let session;
  try {
    session = await doctorSession(ids, flags);
  } catch (error) {
    if (error instanceof UsageError) fail(error.message);
    throw error;
  }
  const store = createDoctorStore(initialDoctorState(via));
  let results: Awaited<ReturnType<typeof session.pass>> = [];
  const pass = () =>
    runDoctorInto(store, (hooks) => session.pass(hooks), session.planned).then((r) => {
      if (r) results = r;
    });
  let closed: () => void = () => {};
  const closing = new Promise<void>((resolve) => (closed = resolve));
  const controller = { rerun: () => void pass(), close: () => closed(), quit: () => closed() };
  const app = render(React.createElement(DoctorScreen, { store, controller }), { exitOnCtrlC: false });
  void pass();
  await closing;
  if (via === 'home') app.clear(); // back to the runs list: leave no checklist above it
  app.unmount();
  await app.waitUntilExit().catch(() => undefined);
  return session.exit(results);
}

/** `factory` alone in a terminal: the runs list; enter replays a run, r resumes it live, d opens the doctor. */
async function runHome(flags: CommandFlags): Promise<number> {
  const [[{ render }, React], { createHomeStore }, { HomeScreen }, { openWorkspace }, { openSyncedStore }] = await Promise.all([
    importUi(),
    import('../state/homeStore.js'),
    import('../components/HomeScreen.js'),
    import('./commands/workspace.js'),
    import('./commands/runs.js'),
  ]);
  const ws = await openWorkspace(flags);
  const store = await openSyncedStore(ws.paths);
  let next: { resume: string } | { doctor: true } | undefined;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => (done = resolve));
  const controller = {
    listRuns: () => {
      store.syncAll();
      return store.listRuns(200);
    },
    runEvents: (adwId: string) => store.runEvents(adwId),
    resume: (adwId: string) => {
      next = { resume: adwId };
      done();
    },
    quit: () => done(),
    doctor: () => {
      next = { doctor: true };
      done();
    },
  };
  const app = render(React.createElement(HomeScreen, { store: createHomeStore(), controller }), { exitOnCtrlC: false });
  await finished;
  // Handing the terminal to a resumed run or the doctor: erase the list rather than leave it above them.
  if (next) app.clear();
  app.unmount();
  await app.waitUntilExit().catch(() => undefined);
  store.close();
  if (!next) return 0;
  if ('doctor' in next) {
    // From the home: the checklist, then back to the runs list.
    await runDoctorTui([], flags, 'home');
    return runHome(flags);
  }
  const { prepareResumeRun } = await import('./commands/resume.js');
  let prepared: PreparedRun;
  try {
    prepared = await prepareResumeRun(ws, next.resume, flags);
  } catch (error) {
    if (error instanceof UsageError) fail(error.message);
    throw error;
  }
  return runPrepared(prepared, true, false);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`factory: ${errorMessage(error)}\n`);
    process.exitCode = 2;
  },
);
