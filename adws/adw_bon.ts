// adw_bon: best-of-N by clone. One live session of the harness (pi in RPC mode) reads the spec once (the primer,
// paid once); each arm is a clone of the primed session that implements the spec and is judged by the gates; the
// harvest ranks the arms (green, then cheapest, then fastest) and proposes the winner's patch. A red arm never
// stops the batch; a failed clone does. The tree is harvested and reset after every arm, whatever happened to it.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { envelopeCard, loadEnvelopes } from '../src/envelope/catalog.js';
import { HarnessError, InfrastructureError, errorMessage, type FailureKind, PhaseFailure } from '../src/contract/errors.js';
import type { ArmRank } from '../src/contract/events.js';
import { checkBon } from '../src/bon/check.js';
import { putBack, snapshotGitDir } from '../src/bon/gitGuard.js';
import { GitWatch } from '../src/bon/gitWatch.js';
import { sweepWorktrees } from '../src/bon/worktrees.js';
import { runBaseline, treeArmPhase, treePrimePhase } from '../src/bon/treeArms.js';
import { armAsk, endTurn, NOTHING_ENDED, primerAsk, primerEnvelope, primerTurn, trespass, turnOptions, type TurnEnd } from '../src/bon/turn.js';
import { harnessJudgement, judgeAnswer, primerStopped, settleArm, stopVerdict } from '../src/bon/armVerdict.js';
import { promptArm, stoppedBy } from '../src/bon/armTurn.js';
import type { BonSession } from '../src/bon/session.js';
import { armPatchFile, harvestPatch, keepArmRef, readSealed, resetTree } from '../src/bon/patch.js';
import { applyCommand, harvestJson, rankHarvest, unverifiedReason } from '../src/bon/rank.js';
import { judgePhase } from '../src/bon/judge.js';
import type { Phase } from '../src/engine/runner.js';
import { treeState } from '../src/process/git.js';

export const ADW_NAME = 'adw_bon';
// The live session lives in src/bon/session.ts; re-exported for callers that take the workflow as a whole.
export { BON_TOOLS, BonSession, type ArmPhaseFactory, type BonAdwOptions } from '../src/bon/session.js';
export { armAsk, primerAsk } from '../src/bon/turn.js';
import { harvestFile } from '../src/config/paths.js';

function checkPhase(session: BonSession): Phase {
  return {
    name: 'check',
    kind: 'code',
    async action(run) {
      // The deadline (--deadline) counts from the run's start.
      session.spend.start();
      session.check = await checkBon({
        cwd: session.opts.cwd,
        specPath: session.opts.specPath,
        arms: session.opts.arms,
        dataDir: session.opts.workspace.dataDir,
        adwId: run.adwId,
        git: { env: session.opts.gateEnv, runTag: run.adwId },
      });
      // A resumed run's kept patches are against the HEAD its first life started from: it must still be there.
      if (session.resumedHead && session.check.head !== session.resumedHead) {
        throw new PhaseFailure(`HEAD moved since this run began (${session.resumedHead.slice(0, 8)} → ${session.check.head.slice(0, 8)}): its arms' patches are against the old HEAD; start a new bon`, undefined, 'check');
      }
      // A gate whose program cannot start here would verify no arm: refused before any token, with the fix.
      const { gatePreflight } = await import('../src/gates/program.js');
      const cannot = gatePreflight(session.opts.payloadCommands, session.opts.gateEnv ?? process.env, session.opts.setup);
      if (cannot) throw new PhaseFailure(cannot, undefined, 'check');
      // Arms in worktrees inside the OS sandbox cannot write the user's .git: nothing to guard there, and the user
      // may stage, commit or `git config` meanwhile. In place, or unsandboxed, the guard keeps it (../src/bon/gitGuard.ts).
      if (session.opts.inPlace || !session.opts.sandbox) {
        session.gitSnapshot = await snapshotGitDir(session.check.root, { env: session.opts.gateEnv, runTag: run.adwId, agentsIn: session.opts.inPlace ? 'tree' : 'worktrees' });
        session.gitWatch = new GitWatch(session.check.root, session.gitSnapshot, { env: session.opts.gateEnv, runTag: run.adwId });
      }
      // What a killed run left (its worktrees, in git's list and on disk) goes before this run makes its own.
      const swept = await sweepWorktrees(session.check.root, { git: { env: session.opts.gateEnv, runTag: run.adwId }, env: session.opts.gateEnv });
      if (swept.length > 0) run.activity('check', { kind: 'note', text: `removed ${swept.length} worktree(s) a stopped run left behind` });
      return session.check;
    },
  };
}

function primePhase(session: BonSession): Phase {
  return {
    name: 'prime',
    kind: 'agent',
    async action(run) {
      const check = session.check!;
      const sessionId = randomUUID();
      run.sessions.prime = sessionId;
      const model = session.opts.builderModel ?? session.modelOf(1);
      run.attemptStarted('prime', 1, 1, { sessionId, model });
      // The gates on HEAD, in a worktree of their own, before the primer: in place, the arms will share this tree.
      const cannot = await runBaseline(session, run);
      if (cannot) throw new InfrastructureError(cannot);
      session.rpc = await session.open(sessionId, 'prime');
      const rpc = session.rpc;
      const card = await envelopeCard('BuildEnvelope');
      const envelopes = loadEnvelopes();
      let result;
      try {
        result = await rpc.prompt(`${primerAsk(check.spec)}\n\n${card.contract}`, primerTurn(session, model));
      } catch (error) {
        if (!(error instanceof HarnessError)) throw error;
        run.charge('prime', error.evidence.tokens ?? 0, error.evidence.cost ?? 0);
        throw primerStopped(session, error) ?? new InfrastructureError(`the primer failed: ${error.message}`);
      }
      run.charge('prime', result.tokens, result.cost);
      session.primer = { tokens: result.tokens, cost: result.cost, sessionId };
      session.spend.primerUsage(result.cost);
      // A job the primer left running would write into arm 1's tree: it ends with the primer's turn.
      const trespassed = trespass(await endTurn(session, run));
      if (trespassed) throw new InfrastructureError(`the primer ${trespassed}`);
      // The primer reads only: anything it wrote would land in arm 1's patch and in no other arm's.
      const after = await treeState(session.opts.cwd, { env: session.opts.gateEnv, runTag: run.adwId });
      const touched = [...after.dirty, ...after.untracked.filter((p) => !p.startsWith('specs/') && !p.startsWith('adws/adw_data/'))];
      if (touched.length > 0) {
        await resetTree(session.opts.cwd, { base: check.head, git: { env: session.opts.gateEnv, runTag: run.adwId } });
        if (session.gitSnapshot) putBack(session.gitSnapshot);
        throw new InfrastructureError(`the primer changed the tree (${touched.slice(0, 3).join(', ')}${touched.length > 3 ? ', …' : ''}): it must only read; the tree was reset`);
      }
      session.primerFile = await rpc.sessionFile();
      // Every arm is cloned from this file: without it no arm could start from what the primer read.
      if (!session.primerFile) throw new InfrastructureError(`the primer's session file is unknown (pi did not say where session ${sessionId} is kept): no arm can be cloned from it`);
      await session.forecastFanOut(rpc, result, `${armAsk(check.spec)}\n\n${card.contract}`);
      // The primer writes nothing: its changed_files: [] is judged by the base envelope (no build invariant).
      return primerEnvelope(result.payload, envelopes);
    },
  };
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
      let ended: TurnEnd | undefined;
      try {
        const before = stoppedBy(signal);
        if (before) throw new PhaseFailure(before.motif, undefined, before.kind);
        const rpc = await session.ensureRpc();
        if (rpc.sessionId !== session.primer.sessionId) {
          const back = await rpc.switchSession(session.primerFile!);
          // Cloning anything but the primer would give the arm a session without the spec read: stop the batch.
          if (back.sessionId !== session.primer.sessionId) throw new InfrastructureError(`could not return to the primer (landed on ${back.sessionId})`);
        }
        let cloned;
        try {
          cloned = await rpc.clone({ phase: name, model });
        } catch (error) {
          throw new InfrastructureError(`clone for ${name} failed: ${errorMessage(error)}`);
        }
        run.sessions[name] = cloned.sessionId;
        if (model && model !== rpc.model) await rpc.switchModel(model);
        run.attemptStarted(name, 1, 1, { sessionId: cloned.sessionId, model });
        const card = await envelopeCard('BuildEnvelope');
        try {
          const result = await promptArm(session, run, arm, rpc, `${armAsk(check.spec)}\n\n${card.contract}`, { ...turnOptions(session, name, signal, model), signal });
          ended = await endTurn(session, run);
          // Its turn is over: a batch stop from now on does not cut its gates, it is judged on its work.
          ({ failure, kind: failureKind, detail } = await judgeAnswer(session, run, rank, { result, ended, signal: session.gateSignal(arm) }));
        } catch (error) {
          if (!(error instanceof HarnessError)) throw error;
          ({ failure, kind: failureKind } = harnessJudgement(run, rank, error));
        }
      } catch (error) {
        // A failed clone stops the batch (after the finally below); anything else makes this arm red only.
        if (error instanceof InfrastructureError) throw error;
        if (error instanceof PhaseFailure) {
          failure = error.message;
          failureKind = error.kind ?? 'crashed';
        } else {
          failure = `crashed: ${errorMessage(error)}`;
          failureKind = 'crashed';
        }
      } finally {
        if (!ended) ({ failure, kind: failureKind } = stopVerdict(signal, { failure, kind: failureKind }));
        // Always: what the arm started ends with it (a background job would write into the next arm's patch),
        // then the arm's work becomes a patch and the tree goes back to the primer's HEAD for the next arm.
        const late = await endTurn(session, run).catch((): TurnEnd => NOTHING_ENDED);
        if (!ended) failure = trespass(late) ?? failure;
        const strays = [...(ended?.strays ?? []), ...late.strays];
        const git = { env: session.opts.gateEnv, runTag: run.adwId };
        let harvest;
        try {
          harvest = await harvestPatch(session.opts.cwd, armPatchFile(check.bonDir, arm), { base: check.head, git });
        } finally {
          // Reset even when the harvest failed: the next arm must never start on this arm's leftovers.
          try {
            await resetTree(session.opts.cwd, { base: check.head, git });
            // The reset moved the branch back and wrote its reflog, HEAD's and ORIG_HEAD: they end as the run found them.
            if (session.gitSnapshot) putBack(session.gitSnapshot);
          } catch (error) {
            throw new InfrastructureError(`the tree could not be reset after ${name}: ${errorMessage(error)}`);
          }
        }
        Object.assign(rank, { patchFile: harvest.patchFile, patchBytes: harvest.bytes, patchSha256: harvest.sha256, files: harvest.files, added: harvest.added, removed: harvest.removed });
        session.sealed.set(arm, { file: harvest.patchFile, bytes: fs.readFileSync(harvest.patchFile) });
        rank.seconds = (performance.now() - started) / 1000;
        run.emit({ type: 'arm_patch', adwId: run.adwId, ts: Date.now(), phase: name, arm, patchFile: harvest.patchFile, bytes: harvest.bytes, sha256: harvest.sha256, files: harvest.files, added: harvest.added, removed: harvest.removed, ...(strays.length > 0 ? { strays: strays.length } : {}) });
      }
      return settleArm(session, run, rank, { failure, kind: failureKind, detail });
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
      // A patch whose bytes changed after its harvest (a later arm wrote it) was never judged: it cannot win.
      for (const arm of arms) {
        if (!arm.green || !arm.patchFile || !arm.patchSha256) continue;
        const sealed = readSealed(arm.patchFile, arm.patchSha256, path.basename(arm.patchFile));
        if ('motif' in sealed) {
          arm.green = false;
          arm.motif = sealed.motif.replace(/^patch refused: /, '');
        }
      }
      // Ranked once, here: the judge's order among the green arms when the code accepted it (./judge.ts), the code's
      // own otherwise. Everything after (harvest.json, the board, --apply, factory apply, show) reads this ranking.
      session.ranking = rankHarvest(arms, session.judge);
      const { arms: ranked, winner } = session.ranking;
      const baseline = [...session.preexisting].map(([gate, sig]) => ({ gate, ending: sig.ending, lines: [...sig.lines] }));
      // The run's total (primer, arms, judge) is the one the final line, `show` and `runs` give: the harvest says it too.
      const json = { ...harvestJson({ adwId: run.adwId, ranking: session.ranking, primer: session.primer, spec: check.spec, head: check.head, now: Date.now(), baseline }), run: { tokens: run.tokens, cost_usd: run.cost } };
      const file = harvestFile(check.bonDir);
      // Motifs may quote what an agent or a provider said (a key in a 401): the run's one redactor first.
      fs.writeFileSync(file, `${JSON.stringify(run.redact(json), null, 2)}\n`);
      // Losing arms stay reachable as refs; the winner's patch is the proposal.
      for (const arm of ranked) {
        if (arm.arm === winner?.arm || !arm.patchFile || arm.patchBytes === 0) continue;
        await keepArmRef(session.opts.cwd, run.adwId, arm.arm, arm.patchFile, { git: { env: session.opts.gateEnv, runTag: run.adwId } });
      }
      const command = winner?.patchFile ? applyCommand(run.adwId) : undefined;
      run.emit({ type: 'harvest', adwId: run.adwId, ts: Date.now(), ranking: ranked, winner: winner?.arm, primer: session.primer, harvestFile: file, applyCommand: command, ...(session.judge ? { judge: session.judge } : {}) });
      if (!winner) {
        // No winner because caps ended the arms is a budget verdict (exit 3), not broken work.
        const capped = ranked.filter((a) => a.failure === 'budget').map((a) => a.arm);
        if (capped.length > 0) run.budget ??= `budget: no green arm; arm${capped.length > 1 ? 's' : ''} ${capped.join(', ')} ended at ${capped.length > 1 ? 'their caps' : 'its cap'}`;
        // Nothing verified the best arm (every gate red on HEAD the same way): not a green run (exit 1), and its
        // patch is applied only when the user names it.
        const best = ranked[0];
        if (best?.unverified) throw new PhaseFailure(`no verified arm: arm ${best.arm} is unverified (${unverifiedReason(best)}) — apply it only knowingly: ${applyCommand(run.adwId, best.arm)}`, undefined, 'gate');
        throw new PhaseFailure(`no green arm — see ${file}`);
      }
      return json;
    },
  };
}

/**
 * The batch: check, prime, the arms, harvest. By default the primer and every arm work in worktrees of their own
 * and the arms run at once (../src/bon/treeArms.ts); `inPlace` keeps them one after another in the user's tree.
 */
export function bonPhases(session: BonSession): Phase[] {
  const arm = session.opts.inPlace ? armPhase : treeArmPhase;
  const prime = session.opts.inPlace ? primePhase(session) : treePrimePhase(session);
  const arms = Array.from({ length: session.opts.arms }, (_, i) => arm(session, i + 1));
  const judge = session.opts.judge ? [judgePhase(session, session.opts.judge)] : [];
  return session.plan([checkPhase(session), prime, ...arms, ...judge, harvestPhase(session)], arm);
}
