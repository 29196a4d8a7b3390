// What a `pi --mode rpc` process of the factory is opened with (./rpc.ts): the pi, the folder, the session declared
// before the spawn, the environment, the identity its node reports, the envelope's schema, the checks of a fork.
import type { WorkspacePaths } from '../config/paths.js';
import type { Limits, PhaseIdentity } from '../contract/agent.js';
import type { SandboxSpec } from '../sandbox/wrap.js';
import type { PiFlags } from './argv.js';
import type { PiCommand } from './piCommand.js';
import type { RpcState } from './rpcProtocol.js';

export interface PiRpcOptions {
  pi: PiCommand;
  cwd: string;
  workspace: WorkspacePaths;
  /** `sessionId` is the primer's (chosen by the caller, declared before the spawn). */
  flags: PiFlags;
  env?: NodeJS.ProcessEnv;
  identity: PhaseIdentity;
  envelopeSchema: { title: string; schema: object };
  /** FACTORY_RUN_TAG of the process (the adw id), so a test can prove nothing is left. */
  runTag?: string;
  limits?: Limits;
  openTimeoutMs?: number;
  /** Why this session exists beyond the first (`fork`), for the ledger. */
  reason?: string;
  /** Checks the session pi opened (a fork's header and size) before any turn: a motif refuses it (kind `fork`). */
  verifyOpen?: (state: RpcState) => string | undefined;
  sandbox?: SandboxSpec; // pi in this OS sandbox (a best-of-N arm in its own tree)
}
