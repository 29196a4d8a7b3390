// The trace of a run, as every front end records it: each event goes to the run's log at once (cheap, crash-safe:
// the raw source of truth); the SQLite index is loaded once pi is starting, records live from then on, and catches
// up from the log when the run closes. At the close the run's own files are masked once more with the run's redactor
// (scrub.ts), then indexed, masked again as they are read: every artefact under adws/adw_data ends clean.
import { errorMessage } from '../contract/errors.js';
import type { WorkspacePaths } from '../config/paths.js';
import type { Run } from '../engine/runner.js';
import { createRunRecorder } from '../trace/runLog.js';
import { scrubRun } from '../trace/scrub.js';
import type { TraceStore } from '../trace/store.js';

export interface AttachedTrace {
  /** Flush the run log, mask the run's files (harness traces, pi's stderr, harvest.json), then index the run. */
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
      .then(() => import('../trace/store.js'))
      .then((m) => {
        store = m.openTraceStore(paths, { onWarning: warn, redact: run.redact });
      })
      .catch((error: unknown) => {
        warn(`trace store unavailable: ${errorMessage(error)} (the run log keeps everything)`);
      }));
  run.subscribe((event) => {
    if (
      event.type === 'attempt_started' ||
      event.type === 'activity' ||
      event.type === 'phase_ok' ||
      event.type === 'phase_failed' ||
      event.type === 'run_finished'
    )
      void openStore();
    store?.recordEvent(event);
  });
  return {
    async close() {
      await recorder.close();
      // pi has exited (the lifecycle closes it first): nothing appends to these files any more.
      const scrubbed = scrubRun(paths, run.adwId, run.redact);
      for (const line of scrubbed.failed) warn(`trace: not masked: ${line}`);
      await openStore();
      store?.syncRun(run.adwId, { rewritten: scrubbed.harness });
      store?.close();
    },
  };
}
