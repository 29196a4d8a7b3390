// `factory` alone in a terminal: the runs list (enter replays a run, r resumes it live, d opens the doctor), and
// the router that moves between the home, the doctor and a resumed run.
import fs from 'node:fs';
import path from 'node:path';
import type { CommandFlags, PreparedRun } from '../commands/command.js';
import type { Lifecycle } from '../lifecycle.js';
import { runDoctorScreen } from './doctor.js';
import { importUi, mountScreen } from './mount.js';

type HomeNext = { resume: string } | { doctor: true } | undefined;

/** The runs list until the user picks something: what to show next, or nothing (quit). */
async function homeScreen(
  flags: CommandFlags,
  lifecycle: Lifecycle,
): Promise<{ next: HomeNext; ws: import('../commands/workspace.js').Workspace }> {
  const [ui, { createHomeStore }, { HomeScreen }, { openWorkspace }, { openSyncedStore }] = await Promise.all([
    importUi(),
    import('../../state/home/store.js'),
    import('../../components/HomeScreen.js'),
    import('../commands/workspace.js'),
    import('../commands/runs.js'),
  ]);
  const ws = await openWorkspace(flags);
  const trace = await openSyncedStore(ws.paths);
  const closeTrace = lifecycle.defer('close the trace store', () => trace.close());
  let next: HomeNext;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => (done = resolve));
  const controller = {
    listRuns: () => {
      trace.syncAll();
      return trace.listRuns(200);
    },
    runEvents: (adwId: string) => trace.runEvents(adwId),
    // Only a patch under this workspace's data folder is read: the path comes from the recorded events.
    readPatch: (file: string) => {
      const inside = path.relative(ws.paths.dataDir, path.resolve(file));
      if (inside.startsWith('..') || path.isAbsolute(inside)) throw new Error(`not a patch of this workspace: ${file}`);
      return ws.redact(fs.readFileSync(file, 'utf8'));
    },
    resume: (adwId: string) => {
      next = { resume: adwId };
      done();
    },
    quit: () => lifecycle.quit(),
    doctor: () => {
      next = { doctor: true };
      done();
    },
  };
  const detach = lifecycle.attach({ abort: () => {}, quit: () => done() });
  const store = createHomeStore();
  const mounted = mountScreen(ui, lifecycle, ui.React.createElement(HomeScreen, { store, controller }), store);
  try {
    await finished;
  } finally {
    // Handing the terminal to a resumed run or the doctor: erase the list rather than leave it above them.
    await mounted.close({ clear: next !== undefined });
    detach();
    await closeTrace();
  }
  return { next: lifecycle.rung >= 2 ? undefined : next, ws };
}

/**
 * home ⇄ doctor, home → a resumed run. `runResumed` runs a prepared run with the TUI front end (the caller owns
 * the trace recorder and the exit code); quitting anywhere (q, Ctrl-C, SIGTERM) ends the loop.
 */
export async function runHomeRouter(
  flags: CommandFlags,
  lifecycle: Lifecycle,
  runResumed: (prepared: PreparedRun) => Promise<number>,
): Promise<number> {
  for (;;) {
    const { next, ws } = await homeScreen(flags, lifecycle);
    if (!next) return 0;
    if ('doctor' in next) {
      await runDoctorScreen([], flags, 'home', lifecycle);
      if (lifecycle.rung >= 2) return 0; // Ctrl-C in the doctor quits the cockpit
      continue;
    }
    const { prepareResumeRun } = await import('../commands/resume.js');
    return runResumed(await prepareResumeRun(ws, next.resume, flags));
  }
}
