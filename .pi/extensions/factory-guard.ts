// factory-guard: the circuit breaker. Counts turns, tool calls and cost per session against the
// limits the core put in the environment (FACTORY_MAX_TURNS, FACTORY_MAX_TOOL_CALLS,
// FACTORY_MAX_COST_USD; absent = unlimited). When a limit is exceeded it trips: the agent is aborted
// (the run ends with stopReason "aborted", which the core reports with the session) and every later
// tool call of the session is blocked with the same reason. Counters restart at every session_start
// (a clone or a switch is a new arm, judged afresh). It also keeps pi's prompt-cache warming out of factory nodes
// (see cacheWarmingDecision), and puts a best-of-N node behind the run's spend gate (../lib/spend-gate.ts).
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent';
import { joinSocle } from '../lib/socle.js';
import { installSpendGate } from '../lib/spend-gate.js';

export const EXTENSION_NAME = 'factory-guard';

export interface Limits {
  maxTurns?: number;
  maxToolCalls?: number;
  maxCostUsd?: number;
}

export interface GuardState {
  turns: number;
  toolCalls: number;
  costUsd: number;
  /** Why the breaker tripped; null while closed. */
  tripped: string | null;
}

export type GuardEvent = { kind: 'turn' } | { kind: 'tool_call' } | { kind: 'cost'; usd: number };

export type GuardVerdict =
  | { action: 'continue' }
  /** This event tripped the breaker: abort the agent (and block the call, for a tool call). */
  | { action: 'trip'; reason: string }
  /** Already tripped: block the call, nothing more to abort. */
  | { action: 'blocked'; reason: string };

export const freshState = (): GuardState => ({ turns: 0, toolCalls: 0, costUsd: 0, tripped: null });

function parseLimit(name: string, raw: string | undefined, integer: boolean): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    // A limit that cannot be read must not silently become "unlimited": pi stops at load instead.
    throw new Error(
      `${EXTENSION_NAME}: ${name} must be a non-negative ${integer ? 'integer' : 'number'}, got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

export function readLimits(env: NodeJS.ProcessEnv): Limits {
  const limits: Limits = {};
  const turns = parseLimit('FACTORY_MAX_TURNS', env.FACTORY_MAX_TURNS, true);
  const tools = parseLimit('FACTORY_MAX_TOOL_CALLS', env.FACTORY_MAX_TOOL_CALLS, true);
  const cost = parseLimit('FACTORY_MAX_COST_USD', env.FACTORY_MAX_COST_USD, false);
  if (turns !== undefined) limits.maxTurns = turns;
  if (tools !== undefined) limits.maxToolCalls = tools;
  if (cost !== undefined) limits.maxCostUsd = cost;
  return limits;
}

/** One event through the breaker, pure: the next state and what pi must do. */
export function guardStep(
  state: GuardState,
  limits: Limits,
  event: GuardEvent,
): { state: GuardState; verdict: GuardVerdict } {
  if (state.tripped) {
    return {
      state,
      verdict: event.kind === 'tool_call' ? { action: 'blocked', reason: state.tripped } : { action: 'continue' },
    };
  }
  const next = { ...state };
  let reason: string | null = null;
  if (event.kind === 'turn') {
    next.turns += 1;
    if (limits.maxTurns !== undefined && next.turns > limits.maxTurns) {
      reason = `turn limit reached: ${limits.maxTurns} turn(s) allowed (FACTORY_MAX_TURNS)`;
    }
  } else if (event.kind === 'tool_call') {
    next.toolCalls += 1;
    if (limits.maxToolCalls !== undefined && next.toolCalls > limits.maxToolCalls) {
      reason = `tool call limit reached: ${limits.maxToolCalls} call(s) allowed (FACTORY_MAX_TOOL_CALLS)`;
    }
  } else {
    next.costUsd += Number.isFinite(event.usd) ? event.usd : 0;
    if (limits.maxCostUsd !== undefined && next.costUsd > limits.maxCostUsd) {
      reason = `cost limit reached: $${next.costUsd.toFixed(4)} spent, $${limits.maxCostUsd} allowed (FACTORY_MAX_COST_USD)`;
    }
  }
  if (reason === null) return { state: next, verdict: { action: 'continue' } };
  const full = `factory-guard tripped — ${reason}; the agent is stopped`;
  return { state: { ...next, tripped: full }, verdict: { action: 'trip', reason: full } };
}

/**
 * pi ≥ 0.86 re-sends the last request to keep a provider's prompt cache warm, during long tool runs and (default
 * "idle" from 1.5.1) for up to 30 min between RPC turns: the best-of-N primer and arms. That spend goes to `usage`
 * session entries, never to a `message_end`, so the factory's cost of an attempt would miss it and its limits would
 * not see it; and `cacheWarming` is a global-only setting, so this veto is the one per-run switch. Only in a factory
 * node (FACTORY_PHASE set): the same extension in the user's own interactive pi leaves pi's choice alone.
 */
export function cacheWarmingDecision(env: NodeJS.ProcessEnv): { action: 'stop' } | undefined {
  return env.FACTORY_PHASE ? { action: 'stop' } : undefined;
}

/** `pi.on` for an event the pinned SDK types (0.85) do not know; pi 0.85 never emits it, so the handler is inert there. */
type OnNewerEvent = (event: 'cache_warming_decision', handler: () => { action: 'stop' } | undefined) => void;

// ---------------------------------------------------------------------------------------------

/** The custom entry that puts the trip reason in the stream (`entry_appended`), next to pi's own abort. */
export const TRIP_ENTRY = 'factory-guard';

export default function factoryGuard(pi: ExtensionAPI): void {
  const limits = readLimits(process.env);
  let state = freshState();
  // A tool call that trips is blocked at once (its reason reaches the model and the stream), but the
  // abort waits for turn_end: aborting inside tool_call would make pi replace that reason with a bare
  // "Operation aborted".
  let abortAtTurnEnd = false;

  const step = (event: GuardEvent): GuardVerdict => {
    const result = guardStep(state, limits, event);
    state = result.state;
    if (result.verdict.action === 'trip') {
      pi.appendEntry(TRIP_ENTRY, {
        reason: result.verdict.reason,
        turns: state.turns,
        tool_calls: state.toolCalls,
        cost_usd: state.costUsd,
        limits,
      });
    }
    return result.verdict;
  };

  pi.on('session_start', () => {
    state = freshState();
    abortAtTurnEnd = false;
  });
  pi.on('turn_start', (_event, ctx) => {
    // Aborting here stops the turn before its model request: no tokens are spent past the limit.
    if (step({ kind: 'turn' }).action === 'trip') ctx.abort();
  });
  pi.on('tool_call', () => {
    const verdict = step({ kind: 'tool_call' });
    if (verdict.action === 'continue') return undefined;
    if (verdict.action === 'trip') abortAtTurnEnd = true;
    return { block: true, reason: verdict.reason };
  });
  pi.on('message_end', (event) => {
    const message = event.message as { role?: string; usage?: { cost?: { total?: number } } };
    if (message.role !== 'assistant') return;
    // Over budget: the tool calls of this message are blocked (tripped state), the turn ends, then abort.
    if (step({ kind: 'cost', usd: message.usage?.cost?.total ?? 0 }).action === 'trip') abortAtTurnEnd = true;
  });
  // Only a tool-call or cost trip defers its abort to turn_end, so the handler exists only with those limits: from
  // 0.87 turn_end is an actionable boundary, and on 1.6 a node with any turn_end handler was seen to drop its
  // prompt-cache run ("context changed"). The veto below must not depend on that side effect.
  if (limits.maxToolCalls !== undefined || limits.maxCostUsd !== undefined) {
    pi.on('turn_end', (_event, ctx) => {
      if (!abortAtTurnEnd) return;
      abortAtTurnEnd = false;
      ctx.abort();
    });
  }
  (pi.on as unknown as OnNewerEvent)('cache_warming_decision', () => cacheWarmingDecision(process.env));
  // A best-of-N node takes each model call from the run's shared budget, and no tool once the batch stopped.
  installSpendGate(pi as unknown as Parameters<typeof installSpendGate>[0], process.env);

  joinSocle(EXTENSION_NAME);
}
