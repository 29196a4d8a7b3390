// Headless output for CI and scripts: the runner's events as plain log lines on stderr, or (with --json) as
// one JSON object per line on stdout. The envelope itself is the caller's to print.
import type { PhaseKind, RunEvent } from './events.js';

export function formatCost(cost: number): string {
  return cost.toFixed(4);
}

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
          ? `${tag} ${event.phase}: session ${event.sessionId}${event.model ? ` on ${event.model}` : ''}`
          : undefined;
      case 'activity':
        return event.activity.kind === 'retry' ? `${tag} ${event.phase}: provider retry ${event.activity.attempt} — ${event.activity.message}` : undefined;
      case 'attempt_failed':
        return `${tag} ${event.phase} (${kinds.get(event.phase) ?? 'agent'}, attempt ${event.attempt}/${event.attempts}): failed — ${event.motif}`;
      case 'phase_ok':
        return `${tag} ${event.phase} (${event.kind}, attempt ${event.attempt}/${event.attempts}): OK in ${event.seconds.toFixed(1)} s`;
      case 'gate_result':
        return `${tag} ${event.phase}: ${event.ok ? '✓' : '✗'} ${event.gate} (${event.seconds.toFixed(1)} s)${event.ok || !event.motif ? '' : ` — ${event.motif}`}`;
      case 'phase_failed':
        return event.attempts === 0 ? `${tag} ${event.phase}: ${event.motif}` : undefined;
      case 'run_finished':
        if (event.interrupted) return `${tag} interrupted at phase ${event.failedPhase ?? '?'} — run stopped (cost so far ~${formatCost(event.cost)} $)`;
        if (event.exit === 0) return `${tag} run green — total cost ~${formatCost(event.cost)} $`;
        return `${tag} FAILED at phase ${event.failedPhase ?? '?'} — run stopped`;
      default:
        return undefined;
    }
  };
}

export interface HeadlessSink {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Wire a run's events to the headless outputs. */
export function headlessListener(sink: HeadlessSink, json: boolean): (event: RunEvent) => void {
  if (json) return (event) => sink.stdout.write(`${JSON.stringify(event)}\n`);
  const format = createLogFormatter();
  return (event) => {
    const line = format(event);
    if (line !== undefined) sink.stderr.write(`${line}\n`);
  };
}
