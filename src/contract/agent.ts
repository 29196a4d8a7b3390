// The node contract as the factory's side speaks it: the socle every node must load, who a node is (identity),
// what bounds it (limits), the judged answer of one attempt or turn and the usage of each model call in it. It sits
// on the lowest floor: the pi client (json mode, RPC) fills and judges these shapes, the port (src/harness/)
// re-exports them to the engine, and the roster (limits), the trace and the spend forecast (call usage) read them.
import type { Activity } from './events.js';
import { SOCLE_NAMES } from '../../.pi/lib/contract.js';

export { NODE_ENV, REPORT_TOOL } from '../../.pi/lib/contract.js';

/** The socle, as the node contract names it (one list for both sides of the process boundary). */
export const SOCLE = SOCLE_NAMES;

export interface PhaseIdentity {
  adwId: string;
  phase: string;
  role: string;
}

export interface Limits {
  maxTurns?: number;
  maxToolCalls?: number;
  maxCostUsd?: number;
}

/** One attempt (or one turn of a live session) judged: the answer and what it cost. */
export interface AgentAnswer {
  sessionId: string;
  /** The gate's envelope (a dict) when `report_phase` was called, else the final text. */
  payload: Record<string, unknown> | string;
  source: 'gate' | 'text';
  tokens: number;
  cost: number;
  model?: string;
  seconds: number;
  /** Each model call's usage in this turn (what a spend forecast is reckoned from). */
  calls?: CallUsage[];
}

/** What one turn of a live session is told: where its progress goes and when it must end. */
export interface TurnOptions {
  onActivity?: (activity: Activity) => void;
  onUsage?: (figures: { tokens: number; cost: number }) => void;
  /** The model's answer has begun to stream (its first token), once per turn. */
  onAnswer?: () => void;
  /** Whole-turn deadline. */
  timeoutMs: number;
  /** No event from the agent for this long → the turn is aborted. */
  idleTimeoutMs: number;
  /** Aborting it ends the running turn (it then fails with kind `aborted`). */
  signal?: AbortSignal;
  /** The route the answer must come from; the session's current model when omitted. */
  requestedModel?: string;
}

/** One model call's tokens as pi's usage splits them: prompt (fresh, read from the cache, written to it), answer. */
export interface CallUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
}

/** How long a turn may stream nothing before it is stopped (`stalled`), unless the command says otherwise. */
export const DEFAULT_IDLE_TIMEOUT_MS = 3 * 60_000;
