// Provider-outage fallback: when the provider is down (not when the key is bad, the turn was aborted, a tool
// failed or the watchdog fired), relaunch once on the fallback model in the SAME session, so the work done so
// far is kept. The relay is declared in the ledger like any start; both calls' tokens and cost add up.
import { HarnessError } from '../contract/errors.js';
import { addCosts, addCounts } from '../contract/numbers.js';
import type { HarnessRequest, HarnessResult } from './types.js';

const OUTAGE =
  /\b(429|500|502|503|504)\b|rate.?limit|too many requests|overloaded|capacity|unavailable|no endpoints|internal server error/i;
const BAD_KEY = /\b(401|403)\b|invalid api key|unauthori[sz]ed|forbidden/i;

/** The outage reason when `error` is a provider outage the fallback may answer, else undefined. */
export function outageReason(error: unknown): string | undefined {
  if (!(error instanceof HarnessError) || error.evidence.kind !== 'model_error') return undefined;
  const text = error.message;
  if (BAD_KEY.test(text) || !OUTAGE.test(text)) return undefined;
  return text.replace(/^model error:\s*/i, '');
}

export function fallbackAsk(reason: string): string {
  return `The provider of the previous model is down (${reason}). You now run on another model: continue the same mission from where it stopped.`;
}

/**
 * Run `attempt(request)`; on a provider outage, once more on `fallbackModel` in the same session. A fallback
 * equal to the failing route is ignored (it would fail the same way).
 */
export async function withFallback(
  request: HarnessRequest,
  attempt: (request: HarnessRequest, reason?: string) => Promise<HarnessResult>,
): Promise<HarnessResult> {
  try {
    return await attempt(request);
  } catch (error) {
    const reason = outageReason(error);
    const fallback = request.fallbackModel;
    if (reason === undefined || !fallback || fallback === request.model || request.signal?.aborted) throw error;
    const first = error as HarnessError;
    request.onActivity?.({
      kind: 'note',
      text: `provider down (${reason}) — relaunching on ${fallback} in the same session`,
    });
    request.onFallback?.({ from: request.model ?? '(default)', to: fallback, reason });
    const relay = { ...request, sessionId: first.sessionId, model: fallback, prompt: fallbackAsk(reason) };
    try {
      const result = await attempt(relay, 'fallback');
      return {
        ...result,
        tokens: addCounts(result.tokens, first.evidence.tokens),
        cost: addCosts(result.cost, first.evidence.cost),
        fallback: { from: request.model ?? '(default)', reason },
      };
    } catch (second) {
      if (second instanceof HarnessError) {
        throw new HarnessError(
          `${second.message} (after a fallback from ${request.model ?? 'the default model'}: ${reason})`,
          second.sessionId,
          {
            ...second.evidence,
            tokens: addCounts(second.evidence.tokens, first.evidence.tokens),
            cost: addCosts(second.evidence.cost, first.evidence.cost),
          },
        );
      }
      throw second;
    }
  }
}
