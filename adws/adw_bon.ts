// adw_bon: best-of-N. The primer reads the spec once (paid once); each arm starts from the primed session,
// implements the spec and is judged by the gates; the harvest ranks the arms (green, then cheapest, then fastest)
// and proposes the winner's patch. A red arm never stops the batch; an arm that cannot start from the primer does.
// The arm and the primer are ../src/bon/arm.ts, in worktrees (../src/bon/treeArms.ts) or in place (../src/bon/inPlace.ts).
import fs from 'node:fs';
import path from 'node:path';
import { InfrastructureError, PhaseFailure } from '../src/contract/errors.js';
import { armPhase, primePhase } from '../src/bon/arm.js';
import { checkBon } from '../src/bon/check.js';
import { snapshotGitDir } from '../src/bon/git/guard.js';
import { GitWatch } from '../src/bon/git/watch.js';
import { inPlaceArm, inPlacePrimer } from '../src/bon/inPlace.js';
import { sweepWorktrees } from '../src/bon/tree/worktrees.js';
import { sweepScratch } from '../src/process/scratch.js';
import { treeArm, treePrimer } from '../src/bon/treeArms.js';
import { LocalArmDispatcher } from '../src/bon/dispatch/local.js';
import type { ArmPhaseFactory, BonSession } from '../src/bon/session.js';
import { keepArmRef, readSealed } from '../src/bon/patch/patch.js';
import { applyCommand, harvestJson, rankHarvest, unverifiedReason } from '../src/bon/harvest/rank.js';
import { judgePhase } from '../src/bon/judge.js';
import { beyondScope, specScope } from '../src/bon/harvest/scope.js';
import { harvestFile } from '../src/config/paths.js';
import type { Phase } from '../src/engine/runner.js';

export const ADW_NAME = 'adw_bon';
// The live session lives in src/bon/session.ts; re-exported for callers that take the workflow as a whole.
export { BON_TOOLS, BonSession, type ArmPhaseFactory, type BonAdwOptions } from '../src/bon/session.js';
export { armAsk, primerAsk } from '../src/bon/turn.js';

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
        throw new PhaseFailure(
          `HEAD moved since this run began (${session.resumedHead.slice(0, 8)} → ${session.check.head.slice(0, 8)}): its arms' patches are against the old HEAD; start a new bon`,
          undefined,
          'check',
        );
      }
      // A gate whose program cannot start here would verify no arm: refused before any token, with the fix.
      const { gatePreflight } = await import('../src/gates/program.js');
      const cannot = gatePreflight(
        session.opts.payloadCommands,
        session.opts.gateEnv ?? process.env,
        session.opts.setup,
      );
      if (cannot) throw new PhaseFailure(cannot, undefined, 'check');
      // Arms in worktrees inside the OS sandbox cannot write the user's .git: nothing to guard there, and the user
      // may stage, commit or `git config` meanwhile. In place, or unsandboxed, the guard keeps it (../src/bon/git/guard.ts).
      if (session.opts.inPlace || !session.opts.sandbox) {
        session.gitSnapshot = await snapshotGitDir(session.check.root, {
          env: session.opts.gateEnv,
          runTag: run.adwId,
          agentsIn: session.opts.inPlace ? 'tree' : 'worktrees',
        });
        session.gitWatch = new GitWatch(session.check.root, session.gitSnapshot, {
          env: session.opts.gateEnv,
          runTag: run.adwId,
        });
      }
      // What a killed run left (its worktrees, in git's list and on disk) goes before this run makes its own.
      const swept = await sweepWorktrees(session.check.root, {
        git: { env: session.opts.gateEnv, runTag: run.adwId },
        env: session.opts.gateEnv,
      });
      if (swept.length > 0)
        run.activity('check', { kind: 'note', text: `removed ${swept.length} worktree(s) a stopped run left behind` });
      const scratch = sweepScratch();
      if (scratch.length > 0)
        run.activity('check', {
          kind: 'note',
          text: `removed ${scratch.length} scratch folder(s) a stopped run left in the temp folder`,
        });
      return session.check;
    },
  };
}

/** The spec's text for its scope; a spec gone since the check has none (nothing is flagged). */
function readSpec(cwd: string, spec: string): string {
  try {
    return fs.readFileSync(path.resolve(cwd, spec), 'utf8');
  } catch {
    return '';
  }
}

function harvestPhase(session: BonSession): Phase {
  return {
    name: 'harvest',
    kind: 'code',
    async action(run) {
      // The baseline went on beside the arms: a gate it found unable to run leaves no arm verified (exit 2).
      await session.baseline.settled();
      if (session.baseline.cannot) throw new InfrastructureError(session.baseline.cannot);
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
      // Each arm's files beyond what the spec and the primer's plan name: not a verdict, a rank and a question.
      const scope = specScope(
        readSpec(session.opts.cwd, check.spec),
        (run.results.prime as { summary?: unknown } | undefined)?.summary as string | undefined,
      );
      for (const arm of arms) {
        const beyond = beyondScope(arm.files ?? [], scope);
        if (beyond.length > 0) arm.beyond = beyond;
      }
      // Ranked once, here: the judge's order among the green arms when the code accepted it (../src/bon/judge.ts), the code's
      // own otherwise. Everything after (harvest.json, the board, --apply, factory apply, show) reads this ranking.
      session.ranking = rankHarvest(arms, session.judge);
      const { arms: ranked, winner } = session.ranking;
      const baseline = [...session.baseline.preexisting].map(([gate, sig]) => ({
        gate,
        ending: sig.ending,
        lines: [...sig.lines],
      }));
      // The run's total (primer, arms, judge) is the one the final line, `show` and `runs` give: the harvest says it too.
      const json = {
        ...harvestJson({
          adwId: run.adwId,
          ranking: session.ranking,
          primer: session.primer,
          spec: check.spec,
          head: check.head,
          now: Date.now(),
          baseline,
        }),
        run: { tokens: run.tokens, cost_usd: run.cost },
      };
      const file = harvestFile(check.bonDir);
      // Motifs may quote what an agent or a provider said (a key in a 401): the run's one redactor first.
      fs.writeFileSync(file, `${JSON.stringify(run.redact(json), null, 2)}\n`);
      // Losing arms stay reachable as refs; the winner's patch is the proposal.
      for (const arm of ranked) {
        if (arm.arm === winner?.arm || !arm.patchFile || arm.patchBytes === 0) continue;
        await keepArmRef(session.opts.cwd, run.adwId, arm.arm, arm.patchFile, {
          git: { env: session.opts.gateEnv, runTag: run.adwId },
        });
      }
      const command = winner?.patchFile ? applyCommand(run.adwId) : undefined;
      run.emit({
        type: 'harvest',
        adwId: run.adwId,
        ts: Date.now(),
        ranking: ranked,
        winner: winner?.arm,
        why: session.ranking.why,
        primer: session.primer,
        harvestFile: file,
        applyCommand: command,
        ...(session.judge ? { judge: session.judge } : {}),
      });
      if (!winner) {
        // No winner because caps ended the arms is a budget verdict (exit 3), not broken work.
        const capped = ranked.filter((a) => a.failure === 'budget').map((a) => a.arm);
        if (capped.length > 0)
          run.budget ??= `budget: no green arm; arm${capped.length > 1 ? 's' : ''} ${capped.join(', ')} ended at ${capped.length > 1 ? 'their caps' : 'its cap'}`;
        // Nothing verified the best arm (every gate red on HEAD the same way): not a green run (exit 1), and its
        // patch is applied only when the user names it.
        const best = ranked[0];
        if (best?.unverified)
          throw new PhaseFailure(
            `no verified arm: arm ${best.arm} is unverified (${unverifiedReason(best)}) — apply it only knowingly: ${applyCommand(run.adwId, best.arm)}`,
            undefined,
            'gate',
          );
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
  const inPlace = session.opts.inPlace === true;
  const dispatcher = new LocalArmDispatcher(session, inPlace ? inPlaceArm : treeArm);
  const arm: ArmPhaseFactory = (s, n) => armPhase(s, n, dispatcher, !inPlace);
  const prime = primePhase(session, inPlace ? inPlacePrimer : treePrimer);
  const arms = Array.from({ length: session.opts.arms }, (_, i) => arm(session, i + 1));
  const judge = session.opts.judge ? [judgePhase(session, session.opts.judge)] : [];
  return session.plan([checkPhase(session), prime, ...arms, ...judge, harvestPhase(session)], arm);
}
