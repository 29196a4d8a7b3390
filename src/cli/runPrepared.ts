// A prepared run from start to close, whichever front end shows it: the trace attached first, the front end
// while the run executes, the headless follow-up (bon --apply), the result on stdout, then pi closed and the
// trace synced — in that order, through the lifecycle's cleanup registry so a throw on the way changes nothing.
import type { PreparedRun } from '../commands/prepared.js';
import type { Lifecycle } from '../lifecycle.js';

export interface RunIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Shows the run while `execute` runs it; returns the run's exit. */
export type FrontEnd = (prepared: PreparedRun, execute: () => Promise<number>) => Promise<number>;

/** `--report md,junit`: the kinds, the folder (default: the run's own under the data folder), the environment. */
export interface ReportRequest {
  kinds: Array<'md' | 'junit'>;
  dir?: string;
  env: NodeJS.ProcessEnv;
}

export async function runPrepared(
  prepared: PreparedRun,
  frontEnd: FrontEnd,
  opts: { io: RunIo; json: boolean; interactive: boolean; lifecycle: Lifecycle; report?: ReportRequest },
): Promise<number> {
  const { io, json, interactive, lifecycle } = opts;
  const { run } = prepared;
  // The report folds every event of the run (masked, as every consumer sees them); written once the run is over.
  const events: import('../contract/events.js').RunEvent[] = [];
  if (opts.report) run.subscribe((event) => events.push(event));
  const [{ attachTrace }, { execute }] = await Promise.all([import('./attachTrace.js'), import('../engine/runner.js')]);
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
    if (opts.report) await writeReport(opts.report, events, prepared, io);
    return exit;
  } finally {
    await closeRun();
    await syncTrace();
  }
}

/**
 * The run's Markdown summary and JUnit XML, named on stderr. On GitHub Actions the summary is also appended to the
 * job's step summary. A report that cannot be written is said in one line: the run's exit stays the run's.
 */
async function writeReport(
  request: ReportRequest,
  events: import('../contract/events.js').RunEvent[],
  prepared: PreparedRun,
  io: RunIo,
): Promise<void> {
  const [{ collectReport, markdownReport, writeReports }, path, fs] = await Promise.all([
    import('../headless/ciReport.js'),
    import('node:path'),
    import('node:fs'),
  ]);
  const { run } = prepared;
  const dir = request.dir ?? path.join(prepared.workspace.paths.dataDir, 'reports', run.adwId);
  try {
    const report = collectReport(events);
    const files = writeReports(request.kinds, report, dir);
    io.stderr.write(`[${run.adwId}] report: ${files.join(', ')}\n`);
    const summary = request.env.GITHUB_STEP_SUMMARY;
    if (summary && request.kinds.includes('md')) fs.appendFileSync(summary, `${markdownReport(report)}\n`);
  } catch (error) {
    io.stderr.write(`factory: the report could not be written to ${dir}: ${(error as Error).message}\n`);
  }
}
