// What every best-of-N turn shares, in place or in worktrees: the asks, the turn's options (live activity and
// usage onto the board), the end of a turn (what its tools left running is ended, what it changed under the
// user's .git is undone, earlier arms' sealed patches are put back), and the gates an arm is judged by.
import fs from 'node:fs';
import path from 'node:path';
import type { GateCommand } from '../gates/judges.js';
import type { GateListVerdict } from '../engine/payloadGates.js';
import type { AgentSession, TurnOptions } from '../harness/types.js';
import { InfrastructureError } from '../contract/errors.js';
import type { RunEvents } from '../engine/runEvents.js';
import type { SandboxSpec } from '../sandbox/wrap.js';
import { gitDirMotif } from './git/guard.js';
import { ownGitMotif } from './git/own.js';
import type { BonSession } from './session.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../contract/agent.js';

export function primerAsk(spec: string): string {
  return [
    `This turn is for reading only. Go through ${spec} from start to end, then every file it mentions and the payload's tests.`,
    'Create, edit or delete nothing, and run no command that changes the repository: the changes come in the next turns.',
    'Once you have read it all, report status "success" with changed_files: [] and, as the summary, your plan in five lines or fewer.',
  ].join('\n');
}

/**
 * The primer's answer as its envelope (the base one: it writes nothing); a refused one stops the batch. `envelopes`
 * is the module, its loading started with the turn so that it is there when the answer is.
 */
export async function primerEnvelope(payload: unknown, envelopes: Promise<typeof import('../envelope/envelopes.js')>) {
  const { parse, Envelope, EnvelopeError } = await envelopes;
  try {
    return parse(payload, Envelope);
  } catch (error) {
    if (error instanceof EnvelopeError)
      throw new InfrastructureError(`the primer's envelope was refused: ${error.message}`);
    throw error;
  }
}

/** The arm's ask: the mission only — the builder's brief reaches the node through factory-context. */
export function armAsk(spec: string): string {
  return `The spec ${spec} and the files it names are already in this conversation: do not read them again. Make the change the spec describes, no more, and get the payload's tests to pass.`;
}

export function turnOptions(
  session: BonSession,
  phase: string,
  signal: AbortSignal,
  requestedModel?: string,
): TurnOptions {
  const { run, opts } = session;
  session.gitWatch?.begin(phase);
  return {
    onActivity: (activity: Parameters<RunEvents['activity']>[1]) => {
      // A shell that ends may have reached the user's .git: checked now, the act is laid on the arm that did it.
      if (activity.kind === 'tool_start') session.gitWatch?.toolStart(phase, activity.tool);
      if (activity.kind === 'tool_end') session.gitWatch?.toolEnd(phase, activity.tool);
      run.activity(phase, activity);
      // A call its guards refused (damage-control, the sandbox): kept on the arm's record (./harvest/tried.ts).
      session.tried.see(phase, activity);
      // Nothing happened (the sandbox refused it), so the arm is not red for it, but the attempt is its own: said.
      if (activity.kind === 'tool_end' && activity.denied)
        run.activity(phase, { kind: 'note', text: `the sandbox refused a write outside its tree: ${activity.denied}` });
    },
    onUsage: ({ tokens, cost }: { tokens: number; cost: number }) => run.liveUsage(phase, tokens, cost),
    timeoutMs: opts.timeoutMs ?? 20 * 60_000,
    idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    signal,
    requestedModel,
  };
}

/** The primer's turn: its figures feed the spend watch (a run cap may stop it), and a stopped batch stops it. */
export function primerTurn(session: BonSession, model: string | undefined): TurnOptions {
  const { run } = session;
  return {
    ...turnOptions(session, 'prime', session.primerSignal(), model),
    onUsage: ({ tokens, cost }: { tokens: number; cost: number }) => {
      run.liveUsage('prime', tokens, cost);
      session.spend.primerUsage(cost);
    },
  };
}

/** The gates of one arm, in `cwd` (the user's tree in place, the arm's worktree otherwise) with `commands` mapped there. */
export async function runGates(
  session: BonSession,
  run: RunEvents,
  phase: string,
  changed: string[],
  signal: AbortSignal,
  where: { cwd: string; commands: GateCommand[]; env?: NodeJS.ProcessEnv; sandbox?: SandboxSpec } = {
    cwd: session.opts.cwd,
    commands: session.opts.payloadCommands,
  },
): Promise<GateListVerdict> {
  const { runGateList } = await import('../engine/payloadGates.js');
  // A gate red on HEAD the same way is not the arm's: judged once the baseline (beside the arms) is known.
  await session.baseline.settled();
  return runGateList({
    run,
    phase,
    cwd: where.cwd,
    changedFiles: changed,
    commands: where.commands,
    signal,
    env: where.env ?? session.opts.gateEnv,
    preexisting: session.baseline.preexisting,
    ...(where.sandbox ? { sandbox: where.sandbox } : {}),
  });
}

/**
 * The end of an agent's turn, before any gate, test runner or git of ours reads the repository: the processes
 * its tools left running are ended, and what it changed under `.git` is undone (./git/guard.ts).
 */
export interface TurnEnd {
  strays: number[];
  /** What it changed under .git, undone. */
  gitChanges: string[];
  /** Earlier arms' patches it rewrote, put back. */
  patchChanges: string[];
  /** What it planted in its own git (a worktree arm's, ./git/own.ts). */
  ownGitChanges?: string[];
  /** The user's branches and tags it made or moved in its own git: contained, named as tried (./git/own.ts). */
  refActs?: string[];
}

export const NOTHING_ENDED: TurnEnd = { strays: [], gitChanges: [], patchChanges: [] };

/** Ends the turn of `agent` (the session's live one by default). */
export async function endTurn(
  session: BonSession,
  run: RunEvents,
  agent: AgentSession | undefined = session.rpc,
): Promise<TurnEnd> {
  const strays = (await agent?.endToolProcesses().catch(() => [])) ?? [];
  // Arms at once each end their own turn: the acts laid on this arm; one agent at a time takes every act found.
  const arm = [...session.armAgents].find(([, a]) => a === agent)?.[0];
  const gitChanges = (await session.gitWatch?.endTurn(arm === undefined ? undefined : `arm_${arm}`)) ?? [];
  return { strays, gitChanges, patchChanges: restoreSealed(session) };
}

/** Why a turn that reached past its own work is red (one line), or undefined. */
export function trespass(end: TurnEnd): string | undefined {
  const parts: string[] = [];
  if (end.gitChanges.length > 0) parts.push(gitDirMotif(end.gitChanges));
  if (end.ownGitChanges && end.ownGitChanges.length > 0) parts.push(ownGitMotif(end.ownGitChanges));
  if (end.patchChanges.length > 0)
    parts.push(`it rewrote earlier arms' sealed patches (${end.patchChanges.join(', ')}): an agent may not; put back`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** The earlier arms' patches this turn rewrote or removed, each put back from its sealed bytes. */
function restoreSealed(session: BonSession): string[] {
  const changed: string[] = [];
  for (const { file, bytes } of session.sealed.values()) {
    let now: Buffer | undefined;
    try {
      now = fs.readFileSync(file);
    } catch {
      now = undefined;
    }
    if (now?.equals(bytes)) continue;
    changed.push(path.basename(file));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, bytes);
  }
  return changed;
}
