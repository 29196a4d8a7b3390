// Headless output for CI and scripts: the runner's events as plain log lines on stderr, or (with --json) as
// one JSON object per line on stdout. The envelope itself is the caller's to print.
import { harvestReport, unverifiedReason } from '../bon/harvest/rank.js';
import { EVENT_SCHEMA_VERSION, type PhaseKind, type RunEvent } from '../contract/events.js';
import { spendLine } from '../bon/spend/lines.js';
import { formatCost, waitingLine } from '../contract/format.js';
import { EXIT } from '../contract/exit.js';

/** A stateful formatter (it remembers each phase's kind from the plan); returns the line for an event, if any. */
export function createLogFormatter(): (event: RunEvent) => string | undefined {
  const kinds = new Map<string, PhaseKind>();
  return (event) => {
    const tag = `[${event.adwId}]`;
    switch (event.type) {
      case 'run_started':
        for (const p of event.phases) kinds.set(p.name, p.kind);
        return `${tag} ${event.adwName} in ${event.cwd} — phases: ${event.phases.map((p) => p.name).join(' → ') || '(none)'}`;
      case 'attempt_started':
        return event.sessionId && event.attempt === 1
          ? `${tag} ${event.phase}: session ${event.sessionId}${event.model ? ` on ${event.model}` : ''}${event.modelFrom ? ` (${event.modelFrom})` : ''}`
          : undefined;
      case 'activity':
        if (event.activity.kind === 'retry')
          return `${tag} ${event.phase}: provider retry ${event.activity.attempt} — ${event.activity.message}`;
        // A code phase's note is the factory's own word (a swept worktree…); an agent's notes stay on the board.
        return event.activity.kind === 'note' && kinds.get(event.phase) === 'code'
          ? `${tag} ${event.phase}: ${event.activity.text}`
          : undefined;
      case 'attempt_failed':
        return `${tag} ${event.phase} (${kinds.get(event.phase) ?? 'agent'}, attempt ${event.attempt}/${event.attempts}): failed — ${event.motif}`;
      case 'phase_ok': {
        // An arm whose every gate was red on HEAD the same way ended, but nothing verified it: not "OK".
        const arm = event.result as { unverified?: unknown; excused?: string[] } | undefined;
        if (arm?.unverified === true)
          return `${tag} ${event.phase} (${event.kind}, attempt ${event.attempt}/${event.attempts}): unverified in ${event.seconds.toFixed(1)} s — ${unverifiedReason(arm)}`;
        return `${tag} ${event.phase} (${event.kind}, attempt ${event.attempt}/${event.attempts}): OK in ${event.seconds.toFixed(1)} s`;
      }
      case 'gate_result':
        if (!event.ok && event.preexisting)
          return `${tag} ${event.phase}: ✗ ${event.gate} (${event.seconds.toFixed(1)} s) — red on HEAD the same way: not held against it`;
        return `${tag} ${event.phase}: ${event.ok ? '✓' : '✗'} ${event.gate} (${event.seconds.toFixed(1)} s)${event.ok || !event.motif ? '' : ` — ${event.motif}`}`;
      case 'forecast':
      case 'spend':
      case 'race_stop':
      case 'baseline':
        return spendLine(tag, event);
      case 'phase_planned':
        return `${tag} ${event.phase.name} added (${event.phase.kind})`;
      case 'phase_waiting':
        return `${tag} ${event.phase}: ${waitingLine(event)}`;
      case 'arm_patch':
        return (
          `${tag} ${event.phase}: patch ${event.bytes} bytes, ${event.files.length} file(s) — ${event.patchFile}` +
          (event.strays ? `\n${tag} ${event.phase}: ended ${event.strays} process(es) its tools left running` : '')
        );
      case 'harvest':
        return harvestLines(tag, event).join('\n');
      case 'phase_failed':
        return event.attempts === 0 ? `${tag} ${event.phase}: ${event.motif}` : undefined;
      case 'apply':
        return `${tag} ${event.line}`;
      case 'fallback':
        return `${tag} ${event.phase}: fell back from ${event.from} to ${event.to}: ${event.reason} (same session)`;
      case 'run_finished':
        if (event.budget)
          return `${tag} BUDGET — ${event.budget} (cost ~${formatCost(event.cost)}); exit ${event.exit}`;
        if (event.interrupted)
          return `${tag} interrupted at phase ${event.failedPhase ?? '?'} — run stopped (cost so far ~${formatCost(event.cost)})`;
        if (event.exit === EXIT.green) return `${tag} run green — total cost ~${formatCost(event.cost)}`;
        return `${tag} FAILED at phase ${event.failedPhase ?? '?'} — run stopped`;
      default:
        return undefined;
    }
  };
}

/** The ranked table, the primer's account and the proposal, as the harvest prints them. */
export function harvestLines(tag: string, event: Extract<RunEvent, { type: 'harvest' }>): string[] {
  return harvestReport(event).map((line) => `${tag} ${line}`);
}

export interface HeadlessSink {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Wire a run's events to the headless outputs; each `--json` line names the event schema it follows. */
export function headlessListener(sink: HeadlessSink, json: boolean): (event: RunEvent) => void {
  if (json)
    return (event) => sink.stdout.write(`${JSON.stringify({ schemaVersion: EVENT_SCHEMA_VERSION, ...event })}\n`);
  const format = createLogFormatter();
  return (event) => {
    const line = format(event);
    if (line !== undefined) sink.stderr.write(`${line}\n`);
  };
}

/**
 * The headless front end: the log (or --json events) while the run executes; the lifecycle's ladder acts on the
 * run, and its first rung says so on stderr.
 */
export async function runHeadless(
  run: import('../engine/runner.js').Run,
  io: HeadlessSink,
  json: boolean,
  lifecycle: import('../lifecycle.js').Lifecycle,
  execute: () => Promise<number>,
): Promise<number> {
  run.subscribe(headlessListener(io, json));
  const detach = lifecycle.attach({
    abort: () => run.abort(),
    onRung: (rung) => {
      if (rung === 1) io.stderr.write(`[${run.adwId}] interrupt: aborting the running turn (again to quit at once)\n`);
    },
  });
  try {
    return await execute();
  } finally {
    detach();
  }
}
