// The trace of a run, as every front end records it: each event goes to the run's log at once (cheap, crash-safe:
// the raw source of truth); the SQLite index is loaded once pi is starting, records live from then on, and catches
// up from the log when the run closes.
import { errorMessage } from '../errors.js';
import type { WorkspacePaths } from '../paths.js';
import type { Run } from '../runner.js';
import { createRunRecorder } from './runLog.js';
import type { TraceStore } from './store.js';

export interface AttachedTrace {
  /** Flush the run log, then bring the index up to date with this run. */
  close(): Promise<void>;
}

export function attachTrace(run: Run, paths: WorkspacePaths, warn: (message: string) => void): AttachedTrace {
  const recorder = createRunRecorder(paths, { onWarning: warn });
  run.subscribe(recorder.listener);
  let store: TraceStore | undefined;
  let storeReady: Promise<void> | undefined;
  // Opened once pi is starting (an attempt begins: the spawn happens in that same tick, so setImmediate lands after
  // it and SQLite loads while pi boots), at its first activity, or when a phase has ended; never on the path to the
  // spawn itself: that would delay pi by ~20 ms. Events before it opens are ingested from the run log at close.
  const openStore = () =>
    (storeReady ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => import('./store.js'))
      .then((m) => {
        store = m.openTraceStore(paths, { onWarning: warn });
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
