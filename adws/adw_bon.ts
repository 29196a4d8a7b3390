// adw_bon: best-of-N by clone. One live session of the harness (pi in RPC mode) reads the spec once (the primer,
// paid once); each arm is a clone of the primed session that implements the spec and is judged by the gates; the
// harvest ranks the arms (green, then cheapest, then fastest) and proposes the winner's patch. A red arm never
// stops the batch; a failed clone does. The tree is harvested and reset after every arm, whatever happened to it.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { envelopeCard, loadEnvelopes } from '../src/envelopeCatalog.js';
import { HarnessError, InfrastructureError, errorMessage, oneLine, type FailureKind } from '../src/errors.js';
import type { ArmRank } from '../src/events.js';
import { correctionDetail, motif, type GateCommand, type GateReport } from '../src/gates.js';
import { runGateList } from '../src/gateList.js';
import type { AgentSession, Limits, LiveHarness, TurnOptions } from '../src/harness/types.js';
import type { WorkspacePaths } from '../src/paths.js';
import { checkBon, MAX_ARMS, type BonCheck } from '../src/bon/check.js';
import { armPatchFile, harvestPatch, keepArmRef, resetTree } from '../src/bon/patch.js';
import { applyCommand, harvestFile, harvestJson, rankArms, winnerOf } from '../src/bon/rank.js';
import { PhaseFailure, planOf, type Phase, type Run } from '../src/runner.js';
import { treeState } from '../src/git.js';

export const ADW_NAME = 'adw_bon';
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
  /** Where the user started the command (the proposal's `git apply` must work from there). */
  invokedIn?: string;
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
}

export function primerAsk(spec: string): string {
  return [
    `Read the whole spec ${spec}, every file it names, and the payload's tests.`,
    'Write nothing and change nothing: this turn only prepares the work that will follow.',
    'Answer with a plan of at most five lines, and report with status "success" and changed_files: [].',
  ].join('\n');
}

/** The arm's ask: the mission only — the builder's brief reaches the node through factory-context. */
export function armAsk(spec: string): string {
  return `Implement the spec ${spec} now, without rereading it: you read it in the previous turn. Make the payload's tests pass.`;
}

/** The live side of a best-of-N run: the live session, the primer, the arms, and what the keyboard asks of it. */
export class BonSession {
  /** The harness's live session (one pi RPC process), reopened on the primer if it died. */
  rpc?: AgentSession;
  check?: BonCheck;
  primerFile?: string;
  primer = { tokens: 0, cost: 0, sessionId: undefined as string | undefined };
  readonly arms = new Map<number, ArmRank>();
  private readonly armAborts = new Map<number, AbortController>();
  private harvested = false;
  phases: Phase[] = [];

  constructor(
    readonly run: Run,
    readonly opts: BonAdwOptions,
  ) {}

  modelOf(arm: number): string | undefined {
    const { models } = this.opts;
    return models.length > 0 ? models[(arm - 1) % models.length] : this.opts.builderModel;
  }

  armCount(): number {
    return this.phases.filter((p) => p.arm !== undefined).length;
  }

  /** `c`: one more arm cloned from the primer, before the harvest (up to 5). Returns a motif when refused. */
  addArm(): string | undefined {
    if (this.harvested) return 'the harvest is done: no more arms';
    const count = this.armCount();
    if (count >= MAX_ARMS) return `already ${MAX_ARMS} arms: the most a batch takes`;
    const arm = count + 1;
    const phase = armPhase(this, arm);
    const at = this.phases.findIndex((p) => p.name === 'harvest');
    this.phases.splice(at, 0, phase);
    this.run.emit({ type: 'phase_planned', adwId: this.run.adwId, ts: Date.now(), phase: planOf(phase), before: 'harvest' });
    return undefined;
  }

  /** `a`: abort the arm's running turn (RPC abort); the arm ends red, the batch goes on. */
  abortArm(arm: number): void {
    this.armAborts.get(arm)?.abort();
  }

  armSignal(arm: number): AbortSignal {
    const controller = new AbortController();
    this.armAborts.set(arm, controller);
    const runSignal = this.run.signal;
    if (runSignal.aborted) controller.abort();
    else runSignal.addEventListener('abort', () => controller.abort(), { once: true });
    return controller.signal;
  }

  /** The live session, reopened on the primer's session if an earlier arm's pi died. */
  async ensureRpc(): Promise<AgentSession> {
    if (this.rpc?.alive) return this.rpc;
    await this.rpc?.close();
    if (!this.primer.sessionId) throw new InfrastructureError('no primer session to clone from');
    this.rpc = await openRpc(this, this.primer.sessionId, 'prime');
    return this.rpc;
  }

  async close(): Promise<void> {
    const rpc = this.rpc;
    this.rpc = undefined;
    await rpc?.close();
  }

  markHarvested(): void {
    this.harvested = true;
  }
}

async function openRpc(session: BonSession, sessionId: string, phase: string): Promise<AgentSession> {
  const { opts, run } = session;
  const card = await envelopeCard('BuildEnvelope');
  try {
    return await opts.harness.openSession({
      sessionId,
      cwd: opts.cwd,
      workspace: opts.workspace,
      model: opts.builderModel ?? session.modelOf(1),
      thinking: opts.thinking,
      tools: opts.tools ?? BON_TOOLS,
      env: opts.env,
      identity: { adwId: run.adwId, phase, role: 'builder' },
      envelopeSchema: { title: card.title, schema: card.schema },
      limits: opts.limits,
    });
  } catch (error) {
    throw new InfrastructureError(`pi could not start in RPC mode: ${errorMessage(error)}`);
  }
}

function turnOptions(session: BonSession, phase: string, signal: AbortSignal, requestedModel?: string): TurnOptions {
  const { run, opts } = session;
  return {
    onActivity: (activity: Parameters<Run['activity']>[1]) => run.activity(phase, activity),
    onUsage: ({ tokens, cost }: { tokens: number; cost: number }) => run.liveUsage(phase, tokens, cost),
    timeoutMs: opts.timeoutMs ?? 20 * 60_000,
    idleTimeoutMs: opts.idleTimeoutMs ?? 3 * 60_000,
    signal,
    requestedModel,
  };
}

function checkPhase(session: BonSession): Phase {
  return {
    name: 'check',
    kind: 'code',
    async action(run) {
      session.check = await checkBon({
        cwd: session.opts.cwd,
        specPath: session.opts.specPath,
        arms: session.opts.arms,
        dataDir: session.opts.workspace.dataDir,
        adwId: run.adwId,
        git: { env: session.opts.gateEnv, runTag: run.adwId },
      });
      return session.check;
    },
  };
}

function primePhase(session: BonSession): Phase {
  return {
    name: 'prime',
    kind: 'agent',
    async action(run, ctx) {
      const check = session.check!;
      const sessionId = randomUUID();
      run.sessions.prime = sessionId;
      const model = session.opts.builderModel ?? session.modelOf(1);
      run.attemptStarted('prime', 1, 1, { sessionId, model });
      session.rpc = await openRpc(session, sessionId, 'prime');
      const card = await envelopeCard('BuildEnvelope');
      const envelopes = loadEnvelopes();
      let result;
      try {
        result = await session.rpc.prompt(`${primerAsk(check.spec)}\n\n${card.contract}`, turnOptions(session, 'prime', ctx.signal, model));
      } catch (error) {
        if (!(error instanceof HarnessError)) throw error;
        run.charge('prime', error.evidence.tokens ?? 0, error.evidence.cost ?? 0);
        throw new InfrastructureError(`the primer failed: ${error.message}`);
      }
      run.charge('prime', result.tokens, result.cost);
      session.primer = { tokens: result.tokens, cost: result.cost, sessionId };
      // The primer reads only: anything it wrote would land in arm 1's patch and in no other arm's.
      const after = await treeState(session.opts.cwd, { env: session.opts.gateEnv, runTag: run.adwId });
      const touched = [...after.dirty, ...after.untracked.filter((p) => !p.startsWith('specs/') && !p.startsWith('adws/adw_data/'))];
      if (touched.length > 0) {
        await resetTree(session.opts.cwd, { base: check.head, git: { env: session.opts.gateEnv, runTag: run.adwId } });
        throw new InfrastructureError(`the primer changed the tree (${touched.slice(0, 3).join(', ')}${touched.length > 3 ? ', …' : ''}): it must only read; the tree was reset`);
      }
      session.primerFile = await session.rpc.sessionFile();
      // The primer writes nothing: its changed_files: [] is judged by the base envelope (no build invariant).
      const { parse, Envelope, EnvelopeError } = await envelopes;
      try {
        return parse(result.payload, Envelope);
      } catch (error) {
        if (error instanceof EnvelopeError) throw new InfrastructureError(`the primer's envelope was refused: ${error.message}`);
        throw error;
      }
    },
  };
}

function runGates(session: BonSession, run: Run, phase: string, changed: string[], signal: AbortSignal): Promise<GateReport[]> {
  return runGateList({ run, phase, cwd: session.opts.cwd, changedFiles: changed, commands: session.opts.payloadCommands, signal, env: session.opts.gateEnv });
}

export function armPhase(session: BonSession, arm: number): Phase {
  const name = `arm_${arm}`;
  return {
    name,
    arm,
    kind: 'agent',
    optional: true,
    model: session.modelOf(arm),
    async action(run) {
      const started = performance.now();
      const check = session.check!;
      const model = session.modelOf(arm);
      const signal = session.armSignal(arm);
      const rank: ArmRank = { arm, phase: name, model, green: false, tokens: 0, cost: 0, seconds: 0, patchBytes: 0 };
      session.arms.set(arm, rank);
      let failure: string | undefined;
      let failureKind: FailureKind = 'verdict';
      let detail: string | undefined;
      try {
        const rpc = await session.ensureRpc();
        if (rpc.sessionId !== session.primer.sessionId) {
          const back = await rpc.switchSession(session.primerFile!);
          // Cloning anything but the primer would give the arm a session without the spec read: stop the batch.
          if (back.sessionId !== session.primer.sessionId) throw new InfrastructureError(`could not return to the primer (landed on ${back.sessionId})`);
        }
        let cloned;
        try {
          cloned = await rpc.clone({ phase: name });
        } catch (error) {
          throw new InfrastructureError(`clone for ${name} failed: ${errorMessage(error)}`);
        }
        run.sessions[name] = cloned.sessionId;
        if (model && model !== rpc.model) await rpc.switchModel(model);
        run.attemptStarted(name, 1, 1, { sessionId: cloned.sessionId, model });
        const card = await envelopeCard('BuildEnvelope');
        const envelopes = loadEnvelopes();
        try {
          const result = await rpc.prompt(`${armAsk(check.spec)}\n\n${card.contract}`, turnOptions(session, name, signal, model));
          run.charge(name, result.tokens, result.cost);
          rank.tokens = result.tokens;
          rank.cost = result.cost;
          const { parse, BuildEnvelope, EnvelopeError } = await envelopes;
          let envelope;
          try {
            envelope = parse(result.payload, BuildEnvelope);
          } catch (error) {
            if (!(error instanceof EnvelopeError)) throw error;
            failure = `envelope refused: ${error.message}`;
          }
          if (envelope && envelope.status !== 'success') failure = `the arm reports a failure: ${JSON.stringify(envelope.summary)}`;
          if (envelope && !failure) {
            const reports = await runGates(session, run, name, envelope.changed_files, signal);
            failure = motif(reports) || undefined;
            failureKind = 'gate';
            detail = correctionDetail(reports);
          }
        } catch (error) {
          if (!(error instanceof HarnessError)) throw error;
          run.charge(name, error.evidence.tokens ?? 0, error.evidence.cost ?? 0);
          rank.tokens = error.evidence.tokens ?? 0;
          rank.cost = error.evidence.cost ?? 0;
          const kind = error.evidence.kind;
          failureKind = kind ?? 'error';
          // The prefix is for people reading the motif; the board reads the kind.
          failure = kind === 'aborted' ? `aborted: ${error.message}` : kind === 'crashed' ? `crashed: ${error.message}` : error.message;
        }
      } catch (error) {
        // A failed clone stops the batch (after the finally below); anything else makes this arm red only.
        if (error instanceof InfrastructureError) throw error;
        failure = `crashed: ${errorMessage(error)}`;
        failureKind = 'crashed';
      } finally {
        // Always: the arm's work becomes a patch and the tree goes back to the primer's HEAD for the next arm.
        const git = { env: session.opts.gateEnv, runTag: run.adwId };
        let harvest;
        try {
          harvest = await harvestPatch(session.opts.cwd, armPatchFile(check.bonDir, arm), { base: check.head, git });
        } finally {
          // Reset even when the harvest failed: the next arm must never start on this arm's leftovers.
          try {
            await resetTree(session.opts.cwd, { base: check.head, git });
          } catch (error) {
            throw new InfrastructureError(`the tree could not be reset after ${name}: ${errorMessage(error)}`);
          }
        }
        rank.patchFile = harvest.patchFile;
        rank.patchBytes = harvest.bytes;
        rank.seconds = (performance.now() - started) / 1000;
        run.emit({ type: 'arm_patch', adwId: run.adwId, ts: Date.now(), phase: name, arm, patchFile: harvest.patchFile, bytes: harvest.bytes, files: harvest.files });
      }
      if (failure) {
        rank.motif = oneLine(failure);
        throw new PhaseFailure(rank.motif, detail, failureKind);
      }
      rank.green = true;
      return { ...rank };
    },
  };
}

function harvestPhase(session: BonSession): Phase {
  return {
    name: 'harvest',
    kind: 'code',
    async action(run) {
      session.markHarvested();
      await session.close();
      const check = session.check!;
      const arms = [...session.arms.values()];
      const ranked = rankArms(arms);
      const winner = winnerOf(ranked);
      const json = harvestJson({ adwId: run.adwId, arms, primer: session.primer, spec: check.spec, head: check.head, cwd: session.opts.cwd, now: Date.now() });
      const file = harvestFile(check.bonDir);
      fs.writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
      // Losing arms stay reachable as refs; the winner's patch is the proposal.
      for (const arm of ranked) {
        if (arm.arm === winner?.arm || !arm.patchFile || arm.patchBytes === 0) continue;
        await keepArmRef(session.opts.cwd, run.adwId, arm.arm, arm.patchFile, { git: { env: session.opts.gateEnv, runTag: run.adwId } });
      }
      const command = winner?.patchFile ? applyCommand(winner.patchFile, session.opts.cwd, session.opts.invokedIn) : undefined;
      run.emit({ type: 'harvest', adwId: run.adwId, ts: Date.now(), ranking: ranked, winner: winner?.arm, primer: session.primer, harvestFile: file, applyCommand: command });
      if (!winner) throw new PhaseFailure(`no green arm — see ${file}`);
      return json;
    },
  };
}

export function bonPhases(session: BonSession): Phase[] {
  const arms = Array.from({ length: session.opts.arms }, (_, i) => armPhase(session, i + 1));
  session.phases = [checkPhase(session), primePhase(session), ...arms, harvestPhase(session)];
  return session.phases;
}
