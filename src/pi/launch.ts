// The one launch step of an agent process, in this order: the resume check (a session continues only in the
// folder it was born in), the caller's preparation (argv, the gate's schema, the env — a bad flag or a roster the
// agent cannot honour throws here, before the ledger hears of it), the ledger line, the supervised spawn.
// json mode and RPC mode go through `launchPi`; the claude adapter through `launchAgent` with its own preparation.
import fs from 'node:fs';
import path from 'node:path';
import { HarnessError } from '../contract/errors.js';
import { declareSession, resumeRequiresCwd } from '../trace/ledger.js';
import type { WorkspacePaths } from '../config/paths.js';
import { spawnSupervised, type SupervisedChild } from '../process/supervisor.js';
import { jsonModeArgs, rpcModeArgs, type PiFlags } from './argv.js';
import { NODE_ENV, SOCLE, type Limits, type PhaseIdentity } from '../contract/agent.js';
import type { PiCommand } from './piCommand.js';
import { nodeExtensionFiles } from './node.js';
import { piAcceptsNoMcp } from './piVersion.js';
import { factoryRoot } from './resolve.js';
import { wrapCommand, type SandboxSpec } from '../sandbox/wrap.js';

const STDERR_TAIL_BYTES = 8 * 1024;

export interface NodeRequest {
  env?: NodeJS.ProcessEnv;
  identity: PhaseIdentity;
  workspace: WorkspacePaths;
  limits?: Limits;
}

/** Environment of the node: identity, limits and the gate's schema travel here, never in the prompt. */
export function nodeEnv(request: NodeRequest, schemaFile: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...(request.env ?? process.env),
    [NODE_ENV.envelopeSchema]: schemaFile,
    [NODE_ENV.expected]: SOCLE.join(','),
    [NODE_ENV.phase]: request.identity.phase,
    [NODE_ENV.role]: request.identity.role,
    [NODE_ENV.adwId]: request.identity.adwId,
    [NODE_ENV.dataDir]: request.workspace.dataDir,
  };
  const { limits } = request;
  if (limits?.maxTurns !== undefined) env[NODE_ENV.maxTurns] = String(limits.maxTurns);
  if (limits?.maxToolCalls !== undefined) env[NODE_ENV.maxToolCalls] = String(limits.maxToolCalls);
  if (limits?.maxCostUsd !== undefined) env[NODE_ENV.maxCostUsd] = String(limits.maxCostUsd);
  return env;
}

export function writeSchemaFile(schemasDir: string, title: string, schema: object): string {
  if (!/^[A-Za-z0-9_-]+$/.test(title)) throw new Error(`envelope title is not a safe file name: ${title}`);
  fs.mkdirSync(schemasDir, { recursive: true });
  const file = path.join(schemasDir, `${title}.json`);
  fs.writeFileSync(file, `${JSON.stringify(schema, null, 2)}\n`);
  return file;
}

/** The end of a child's stderr, bounded: evidence for a one-line motif without buffering it all. */
export class StderrTail {
  private buf = '';
  push(chunk: Buffer | string): void {
    this.buf += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (this.buf.length > STDERR_TAIL_BYTES * 2) this.buf = this.buf.slice(-STDERR_TAIL_BYTES);
  }
  get text(): string {
    return this.buf.slice(-STDERR_TAIL_BYTES);
  }
}

export interface LaunchSpec {
  /** Who starts ("pi", "claude"), for the motif of an interrupt that came first. */
  agent: string;
  sessionId: string;
  /** The folder the agent works in (resolved). */
  cwd: string;
  workspace: WorkspacePaths;
  identity: PhaseIdentity;
  /** The route declared in the ledger. */
  model?: string;
  /** Why this start exists beyond the first (e.g. "fallback"), for the ledger. */
  reason?: string;
  /** Already aborted → refused before anything is written. */
  signal?: AbortSignal;
  /** FACTORY_RUN_TAG of the process (the adw id), so a test can prove nothing is left. */
  runTag?: string;
  /** Run the agent inside this OS sandbox (../sandbox/): a best-of-N arm's pi writes only its own tree. */
  sandbox?: SandboxSpec;
}

export interface Prepared {
  command: string;
  argv: string[];
  env: NodeJS.ProcessEnv;
}

/** Resume check → `prepare()` → ledger line → supervised spawn. Every refusal is a HarnessError naming the session. */
export function launchAgent(spec: LaunchSpec, prepare: () => Prepared): SupervisedChild {
  const { workspace: paths, sessionId, cwd } = spec;
  const resume = resumeRequiresCwd(sessionId, cwd, { ledgerFile: paths.ledgerFile, sessionDir: paths.sessionsDir });
  if (!resume.allowed) throw new HarnessError(`resume refused: ${resume.motif}`, sessionId, { kind: 'resume' });
  if (spec.signal?.aborted)
    throw new HarnessError(`interrupted before ${spec.agent} started`, sessionId, { kind: 'aborted' });
  const { command, argv, env } = prepare();
  declareSession(paths.ledgerFile, {
    sessionId,
    cwd,
    model: spec.model,
    phase: spec.identity.phase,
    adwId: spec.identity.adwId,
    reason: spec.reason,
  });
  if (!spec.sandbox) return spawnSupervised(command, argv, { cwd, env, runTag: spec.runTag });
  const wrapped = wrapCommand(spec.sandbox, command, argv);
  return spawnSupervised(wrapped.command, wrapped.args, { cwd, env, runTag: spec.runTag, wrappers: wrapped.wrappers });
}

export interface PiLaunch extends NodeRequest, Omit<LaunchSpec, 'agent' | 'sessionId' | 'model'> {
  pi: PiCommand;
  mode: 'json' | 'rpc';
  /** The session (its id, chosen by the caller) and the route come from here. */
  flags: PiFlags;
  envelopeSchema: { title: string; schema: object };
}

/** A pi process in json or RPC mode, launched by the one step above with the node env and the gate's schema. */
export function launchPi(launch: PiLaunch): SupervisedChild {
  const { pi, flags } = launch;
  return launchAgent({ ...launch, agent: 'pi', sessionId: flags.sessionId, model: flags.model }, () => {
    // --no-mcp only for a pi known (from its package.json or an earlier checkPi, without a spawn) to take it.
    // The node comes from the running cockpit's own folder unless the project loads it itself: a committed
    // `.pi/settings.json` never needs this machine's install path.
    const modeFlags = {
      noMcp: piAcceptsNoMcp(pi),
      extensions: nodeExtensionFiles(launch.cwd, factoryRoot()),
      ...flags,
    };
    const argv = [...pi.prefixArgs, ...(launch.mode === 'json' ? jsonModeArgs(modeFlags) : rpcModeArgs(modeFlags))];
    const schemaFile = writeSchemaFile(
      launch.workspace.schemasDir,
      launch.envelopeSchema.title,
      launch.envelopeSchema.schema,
    );
    return { command: pi.command, argv, env: nodeEnv(launch, schemaFile) };
  });
}
