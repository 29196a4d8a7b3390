// One best-of-N arm and one primer, written once. Where they work is their place: a worktree of their own with a
// pi process of their own, the arms at once (the default, ./treeArms.ts), or the user's tree with clones of one live
// session, one arm after another (--in-place, ./inPlace.ts). The skeleton is the same in both: the batch's stop
// checked first, the agent started from the primer, the turn, its end (what it left running, what it did to git),
// the judgement (envelope, gates), the harvest of its work as a patch, the verdict.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { envelopeCard, loadEnvelopes } from '../envelope/catalog.js';
import { errorMessage, HarnessError, InfrastructureError, type FailureKind, PhaseFailure } from '../contract/errors.js';
import type { ArmRank } from '../contract/events.js';
import type { Phase, Run } from '../engine/runner.js';
import type { RunEvents } from '../engine/runEvents.js';
import type { AgentAnswer, AgentSession, TurnOptions } from '../harness/types.js';
import type { Harvest } from './patch/patch.js';
import { MAX_ARMS } from './check.js';
import type { BonSession } from './session.js';
import { armAsk, endTurn, primerAsk, primerEnvelope, primerTurn, trespass, turnOptions, type TurnEnd } from './turn.js';
import { harnessJudgement, judgeAnswer, primerStopped, settleArm, stopVerdict, type GatePlace } from './armVerdict.js';
import { promptArm, stoppedBy } from './armTurn.js';
import { armSpec, type ArmDispatcher, type ArmOutcome, type ArmSpec } from './dispatch/port.js';

/** Where one arm works, and how its agent starts and ends there. */
export interface ArmPlace {
  /** Its tree made ready (a worktree, the setup); the user's tree needs nothing. */
  prepare(): Promise<void>;
  /** Its agent, started from the primer's session; `started` is told the session id as the attempt begins. */
  open(started: (sessionId: string) => void): Promise<AgentSession>;
  /** Before its first request (it may wait for another arm's first token); returns what its first answer calls. */
  ready(agent: AgentSession): Promise<(() => void) | undefined>;
  /** Its turn's end: what it left running, what it did to the user's git or to its own. */
  endTurn(agent: AgentSession): Promise<TurnEnd>;
  /** The same, whatever happened to the turn (the finally of the arm); `turnEnded` once `endTurn` answered. */
  lateEnd(agent: AgentSession | undefined, turnEnded: boolean): Promise<TurnEnd>;
  /** Where its gates run (undefined: where the roster wrote them, in the user's tree). */
  gates(): GatePlace | undefined;
  /** Its agent let go: its own process ends; the shared live session stays. */
  release(agent: AgentSession | undefined): Promise<void>;
  /** Its work as a patch, its tree put back or removed; a failure to say instead when none could be taken. */
  harvest(): Promise<{ harvest?: Harvest; failure?: string }>;
}

/** Where the primer reads, and how its agent starts and ends there. */
export interface PrimerPlace {
  /** Its agent, the gates' baseline on HEAD started or run on the way (a gate that cannot run stops the run). */
  open(sessionId: string): Promise<AgentSession>;
  /** The turn's options with the place's own stop (a baseline that says no gate can run). */
  turn(options: TurnOptions): TurnOptions;
  /** Waits for the baseline; throws when it said a gate cannot run (the primer failed: the better line). */
  settled(): Promise<void>;
  /** Before the fan-out: throws when the baseline said already that a gate cannot run; never waits for it. */
  fanOut(): Promise<void>;
  /** What the primer wrote although it must only read; the place may put it back. Throws with the motif. */
  refuseWrites(): Promise<void>;
  /** Told the primer's session file once it is known: what the arms start from. */
  primed(agent: AgentSession): Promise<void>;
  /** The verb the arms start from its file with, for the motif when the file is unknown. */
  readonly verb: 'cloned' | 'forked';
}

/** An arm's place, made as its phase starts; `signal` is the arm's own stop (one per arm: the session aborts it). */
export type ArmPlaceOf = (session: BonSession, run: RunEvents, arm: number, signal: AbortSignal) => ArmPlace;
export type PrimerPlaceOf = (session: BonSession, run: Run) => PrimerPlace;

/** What the primer touched, as a motif's list: the spec and the factory's data are not its writes. */
export function primerWrites(dirty: readonly string[], untracked: readonly string[]): string[] {
  return [...dirty, ...untracked.filter((p) => !p.startsWith('specs/') && !p.startsWith('adws/adw_data/'))];
}

export function listed(paths: readonly string[]): string {
  return `${paths.slice(0, 3).join(', ')}${paths.length > 3 ? ', …' : ''}`;
}

export function primePhase(session: BonSession, placeOf: PrimerPlaceOf): Phase {
  return {
    name: 'prime',
    kind: 'agent',
    async action(run) {
      const check = session.check!;
      const sessionId = randomUUID();
      run.sessions.prime = sessionId;
      const model = session.opts.builderModel ?? session.modelOf(1);
      // With --models the primer reads on the first of them (arm 1 then finds its cache warm): said on its line.
      const modelFrom =
        session.opts.models.length > 0 && model === session.opts.models[0] ? 'the first of --models' : undefined;
      run.attemptStarted('prime', 1, 1, { sessionId, model, ...(modelFrom ? { modelFrom } : {}) });
      const place = placeOf(session, run);
      const agent = await place.open(sessionId);
      session.rpc = agent;
      const card = await envelopeCard('BuildEnvelope');
      const envelopes = loadEnvelopes();
      let result: AgentAnswer;
      try {
        result = await agent.prompt(
          `${primerAsk(check.spec)}\n\n${card.contract}`,
          place.turn(primerTurn(session, model)),
        );
      } catch (error) {
        if (!(error instanceof HarnessError)) throw error;
        run.charge('prime', error.evidence.tokens ?? 0, error.evidence.cost ?? 0);
        session.abandonPrimer();
        await place.settled();
        throw primerStopped(session, error) ?? new InfrastructureError(`the primer failed: ${error.message}`);
      }
      run.charge('prime', result.tokens, result.cost);
      session.primer = { tokens: result.tokens, cost: result.cost, sessionId };
      session.spend.primerUsage(result.cost);
      // A job the primer left running would write into an arm's work: it ends with the primer's turn.
      const trespassed = trespass(await endTurn(session, run, agent));
      if (trespassed) throw new InfrastructureError(`the primer ${trespassed}`);
      // The primer reads only: what it wrote would land in one arm's patch, or mislead every arm started from it.
      // Said as soon as it is seen (the model's failure: exit 1), the baseline beside it stopped, not waited for.
      await place.refuseWrites().catch(async (error: unknown) => {
        session.abandonPrimer();
        await place.settled().catch(() => undefined);
        throw error;
      });
      await place.fanOut();
      session.primerFile = await agent.sessionFile();
      // Every arm starts from this file: without it no arm could start from what the primer read.
      if (!session.primerFile)
        throw new InfrastructureError(
          `the primer's session file is unknown (pi did not say where session ${sessionId} is kept): no arm can be ${place.verb} from it`,
        );
      await place.primed(agent);
      await session.forecastFanOut(agent, result, `${armAsk(check.spec)}\n\n${card.contract}`);
      if (place.verb === 'forked') {
        // The arms fork the primer's file, each in its own process: this one has nothing left to do.
        session.rpc = undefined;
        await agent.close();
      }
      // The primer writes nothing: its changed_files: [] is judged by the base envelope (no build invariant).
      return primerEnvelope(result.payload, envelopes);
    },
  };
}

/** An arm's rank before any verdict: red until settled, nothing spent, no patch. */
function unsettledRank({ arm, phase, model }: ArmSpec): ArmRank {
  return { arm, phase, model, green: false, tokens: 0, cost: 0, seconds: 0, patchBytes: 0 };
}

/** The order for arm `arm` of this run, as it would travel to whatever dispatcher runs it. */
export function armSpecOf(session: BonSession, arm: number): ArmSpec {
  const check = session.check!;
  const primer = session.primer.sessionId;
  if (!primer) throw new InfrastructureError(`arm ${arm} has no primer session to start from`);
  const model = session.modelOf(arm);
  const cap = session.spend.capOf(arm);
  const gates = session.opts.payloadCommands.map((g) => ({
    run: g.run,
    cwd: path.relative(check.root, path.resolve(session.opts.cwd, g.cwd)),
    timeoutMs: g.timeoutMs,
  }));
  return armSpec({
    adwId: session.run.adwId,
    arm,
    phase: `arm_${arm}`,
    place: session.opts.inPlace ? 'in-place' : 'worktree',
    base: check.head,
    spec: check.spec,
    primer: { sessionId: primer, messages: session.primerMessages },
    ...(model ? { model } : {}),
    ...(cap !== undefined ? { capUsd: cap } : {}),
    gates,
  });
}

/**
 * Arm `arm` as a phase of the run: its spec handed to the dispatcher, its events told to the run as they come (the
 * board, the trace and resume read nothing else of it), its figures charged and its rank kept from its outcome.
 */
export function armPhase(session: BonSession, arm: number, dispatcher: ArmDispatcher, parallel: boolean): Phase {
  const name = `arm_${arm}`;
  return {
    name,
    arm,
    kind: 'agent',
    optional: true,
    model: session.modelOf(arm),
    ...(parallel
      ? {
          parallel: {
            group: 'arms',
            limit: session.concurrency(),
            why:
              session.opts.concurrency !== undefined
                ? '(--concurrency)'
                : `on this machine (2 per core, at most ${MAX_ARMS})`,
          },
        }
      : {}),
    async action(run) {
      const spec = armSpecOf(session, arm);
      // Known from its start (the board steers and aborts a running arm), replaced by its outcome's at its end.
      session.arms.set(arm, unsettledRank(spec));
      const job = dispatcher.dispatch(spec, (event) => {
        if (event.type === 'attempt_started' && event.phase === name && event.sessionId)
          run.sessions[name] = event.sessionId;
        run.emit(event);
      });
      const { rank, failure } = await job.outcome;
      run.charge(name, rank.tokens, rank.cost);
      run.timePhase(name, rank.seconds);
      if (run.waited.has(name)) rank.waited = true;
      session.arms.set(arm, rank);
      if (failure) throw new PhaseFailure(failure.motif, failure.detail, failure.kind);
      return { ...rank };
    },
  };
}

/**
 * The arm's work where its place is, told as events to `run` (its dispatcher's sink): the batch's stop checked first,
 * its agent started from the primer, its turn, its end, its judgement, its harvest. Red or green, it resolves with
 * its outcome; only a failure of the batch (a clone that cannot be made) rejects.
 */
export async function workArm(
  session: BonSession,
  run: RunEvents,
  spec: ArmSpec,
  placeOf: ArmPlaceOf,
  signal: AbortSignal,
): Promise<ArmOutcome> {
  const started = performance.now();
  const { arm, phase: name, model } = spec;
  const rank = unsettledRank(spec);
  const place = placeOf(session, run, arm, signal);
  let failure: string | undefined;
  let failureKind: FailureKind = 'verdict';
  let detail: string | undefined;
  let ended: TurnEnd | undefined;
  let agent: AgentSession | undefined;
  try {
    // A batch stopped before this arm began (a cap, a race, the deadline): no tree, no token.
    const before = stoppedBy(signal);
    if (before) throw new PhaseFailure(before.motif, undefined, before.kind);
    await place.prepare();
    agent = await place.open((sessionId) => run.attemptStarted(name, 1, 1, { sessionId, ...(model ? { model } : {}) }));
    const card = await envelopeCard('BuildEnvelope');
    const onAnswer = await place.ready(agent);
    const result = await promptArm(session, run, arm, agent, `${armAsk(spec.spec)}\n\n${card.contract}`, {
      ...turnOptions(session, name, signal, model),
      signal,
      ...(onAnswer ? { onAnswer } : {}),
    });
    ended = await place.endTurn(agent);
    // Its turn is over: a batch stop from now on does not cut its gates, it is judged on its work.
    const gates = place.gates();
    ({
      failure,
      kind: failureKind,
      detail,
    } = await judgeAnswer(session, run, rank, {
      result,
      ended,
      signal: session.gateSignal(arm),
      ...(gates ? { gates } : {}),
    }));
  } catch (error) {
    // A failed clone stops the batch (after the finally below); anything else makes this arm red only.
    if (error instanceof InfrastructureError) throw error;
    if (error instanceof HarnessError) ({ failure, kind: failureKind } = harnessJudgement(rank, error));
    else if (error instanceof PhaseFailure) {
      failure = error.message;
      failureKind = error.kind ?? 'crashed';
    } else {
      failure = `crashed: ${errorMessage(error)}`;
      failureKind = 'crashed';
    }
  } finally {
    // Stopped by its batch (a cap, a race) before its turn ended, the arm says so, whatever its turn answered.
    if (!ended) ({ failure, kind: failureKind } = stopVerdict(signal, { failure, kind: failureKind }));
    // Always: what the arm started ends with it (a background job would write into another arm's work).
    const late = await place.lateEnd(agent, ended !== undefined);
    if (!ended) failure = trespass(late) ?? failure;
    const strays = [...(ended?.strays ?? []), ...late.strays];
    await place.release(agent);
    const { harvest, failure: lost } = await place.harvest();
    failure ??= lost;
    if (harvest) {
      Object.assign(rank, {
        patchFile: harvest.patchFile,
        patchBytes: harvest.bytes,
        patchSha256: harvest.sha256,
        files: harvest.files,
        added: harvest.added,
        removed: harvest.removed,
      });
      session.sealed.set(arm, { file: harvest.patchFile, bytes: fs.readFileSync(harvest.patchFile) });
      run.emit({
        type: 'arm_patch',
        adwId: run.adwId,
        ts: Date.now(),
        phase: name,
        arm,
        patchFile: harvest.patchFile,
        bytes: harvest.bytes,
        sha256: harvest.sha256,
        files: harvest.files,
        added: harvest.added,
        removed: harvest.removed,
        ...(strays.length > 0 ? { strays: strays.length } : {}),
      });
    }
    rank.seconds = (performance.now() - started) / 1000;
    for (const act of [...(ended?.refActs ?? []), ...(late.refActs ?? [])]) session.tried.add(name, act);
    const tried = session.tried.of(name);
    if (tried) Object.assign(rank, { tried: tried.acts, triedCount: tried.count });
  }
  return settleArm(session, run, rank, { failure, kind: failureKind, detail });
}
