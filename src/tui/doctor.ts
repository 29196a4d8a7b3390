// The doctor's checklist in a terminal: as a screen of its own (`factory doctor`, or `d` on the home) and as an
// overlay over a live run or the arms board (`d`), the run's events feeding its own store meanwhile.
import type { CommandFlags } from '../commands/command.js';
import type { Workspace } from '../commands/workspace.js';
import { errorMessage } from '../contract/errors.js';
import type { Lifecycle } from '../lifecycle.js';
import { importUi, mountScreen, type Mounted, type Ui } from './mount.js';

const warn = (message: string) => process.stderr.write(`factory: ${message}\n`);

async function doctorModules() {
  const [{ createDoctorStore, initialDoctorState, runDoctorInto }, { DoctorScreen }, { doctorSession, doctorOfRun }] =
    await Promise.all([
      import('../../state/doctor/store.js'),
      import('../../components/DoctorScreen.js'),
      import('../commands/doctor.js'),
    ]);
  return { createDoctorStore, initialDoctorState, runDoctorInto, DoctorScreen, doctorSession, doctorOfRun };
}

/**
 * `d` over a run: the checklist takes the frame; closing it puts the run's screen back as it is now. It checks the
 * run's own roster (`--config`) and environment, not the repository's defaults.
 */
export function overlayDoctor(
  ui: Ui,
  mounted: Mounted,
  workspace: Pick<Workspace, 'root' | 'rosterFile' | 'real'>,
  via: 'run' | 'board',
): void {
  void (async () => {
    const m = await doctorModules();
    const session = await m.doctorOfRun(workspace);
    const store = m.createDoctorStore(m.initialDoctorState(via));
    const pass = () => m.runDoctorInto(store, (hooks) => session.pass(hooks), session.planned);
    const close = () => mounted.back();
    mounted.show(
      ui.React.createElement(m.DoctorScreen, { store, controller: { rerun: () => void pass(), close, quit: close } }),
    );
    void pass();
  })().catch((error: unknown) => warn(`doctor: ${errorMessage(error)}`));
}

/**
 * The checklist as a screen, resolving live from spinner to mark; `r` re-runs, q/esc closes. Returns the
 * doctor's exit. From the home (`via: 'home'`) the frame is erased on close, so the runs list comes back alone.
 */
export async function runDoctorScreen(
  ids: string[],
  flags: CommandFlags,
  via: 'command' | 'home',
  lifecycle: Lifecycle,
): Promise<number> {
  const [ui, m] = await Promise.all([importUi(), doctorModules()]);
  const session = await m.doctorSession(ids, flags);
  const store = m.createDoctorStore(m.initialDoctorState(via));
  let results: Awaited<ReturnType<typeof session.pass>> = [];
  const pass = () =>
    m
      .runDoctorInto(store, (hooks) => session.pass(hooks), session.planned)
      .then((r) => {
        if (r) results = r;
      });
  let closed: () => void = () => {};
  const closing = new Promise<void>((resolve) => (closed = resolve));
  const detach = lifecycle.attach({ abort: () => {}, quit: () => closed() });
  const controller = { rerun: () => void pass(), close: () => closed(), quit: () => lifecycle.quit() };
  const mounted = mountScreen(ui, lifecycle, ui.React.createElement(m.DoctorScreen, { store, controller }), store);
  try {
    void pass();
    await closing;
    await mounted.settled();
  } finally {
    await mounted.close({ clear: via === 'home' });
    detach();
  }
  return session.exit(results);
}
