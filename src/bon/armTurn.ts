// One arm's work as turns of its live session, under the run's spend watch (./spend/watch.ts): every model call's figures
// are checked against the arm's cap and the run's; at 80 % the agent is steered to wrap up, at the cap its turn is
// aborted (RPC abort, verdict `budget`). Watched from the board, an arm at its cap pauses instead: a raise sends it
// on in the same session, where it stopped. Figures add up over the arm's turns: its cost is all it spent.
import { HarnessError, type StopOrder, stopOrderOf } from '../contract/errors.js';
import type { AgentAnswer, AgentSession, TurnOptions } from '../harness/types.js';
import type { RunEvents } from '../engine/runEvents.js';
import type { BonSession } from './session.js';

/** What an arm raised at its cap is told: the session holds its work so far. */
export const GO_ON_ASK =
  "Your budget was raised. Go on with the change from where you stopped (do not start over), get the payload's tests to pass, then report through report_phase.";

export async function promptArm(
  session: BonSession,
  run: RunEvents,
  arm: number,
  agent: AgentSession,
  ask: string,
  opts: TurnOptions & { signal: AbortSignal },
): Promise<AgentAnswer> {
  const phase = `arm_${arm}`;
  const armSignal = opts.signal;
  let before = { tokens: 0, cost: 0 };
  let message = ask;
  for (;;) {
    const cap = new AbortController();
    session.spend.begin(arm, {
      // A steer that pi refuses (the turn just ended) changes nothing: the cap still holds.
      steer: (text) => void agent.steer(text).catch(() => undefined),
      stop: (order) => cap.abort(order),
    });
    const base = before;
    const signal = AbortSignal.any([armSignal, cap.signal]);
    // Stopped while its node waits at the gate for room: the wait is refused, the node aborts before its request.
    const refuseWait = () => session.spend.release(session.nodeKey(arm), 'the attempt was stopped');
    signal.addEventListener('abort', refuseWait, { once: true });
    try {
      const result = await agent.prompt(message, {
        ...opts,
        signal,
        onUsage: ({ tokens, cost }) => {
          run.liveUsage(phase, base.tokens + tokens, base.cost + cost);
          session.spend.armUsage(arm, base.cost + cost);
        },
      });
      return { ...result, tokens: base.tokens + result.tokens, cost: base.cost + result.cost };
    } catch (error) {
      if (!(error instanceof HarnessError)) throw error;
      const spent = {
        tokens: base.tokens + (error.evidence.tokens ?? 0),
        cost: base.cost + (error.evidence.cost ?? 0),
      };
      const total = new HarnessError(error.message, error.sessionId, { ...error.evidence, ...spent });
      // Only the arm's own cap pauses it: a run cap, a race or the user's abort end it.
      if (error.evidence.kind !== 'budget' || armSignal.aborted) throw total;
      const raised = await pauseAtCap(session, run, arm, armSignal, spent.cost, session.spend.capOf(arm) ?? spent.cost);
      if (raised === undefined || armSignal.aborted) throw total;
      before = spent;
      message = GO_ON_ASK;
    } finally {
      signal.removeEventListener('abort', refuseWait);
      session.spend.end(arm);
      // What its node held or waited for at the gate goes back: a pi that died never gives it back itself.
      session.spend.release(session.nodeKey(arm));
    }
  }
}

/**
 * The arm reached its cap. Watched (the TUI), it pauses until the board raises its cap (resolves the new cap) or
 * ends it (undefined); headless, it ends at once. The pause is an event: the board shows it, the bell rings.
 */
async function pauseAtCap(
  session: BonSession,
  run: RunEvents,
  arm: number,
  signal: AbortSignal,
  spent: number,
  cap: number,
): Promise<number | undefined> {
  if (!session.watched || session.batchStop || run.interrupted) return undefined;
  const raised = new Promise<number | undefined>((resolve) => session.pauses.set(arm, resolve));
  const onAbort = () => session.pauses.get(arm)?.(undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  run.emit({
    type: 'spend',
    adwId: run.adwId,
    ts: Date.now(),
    phase: `arm_${arm}`,
    arm,
    kind: 'paused',
    spent,
    cap,
    scope: 'arm',
  });
  try {
    const cap2 = await raised;
    if (cap2 !== undefined) {
      session.spend.raise(arm, cap2);
      run.emit({
        type: 'spend',
        adwId: run.adwId,
        ts: Date.now(),
        phase: `arm_${arm}`,
        arm,
        kind: 'raised',
        spent,
        cap: cap2,
        scope: 'arm',
      });
    }
    return cap2;
  } finally {
    session.pauses.delete(arm);
    signal.removeEventListener('abort', onAbort);
  }
}

/** The order an arm's signal was stopped with (a cap, a race policy), if it was: its verdict then says so. */
export function stoppedBy(signal: AbortSignal): StopOrder | undefined {
  return signal.aborted ? stopOrderOf(signal.reason) : undefined;
}
