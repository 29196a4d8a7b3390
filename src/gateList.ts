// The payload gates of one change, as a build and a best-of-N arm both judge it: the changed files must exist,
// then every gate command runs (even after a red one: the screen shows each verdict) until the run is interrupted.
// Each verdict is an event the moment it is known.
import { changedFilesExist, commandGate, type GateCommand, type GateReport } from './gates.js';
import type { Run } from './runner.js';

export interface GateListOptions {
  run: Run;
  /** The phase the verdicts belong to (`gates`, `arm_2`…). */
  phase: string;
  cwd: string;
  changedFiles: string[] | undefined;
  commands: readonly GateCommand[];
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

export async function runGateList(opts: GateListOptions): Promise<GateReport[]> {
  const { run, phase } = opts;
  const record = (report: GateReport): GateReport => {
    run.emit({ type: 'gate_result', adwId: run.adwId, ts: Date.now(), phase, gate: report.gate, ok: report.ok, motif: report.motif, seconds: report.seconds });
    return report;
  };
  const reports = [record(changedFilesExist({ changed_files: opts.changedFiles }, opts.cwd))];
  for (const cmd of opts.commands) {
    if (opts.signal.aborted) break;
    reports.push(record(await commandGate(cmd, { signal: opts.signal, runTag: run.adwId, env: opts.env })({ changed_files: opts.changedFiles })));
  }
  return reports;
}
