// The harness port: the single door to agents. Adapters (pi today, claude later) implement `Harness`.
import type { Activity } from '../events.js';
import type { WorkspacePaths } from '../paths.js';

export const SOCLE = ['factory-report', 'factory-inventory', 'damage-control', 'factory-obs', 'factory-guard'] as const;

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

export interface HarnessRequest {
  prompt: string;
  /** The folder the agent works in (resolved). */
  cwd: string;
  /** Where the ledger, sessions, schemas and traces of this workspace live. */
  workspace: WorkspacePaths;
  /** Continue this live session (retry / correction); a new id is chosen when absent. */
  sessionId?: string;
  /** Route as pi knows it (`provider/id`), already routed through the gateway. */
  model?: string;
  /** Route to relaunch on (same session) when the provider of `model` is down. */
  fallbackModel?: string;
  thinking?: string;
  tools?: string[];
  /** JSON Schema title and body of the envelope the typed gate accepts. */
  envelopeSchema: { title: string; schema: object };
  identity: PhaseIdentity;
  limits?: Limits;
  /** Whole-attempt deadline. */
  timeoutMs: number;
  /** No byte on stdout for this long → the watchdog ends the process group. */
  idleTimeoutMs: number;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  onActivity?: (activity: Activity) => void;
  onUsage?: (figures: { tokens: number; cost: number }) => void;
}

export interface HarnessResult {
  sessionId: string;
  /** The gate's envelope (a dict) when `report_phase` was called, else the final text. */
  payload: Record<string, unknown> | string;
  source: 'gate' | 'text';
  tokens: number;
  cost: number;
  model?: string;
  seconds: number;
  /** Set when the attempt finished on the fallback model. */
  fallback?: { from: string; reason: string };
}

export interface Harness {
  readonly name: string;
  run(request: HarnessRequest): Promise<HarnessResult>;
}
