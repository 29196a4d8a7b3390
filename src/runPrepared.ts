// A prepared run from start to close, whichever front end shows it: the trace attached first, the front end
// while the run executes, the headless follow-up (bon --apply), the result on stdout, then pi closed and the
// trace synced — in that order, through the lifecycle's cleanup registry so a throw on the way changes nothing.
import type { PreparedRun } from './commands/prepared.js';
import type { Lifecycle } from './lifecycle.js';

export interface RunIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Shows the run while `execute` runs it; returns the run's exit. */
export type FrontEnd = (prepared: PreparedRun, execute: () => Promise<number>) => Promise<number>;

export async function runPrepared(prepared: PreparedRun, frontEnd: FrontEnd, opts: { io: RunIo; json: boolean; interactive: boolean; lifecycle: Lifecycle }): Promise<number> {
  const { io, json, interactive, lifecycle } = opts;
  const { run } = prepared;
  const [{ attachTrace }, { execute }] = await Promise.all([import('./trace/attach.js'), import('./runner.js')]);
  const trace = attachTrace(run, prepared.workspace.paths, (message) => io.stderr.write(`factory: ${message}\n`));
  const syncTrace = lifecycle.defer('sync the trace', () => trace.close());
  // pi first (its last trace lines are written as it shuts down), then the trace is synced: cleanups run last first.
  const closeRun = lifecycle.defer('close the run (pi)', () => prepared.close());
  try {
    let exit = await frontEnd(prepared, () => execute(run, prepared.phases, prepared.resume));
    if (!interactive && prepared.finish) exit = await prepared.finish(exit);
    // The result is an event (with --json, the event line is all stdout gets: nothing but RunEvents there).
    const envelope = prepared.output();
    if (typeof envelope === 'string') {
      run.emit({ type: 'proposal', adwId: run.adwId, ts: Date.now(), command: envelope });
      if (!json) io.stdout.write(`${envelope}\n`);
    } else if (envelope !== undefined) {
      run.emit({ type: 'envelope', adwId: run.adwId, ts: Date.now(), envelope });
      if (!json) io.stdout.write(`${JSON.stringify(envelope, null, 2)}\n`);
    }
    return exit;
  } finally {
    await closeRun();
    await syncTrace();
  }
}
