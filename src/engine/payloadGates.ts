// The payload gates of one change, as a build and a best-of-N arm both judge it: the changed files must exist,
// then every gate command runs (even after a red one: the screen shows each verdict) until the run is interrupted.
// Each verdict is an event the moment it is known. Loaded by the gate phases when they run, not at start-up: the
// gates measure motifs by display width, and string-width costs tens of milliseconds to load.
import {
  changedFilesExist,
  commandGate,
  correctionDetail,
  motif,
  type GateCommand,
  type GateReport,
} from '../gates/judges.js';
import type { RunEvents } from './runEvents.js';
import type { SandboxSpec } from '../sandbox/wrap.js';
import { gateSignature, sameFailure, type GateSignature } from '../gates/baseline.js';

export interface GateListOptions {
  run: RunEvents;
  /** The phase the verdicts belong to (`gates`, `arm_2`…). */
  phase: string;
  cwd: string;
  changedFiles: string[] | undefined;
  commands: readonly GateCommand[];
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** Run each command in this OS sandbox (an arm's gates, in its tree). */
  sandbox?: SandboxSpec;
  /**
   * Gates red on HEAD before any agent worked (best-of-N's baseline), with what they said: red again the same way
   * (../gates/baseline.ts), a gate is not held against the change; green, it is the change's credit.
   */
  preexisting?: ReadonlyMap<string, GateSignature>;
}

export interface GateListVerdict {
  reports: GateReport[];
  /** Gates red on HEAD that this change turned green: its credit. */
  fixed: string[];
  /** Gates red on HEAD and red again the same way: not this change's fault, left out of its motif. */
  excused: string[];
  /** The one-line motif of the red gates; undefined when all are green. */
  motif: string | undefined;
  /** What goes back to the agent: the red gates' output. */
  detail: string;
  /** The first gate that could not run at all (its program missing or not executable): the machine's failure. */
  setup?: GateReport;
}

export async function runGateList(opts: GateListOptions): Promise<GateListVerdict> {
  const { run, phase } = opts;
  const before = opts.preexisting ?? new Map<string, GateSignature>();
  const excusedGate = (report: GateReport): boolean => {
    const head = before.get(report.gate);
    // A gate that could not run (its program missing) proves nothing either way: no baseline excuses it.
    return (
      !report.ok &&
      report.outcome !== 'setup' &&
      head !== undefined &&
      sameFailure(head, gateSignature(report, opts.cwd))
    );
  };
  const record = (report: GateReport): GateReport => {
    const preexisting = excusedGate(report) ? { preexisting: true } : {};
    run.emit({
      type: 'gate_result',
      adwId: run.adwId,
      ts: Date.now(),
      phase,
      gate: report.gate,
      ok: report.ok,
      motif: report.motif,
      seconds: report.seconds,
      ...preexisting,
    });
    return report;
  };
  const reports = [record(changedFilesExist({ changed_files: opts.changedFiles }, opts.cwd))];
  for (const cmd of opts.commands) {
    if (opts.signal.aborted) break;
    reports.push(
      record(
        await commandGate(cmd, {
          signal: opts.signal,
          runTag: run.adwId,
          env: opts.env,
          ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
        })({ changed_files: opts.changedFiles }),
      ),
    );
  }
  const excused = reports.filter(excusedGate).map((r) => r.gate);
  const held = reports.filter((r) => !excusedGate(r));
  const fixed = reports.filter((r) => r.ok && before.has(r.gate)).map((r) => r.gate);
  const setup = reports.find((r) => r.outcome === 'setup');
  return {
    reports,
    fixed,
    excused,
    motif: motif(held) || undefined,
    detail: correctionDetail(held),
    ...(setup ? { setup } : {}),
  };
}
