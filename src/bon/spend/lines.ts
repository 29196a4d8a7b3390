// The headless lines of best-of-N spend control: the forecast before the fan-out, a cap neared or reached, a race
// policy that ended the batch, the gates' baseline on HEAD. One place, so the log and `factory show` say it alike.
import type { RunEvent } from '../../contract/events.js';
import { formatCost } from '../../contract/format.js';
import { formatCap } from './watch.js';

type SpendEvent = Extract<RunEvent, { type: 'forecast' | 'spend' | 'race_stop' | 'baseline' }>;

/** What a forecast that waits for a yes is above: the run's cap first (it would stop the batch), else the threshold. */
export function forecastAbove(event: Pick<Extract<RunEvent, { type: 'forecast' }>, 'threshold' | 'cap'>): string {
  return event.cap !== undefined
    ? `above the run's cap ${formatCap(event.cap)} (--max-cost)`
    : `above bon.confirm_above ${formatCap(event.threshold ?? 0)}`;
}

export function forecastLine(event: Extract<RunEvent, { type: 'forecast' }>): string {
  const { forecast: f, confirm } = event;
  const arms = f.total.mid - f.primer;
  const range = `${formatCost(f.total.low - f.primer)}–${formatCost(f.total.high - f.primer)}`;
  const ask = confirm
    ? ` — ${forecastAbove(event)}: waits for a yes`
    : event.cap !== undefined
      ? ` — ${forecastAbove(event)}: --yes fans out all the same`
      : '';
  // What it went by: a repo's past arms are a measure, the primer alone a guess.
  const by =
    f.pastArms === undefined
      ? ''
      : f.pastArms > 0
        ? ` · by ${f.pastArms} past arm(s)`
        : ' · no past run: by the primer';
  return `forecast: ${f.arms} arm(s) ~${formatCost(arms)} (${range}) after the primer's ${formatCost(f.primer)}, run ~${formatCost(f.total.mid)}${by}${ask}`;
}

/**
 * What a baseline with a red gate means, said before the fan-out (the log, the board and `show` alike): an arm that
 * makes a gate red on HEAD green fixed it, one that fails it the same way is excused and not verified by it; a gate
 * that cannot run there stops the run. Undefined when every gate is green.
 */
export function baselineWarning(event: Pick<Extract<RunEvent, { type: 'baseline' }>, 'gates'>): string | undefined {
  const setup = event.gates.find((g) => g.setup);
  if (setup) return `it cannot run on HEAD: ${setup.motif ?? setup.gate}`;
  const red = event.gates.filter((g) => !g.ok);
  if (red.length === 0) return undefined;
  // A spec whose tests come first is red on HEAD by design: what is true, without alarm. The motif before the
  // explanation: a narrow board cuts the end of the line.
  const it = red.length === 1 ? 'it' : 'one';
  return `red on HEAD without any arm: ${red[0]!.motif ?? red[0]!.gate}${red.length > 1 ? ` (and ${red.length - 1} more)` : ''} — an arm that makes ${it} green fixed ${it}; one that fails ${it} the same way is excused, not verified`;
}

/** The baseline in one line (the log, `show` and the board alike): each gate's mark, then what a red one means. */
export function baselineLine(
  event: Pick<Extract<RunEvent, { type: 'baseline' }>, 'gates' | 'seconds'>,
  opts: { seconds?: boolean } = {},
): string {
  const gates = event.gates.map((g) => `${g.ok ? '✓' : '✗'} ${g.gate}`).join(' · ') || 'no gate';
  const warning = baselineWarning(event);
  return `baseline on HEAD${opts.seconds ? ` (${event.seconds.toFixed(1)} s)` : ''}: ${gates}${warning ? ` — ${warning}` : ''}`;
}

export function spendLine(tag: string, event: SpendEvent): string {
  switch (event.type) {
    case 'forecast':
      return `${tag} ${forecastLine(event)}`;
    case 'race_stop':
      return `${tag} ${event.motif}: the arms still at work stop, the harvest ranks what exists`;
    case 'baseline':
      return `${tag} ${baselineLine(event, { seconds: true })}`;
    case 'spend': {
      const who = event.scope === 'run' ? 'the run' : (event.phase ?? 'an arm');
      const figures = `${formatCost(event.spent)} of ${formatCap(event.cap)}`;
      switch (event.kind) {
        case 'wrap_up':
          return `${tag} ${who}: ${figures} spent (80 % of the cap): ${event.scope === 'run' ? 'every arm at work is' : 'the agent is'} told to wrap up`;
        case 'capped':
          return `${tag} ${who}: ${event.motif ?? `${figures}: cap reached`}`;
        case 'paused':
          return `${tag} ${who}: paused at its cap (${figures}) — + on the board gives it as much again, a ends it`;
        case 'raised':
          return `${tag} ${who}: cap raised to ${formatCap(event.cap)}; it goes on in its session`;
      }
    }
  }
}
