// Best-of-N in the user's tree (--in-place): one live session (pi in RPC mode) reads the spec once; each arm is a
// clone of it, one after another, in the user's tree, which is harvested and reset after every arm whatever
// happened to it. The arm and the primer themselves are ./arm.ts; this is only where they work.
import { errorMessage, InfrastructureError, PhaseFailure } from '../contract/errors.js';
import type { RunEvents } from '../engine/runEvents.js';
import { treeState } from '../process/git.js';
import type { ArmPlace, PrimerPlace } from './arm.js';
import { listed, primerWrites } from './arm.js';
import { putBack } from './git/guard.js';
import { armPatchFile, harvestPatch, resetTree } from './patch/patch.js';
import type { BonSession } from './session.js';
import { runBaseline } from './treeArms.js';
import { endTurn, NOTHING_ENDED, type TurnEnd } from './turn.js';

const gitOf = (session: BonSession, run: RunEvents) => ({ env: session.opts.gateEnv, runTag: run.adwId });

/** The tree back to the primer's HEAD, and the user's .git as the run found it (the reset wrote reflogs). */
async function putTreeBack(session: BonSession, run: RunEvents): Promise<void> {
  await resetTree(session.opts.cwd, { base: session.check!.head, git: gitOf(session, run) });
  if (session.gitSnapshot) putBack(session.gitSnapshot);
}

export function inPlacePrimer(session: BonSession, run: RunEvents): PrimerPlace {
  return {
    verb: 'cloned',
    async open(sessionId) {
      // The gates on HEAD, in a worktree of their own, before the primer: the arms will share the user's tree.
      await session.baseline.start(() => runBaseline(session, run));
      await session.baseline.ready();
      return session.open(sessionId, 'prime');
    },
    turn: (options) => options,
    settled: async () => undefined,
    fanOut: async () => undefined,
    async refuseWrites() {
      const after = await treeState(session.opts.cwd, gitOf(session, run));
      const touched = primerWrites(after.dirty, after.untracked);
      if (touched.length === 0) return;
      await putTreeBack(session, run);
      throw new PhaseFailure(
        `the primer changed the tree (${listed(touched)}): it must only read; the tree was reset`,
        undefined,
        'verdict',
      );
    },
    primed: async () => undefined,
  };
}

export function inPlaceArm(session: BonSession, run: RunEvents, arm: number): ArmPlace {
  const name = `arm_${arm}`;
  const check = session.check!;
  return {
    // A resumed run whose first life never recorded the baseline runs it now (its gates wait for it).
    prepare: async () => void session.baseline.start(() => runBaseline(session, run)),
    async open(started) {
      const rpc = await session.ensureRpc();
      if (rpc.sessionId !== session.primer.sessionId) {
        const back = await rpc.switchSession(session.primerFile!);
        // Cloning anything but the primer would give the arm a session without the spec read: stop the batch.
        if (back.sessionId !== session.primer.sessionId)
          throw new InfrastructureError(`could not return to the primer (landed on ${back.sessionId})`);
      }
      let cloned;
      try {
        cloned = await rpc.clone({ phase: name, model: session.modelOf(arm) });
      } catch (error) {
        throw new InfrastructureError(`clone for ${name} failed: ${errorMessage(error)}`);
      }
      const model = session.modelOf(arm);
      if (model && model !== rpc.model) await rpc.switchModel(model);
      started(cloned.sessionId);
      return rpc;
    },
    ready: async () => undefined,
    endTurn: () => endTurn(session, run),
    lateEnd: () => endTurn(session, run).catch((): TurnEnd => NOTHING_ENDED),
    gates: () => undefined,
    // The live session is the next arm's to clone from: it stays open.
    release: async () => undefined,
    async harvest() {
      try {
        return {
          harvest: await harvestPatch(session.opts.cwd, armPatchFile(check.bonDir, arm), {
            base: check.head,
            git: gitOf(session, run),
          }),
        };
      } finally {
        // Reset even when the harvest failed: the next arm must never start on this arm's leftovers.
        try {
          await putTreeBack(session, run);
        } catch (error) {
          throw new InfrastructureError(`the tree could not be reset after ${name}: ${errorMessage(error)}`);
        }
      }
    },
  };
}
