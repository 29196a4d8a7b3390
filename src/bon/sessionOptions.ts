// What a best-of-N run is started with (./session.ts): the harness, the arms and their routes, where they work,
// their gates, caps and judge; the tools an arm has. Read by the session and by the command that builds it.
import type { WorkspacePaths } from '../config/paths.js';
import type { GateCommand } from '../gates/judges.js';
import type { Harness, Limits, LiveHarness } from '../harness/types.js';
import type { Sandbox } from '../sandbox/policy.js';
import type { BonPolicy } from './spend/watch.js';

export const BON_TOOLS = ['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls'];

export interface BonAdwOptions {
  specPath: string;
  arms: number;
  /** Route per arm (arm k takes models[(k-1) % length]); the builder's route when empty. */
  models: string[];
  /** The harness whose live sessions the primer and the arms run in. */
  harness: LiveHarness;
  workspace: WorkspacePaths;
  cwd: string;
  builderModel?: string;
  thinking?: string;
  tools?: string[];
  limits?: Limits;
  payloadCommands: GateCommand[];
  /** The agent's environment (vault rule applied); gates and git get `gateEnv`. */
  env?: NodeJS.ProcessEnv;
  gateEnv?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  /**
   * Where the arms work: each in its own worktree, forked from the primer, up to `concurrency` at once (default),
   * or one after another in the user's tree, which is reset after each (`inPlace`).
   */
  inPlace?: boolean;
  concurrency?: number;
  /** The OS sandbox the worktree arms' pi, gates and setup run in (../sandbox/); absent: `--unsandboxed` or in place. */
  sandbox?: Sandbox;
  /** `payload.setup`: run in each arm's worktree before the arm starts (an install); a red setup makes the arm red. */
  setup?: GateCommand;
  /** Caps and race policies (./spend/watch.ts). */
  policy?: BonPolicy;
  /** The judge (./judge.ts): once the arms are in, an agent orders the green ones; absent, the code ranks alone. */
  judge?: JudgeSetup;
}

/** How the judge runs (./judge.ts): its own role's route, tools and limits (json mode, one process per attempt). */
export interface JudgeSetup {
  harness: Harness;
  model?: string;
  thinking?: string;
  tools?: string[];
  limits?: Limits;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  retries: number;
}
