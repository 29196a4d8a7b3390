// How an arm is judged, in the user's tree or in its own worktree alike: its answer (the envelope, the status it
// reports, any reach past its own work, then its gates), a turn the harness could not finish, and the last word on
// a green arm (its patch must be one `git apply` accepts). The two modes differ in where the arm works and how its
// work is harvested, never in how it is judged.
import { HarnessError, firstLine, type FailureKind, PhaseFailure } from '../contract/errors.js';
import type { ArmRank } from '../contract/events.js';
import type { GateCommand } from '../gates/judges.js';
import type { SandboxSpec } from '../sandbox/wrap.js';
import type { AgentAnswer } from '../harness/types.js';
import type { RunEvents } from '../engine/runEvents.js';
import type { ArmOutcome } from './dispatch/port.js';
import type { BonSession } from './session.js';
import { runGates, trespass, type TurnEnd } from './turn.js';
import { stoppedBy } from './armTurn.js';

/**
 * An arm stopped by its batch (a cap, a race policy) says so, whatever its turn or gate answered on the way out:
 * "aborted", or a gate cut short, is how the stop looked from inside, not why it happened.
 */
export function stopVerdict(
  signal: AbortSignal,
  judged: { failure?: string; kind: FailureKind },
): { failure?: string; kind: FailureKind } {
  const order = stoppedBy(signal);
  if (!order || judged.failure === undefined || judged.kind === 'budget' || judged.kind === 'race') return judged;
  return { failure: order.motif, kind: order.kind };
}

/** A primer stopped by a cap or the deadline: the run's failure (exit 1, or 3 for a cap), not the installation's. */
export function primerStopped(session: BonSession, error: HarnessError): PhaseFailure | undefined {
  const kind = error.evidence.kind;
  if (kind !== 'budget' && kind !== 'race') return undefined;
  return new PhaseFailure(`the primer was stopped — ${session.batchStop?.motif ?? error.message}`, undefined, kind);
}
export interface ArmJudgement {
  /** Why the arm is red (a motif), or undefined while it is green. */
  failure?: string;
  kind: FailureKind;
  /** What the board shows under the motif (a gate's output tail). */
  detail?: string;
}

/** Where the gates run: the user's tree in place (the default), the arm's worktree otherwise. */
export interface GatePlace {
  cwd: string;
  commands: GateCommand[];
  env?: NodeJS.ProcessEnv;
  /** The arm's sandbox, in worktree mode on a machine that has one. */
  sandbox?: SandboxSpec;
}

/** The arm's answer judged, its figures in its rank (its phase charges them from its outcome). The gates run only on an envelope that is green so far. */
export async function judgeAnswer(
  session: BonSession,
  run: RunEvents,
  rank: ArmRank,
  answer: { result: AgentAnswer; ended: TurnEnd; signal: AbortSignal; gates?: GatePlace },
): Promise<ArmJudgement> {
  const { result, ended, signal, gates } = answer;
  rank.tokens = result.tokens;
  rank.cost = result.cost;
  const { parse, BuildEnvelope, EnvelopeError } = await import('../envelope/envelopes.js');
  let envelope;
  let failure: string | undefined;
  try {
    envelope = parse(result.payload, BuildEnvelope);
  } catch (error) {
    if (!(error instanceof EnvelopeError)) throw error;
    failure = `envelope refused: ${error.message}`;
  }
  if (envelope && envelope.status !== 'success')
    failure = `the arm reports a failure: ${JSON.stringify(envelope.summary)}`;
  // An arm that reached into .git (or rewrote another arm's patch) is red whatever its gates would say; they never run.
  failure = trespass(ended) ?? failure;
  if (!envelope || failure) return { failure, kind: 'verdict' };
  const verdict = await runGates(session, run, rank.phase, envelope.changed_files, signal, gates);
  // Red on HEAD already and green now: the arm's credit, said in its verdict.
  if (verdict.fixed.length > 0) rank.fixed = verdict.fixed;
  if (verdict.excused.length > 0) rank.excused = verdict.excused;
  // Every gate excused and none green: nothing verified this arm (a runner broken on HEAD proves nothing).
  if (verdict.motif === undefined && nothingVerified(verdict.reports, verdict.excused)) rank.unverified = true;
  return { failure: verdict.motif, kind: 'gate', detail: verdict.detail };
}

/**
 * Whether no gate verified the arm: at least one gate command ran, and every one was red on HEAD the same way (the
 * declared-files check proves nothing of the work). A gate that could not run is never excused: it is red.
 */
/** The declared-files check's gate name (../gates/judges.ts keeps it private): it checks the envelope, not the work. */
const CHANGED_FILES_GATE = 'changed_files';

export function nothingVerified(
  reports: ReadonlyArray<{ gate: string; ok: boolean }>,
  excused: readonly string[],
): boolean {
  const commands = reports.filter((r) => r.gate !== CHANGED_FILES_GATE);
  return commands.length > 0 && commands.every((r) => !r.ok && excused.includes(r.gate));
}

/** A turn the harness could not finish (aborted, crashed, a model error): what it cost, and its motif. */
export function harnessJudgement(rank: ArmRank, error: HarnessError): ArmJudgement {
  rank.tokens = error.evidence.tokens ?? 0;
  rank.cost = error.evidence.cost ?? 0;
  const kind = error.evidence.kind;
  // The prefix is for people reading the motif; the board reads the kind.
  const failure =
    kind === 'aborted' ? `aborted: ${error.message}` : kind === 'crashed' ? `crashed: ${error.message}` : error.message;
  return { failure, kind: kind ?? 'error' };
}

/**
 * The arm's end: a green arm whose patch no way of applying would accept (a symlink, a path out of the tree) cannot
 * win, so it is verified against the run's base commit in the user's repository; a red arm's outcome carries its
 * one-line motif, which its phase throws for the runner.
 */
export async function settleArm(
  session: BonSession,
  run: RunEvents,
  rank: ArmRank,
  judgement: ArmJudgement,
): Promise<ArmOutcome> {
  let failure = judgement.failure;
  if (!failure && rank.patchFile && rank.patchBytes > 0) {
    const { verifyPatch } = await import('./patch/apply.js');
    // Against the run's base commit, never the user's live tree: the user goes on working there while arms run,
    // and their edits are met at apply time, where the patch lands.
    const base = session.check?.head ?? 'HEAD';
    const verdict = await verifyPatch(session.opts.cwd, rank.patchFile, {
      sha256: rank.patchSha256,
      git: { env: session.opts.gateEnv, runTag: run.adwId },
      base,
    });
    if (!verdict.ok) failure = `its patch could never be applied — ${verdict.motif}`;
  }
  if (failure) {
    rank.motif = firstLine(failure);
    rank.failure = judgement.kind;
    session.settled.add(rank.arm);
    session.spend.armSettled(rank.arm, false, rank.cost);
    return {
      rank: { ...rank },
      failure: {
        motif: rank.motif,
        kind: judgement.kind,
        ...(judgement.detail !== undefined ? { detail: judgement.detail } : {}),
      },
    };
  }
  // An unverified arm ends its phase (its work is kept and ranked) but is not green: it counts for no race policy.
  rank.green = !rank.unverified;
  session.settled.add(rank.arm);
  session.spend.armSettled(rank.arm, rank.green, rank.cost);
  return { rank: { ...rank } };
}
