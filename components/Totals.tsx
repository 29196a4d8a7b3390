// Run totals, always visible: cost, tokens, elapsed; once the run is over, its outcome and exit code.

import { Text } from 'ink';
import { elapsedSeconds, type RunState } from '../state/run/store.js';
import { formatCost, formatSeconds, formatTokens } from '../src/contract/format.js';
import { EXIT } from '../src/contract/exit.js';

export interface Outcome {
  text: string;
  color: string;
}

export function outcomeOf(run: Pick<RunState, 'exit' | 'failedPhase' | 'interrupted'>): Outcome | undefined {
  if (run.exit === undefined) return undefined;
  if (run.interrupted) return { text: `interrupted (exit ${run.exit})`, color: 'yellow' };
  if (run.exit === EXIT.green) return { text: `run green (exit ${EXIT.green})`, color: 'green' };
  // A spend cap stopped it — out of money, not broken (`factory runs` lists it `budget` too).
  if (run.exit === EXIT.budget) return { text: `BUDGET (exit ${EXIT.budget})`, color: 'yellow' };
  const where = run.failedPhase ? ` at ${run.failedPhase}` : '';
  return { text: `FAILED${where} (exit ${run.exit})`, color: 'red' };
}

export function Totals({
  run,
  now,
}: {
  run: Pick<RunState, 'totals' | 'exit' | 'failedPhase' | 'interrupted'>;
  now: number;
}) {
  const outcome = outcomeOf(run);
  const figures = `cost ${formatCost(run.totals.cost)} · tokens ${formatTokens(run.totals.tokens)} · elapsed ${formatSeconds(elapsedSeconds(run.totals, now))}`;
  return (
    <Text wrap="truncate-end">
      <Text bold>{figures}</Text>
      {outcome ? <Text color={outcome.color}>{`  ${outcome.text}`}</Text> : null}
    </Text>
  );
}
