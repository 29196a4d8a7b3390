// The harness port: the single door to agents. Adapters (pi, claude) implement `Harness`; one that keeps a process
// between turns (pi in RPC mode) also offers live sessions (`openSession`). The node contract's words (socle,
// identity, limits, the judged answer) live below, with the pi client that speaks them; the port re-exports them.
import type { Activity } from '../contract/events.js';
import type { WorkspacePaths } from '../config/paths.js';
import type { SandboxSpec } from '../sandbox/wrap.js';
import type { AgentAnswer, Limits, PhaseIdentity, TurnOptions } from '../contract/agent.js';

export { SOCLE, type AgentAnswer, type Limits, type PhaseIdentity, type TurnOptions } from '../contract/agent.js';

/** A model's prices in dollars per million tokens, as pi's model registry has them. */
export interface ModelPrices {
  input: number;
  output: number;
  cacheRead: number;
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
  /** The provider was down and the attempt relaunches on the fallback model (the same session). */
  onFallback?: (fallback: { from: string; to: string; reason: string }) => void;
}

export interface HarnessResult extends AgentAnswer {
  /** Set when the attempt finished on the fallback model. */
  fallback?: { from: string; reason: string };
}

export interface Harness {
  readonly name: string;
  run(request: HarnessRequest): Promise<HarnessResult>;
  /** A live session (one process kept between turns, clones of it); only some harnesses have it. */
  openSession?(request: SessionRequest): Promise<AgentSession>;
}

/** A harness that offers live sessions (pi, in RPC mode). */
export type LiveHarness = Harness & Required<Pick<Harness, 'openSession'>>;

/** What opening a live session takes: a request's launch fields, the first session's id chosen by the caller. */
export type SessionRequest = Pick<
  HarnessRequest,
  'cwd' | 'workspace' | 'model' | 'thinking' | 'tools' | 'envelopeSchema' | 'identity' | 'limits' | 'env'
> & {
  /** Declared in the ledger before the process starts. */
  sessionId: string;
  /**
   * Start as a fork of this session file (a best-of-N arm of its primer, in the arm's own worktree as `cwd`). The
   * fork is checked before any turn: the declared id, `cwd` in its header, `messageCount` messages.
   */
  fork?: { from: string; messageCount: number };
  /** Run the session's process in this OS sandbox (a best-of-N arm in its own tree). */
  sandbox?: SandboxSpec;
};

/**
 * The session capability of the port: open → prompt / clone / switch session or model → close. A turn is aborted
 * through its own signal (TurnOptions.signal). Every failure is a HarnessError naming the session.
 */
export interface AgentSession {
  /** The current session: the one the next prompt goes to. */
  readonly sessionId: string;
  /** The current route (`provider/id`): the one opened with, or the last `switchModel`. */
  readonly model: string | undefined;
  /** False once the process is gone (it died, or was closed). */
  readonly alive: boolean;
  /** The agent process (what a test kills to see a crash handled). */
  readonly pid: number;
  /** One prompt in the current session, judged like an attempt; tokens and cost are this turn's own. */
  prompt(message: string, opts: TurnOptions): Promise<AgentAnswer>;
  /** A new session holding every message of the current one, made current and declared in the ledger. */
  clone(opts?: { phase?: string; model?: string }): Promise<{ sessionId: string; sessionFile: string }>;
  /** The current session's file (to come back to it with `switchSession`). */
  sessionFile(): Promise<string | undefined>;
  /** How many messages the current session holds (what a fork of it must hold). */
  messageCount(): Promise<number>;
  /** Makes the session stored in this file current; answers the id it landed on. */
  switchSession(sessionFile: string): Promise<{ sessionId: string }>;
  /** The current session goes on with another route (`provider/id`). */
  switchModel(route: string): Promise<void>;
  /** A word into the running turn (pi `steer`): delivered before the agent's next model call. */
  steer(message: string): Promise<void>;
  /** Prices per million tokens of the routes pi offers (`provider/id` → input, output, cached input). */
  prices(): Promise<Map<string, ModelPrices>>;
  /** Ends the process (a running turn is aborted first). Idempotent, safe in a finally. */
  close(): Promise<void>;
  /**
   * Ends every process the agent's tools started and left running (background jobs, `setsid` daemons and
   * their children), the agent itself excepted; resolves with their pids once they are gone.
   */
  endToolProcesses(): Promise<number[]>;
}
