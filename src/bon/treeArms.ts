// Best-of-N in worktrees: the primer reads in a worktree of its own, each arm is a fork of the primer's session
// in a worktree of its own (its own pi process), and the arms run at once. The user's tree is never written or
// reset: they can go on working in it. Each arm is judged in its tree (envelope, gates) and harvested from it.
// The arm and the primer themselves are ./arm.ts; this is where they work (and the gates' baseline on HEAD).
import { randomUUID } from 'node:crypto';
import { errorMessage, InfrastructureError, PhaseFailure } from '../contract/errors.js';
import type { RunEvent } from '../contract/events.js';
import type { RunEvents } from '../engine/runEvents.js';
import type { AgentSession } from '../harness/types.js';
import type { ArmTree } from './tree/armTree.js';
import { waitUnlessAborted, type GateTicket } from './spend/prefixGate.js';
import { armPatchFile, harvestPatch } from './patch/patch.js';
import type { SandboxSpec } from '../sandbox/wrap.js';
import { gateSignature } from '../gates/baseline.js';
import type { BonSession } from './session.js';
import { endTurn, NOTHING_ENDED, type TurnEnd } from './turn.js';
import { listed, primerWrites, type ArmPlace, type PrimerPlace } from './arm.js';
import {
  armEnv,
  boxedEnv,
  fencedEnv,
  gitOf,
  lensEnv,
  makeTree,
  prefixGate,
  runSetup,
  sandboxOf,
  treeCommands,
  treeOf,
} from './runTree.js';

export { ARM_PORT_BASE } from './runTree.js';

/**
 * The gates once on HEAD, in a worktree of their own, while the primer reads: a gate already red there is
 * pre-existing, not held against any arm (an arm that turns it green gets the credit). Both modes use it (the user's
 * tree is never where it runs). A baseline that cannot run leaves every gate held. A gate whose program cannot
 * start (outcome `setup`) is no test result: it is never pre-existing, and its one line (the command, the fix) is
 * returned, for the prime phase to stop the run on before the fan-out (exit 2).
 */
/** What an arm running a test command reads of its output: pi's bash tool keeps its last 50 KB (~4 bytes a token). */
const PI_BASH_OUTPUT_BYTES = 50 * 1024;

export async function runBaseline(session: BonSession, run: RunEvents): Promise<string | undefined> {
  const commands = session.opts.payloadCommands;
  if (commands.length === 0) return undefined;
  let cannot: string | undefined;
  const started = performance.now();
  let tree: ArmTree | undefined;
  const { baseline } = session;
  try {
    tree = await makeTree(session, run, 'baseline');
    // Its own stop (the run given up, or closed), never the primer's: it goes on beside the arms, whose gates need it.
    const signal = session.baseline.signal(session.run.signal);
    const sandbox = sandboxOf(session, tree);
    const env = boxedEnv(sandbox, tree, armEnv(session.opts.gateEnv, 0));
    await runSetup(session, run, 'prime', tree, armEnv(session.opts.gateEnv, 0), signal);
    const { commandGate } = await import('../gates/judges.js');
    const gates: Extract<RunEvent, { type: 'baseline' }>['gates'] = [];
    for (const cmd of treeCommands(session, tree.dir)) {
      if (signal.aborted) return undefined;
      // Counted as it prints: the forecast, made at the primer's end, may come while the suite still runs.
      let printed = 0;
      const count = (bytes: number) => {
        const next = Math.min(printed + bytes, PI_BASH_OUTPUT_BYTES);
        baseline.testOutputTokens += Math.ceil(next / 4) - Math.ceil(printed / 4);
        printed = next;
      };
      const report = await commandGate(cmd, {
        signal,
        runTag: run.adwId,
        env,
        onOutputBytes: count,
        ...(sandbox ? { sandbox } : {}),
      })();
      const setup = report.outcome === 'setup';
      const signature = report.ok || setup ? undefined : gateSignature(report, tree.dir);
      if (signature) baseline.preexisting.set(report.gate, signature);
      if (setup) cannot ??= report.motif ?? `gate \`${report.gate}\` cannot run`;
      // The signature travels in the event: a resumed run judges its arms against the same baseline.
      gates.push({
        gate: report.gate,
        ok: report.ok,
        ...(report.motif ? { motif: report.motif } : {}),
        ...(signature ? { signature: { ending: signature.ending, lines: [...signature.lines] } } : {}),
        ...(setup ? { setup: true } : {}),
      });
    }
    // Stopped on the way (the primer given up, the run interrupted): a gate cut short says nothing of HEAD.
    if (signal.aborted) return undefined;
    run.emit({
      type: 'baseline',
      adwId: run.adwId,
      ts: Date.now(),
      gates,
      seconds: (performance.now() - started) / 1000,
    });
    return cannot;
  } catch (error) {
    baseline.preexisting.clear();
    run.activity('prime', {
      kind: 'note',
      text: `the gates could not run on HEAD (${errorMessage(error)}): every red gate counts against its arm`,
    });
  } finally {
    if (tree) {
      session.trees.delete('baseline');
      await tree.release().catch(() => undefined);
    }
  }
  return cannot;
}

export function treePrimer(session: BonSession, run: RunEvents): PrimerPlace {
  let tree: ArmTree | undefined;
  // The baseline runs beside the primer's turn and goes on beside the arms (their gates wait for it). A gate that
  // cannot run there stops the primer at once and the run before the fan-out (exit 2): nothing would verify an arm;
  // seen after the fan-out, it stops the arms, and the harvest says it.
  const setupStop = new AbortController();
  let out = false;
  const cannotRun = (line: string) => {
    setupStop.abort();
    if (out) session.stopBatch({ motif: line, kind: 'aborted' });
  };
  const settled = () => session.baseline.ready();
  return {
    verb: 'forked',
    async open(sessionId) {
      try {
        tree = await makeTree(session, run, 'prime');
      } catch (error) {
        throw new InfrastructureError(
          `the primer has no worktree: ${errorMessage(error)} (--in-place runs the arms in your tree)`,
        );
      }
      void session.baseline.start(() => runBaseline(session, run), cannotRun);
      const sandbox = sandboxOf(session, tree);
      const agent = await session
        .open(sessionId, 'prime', {
          cwd: tree.dir,
          env: boxedEnv(sandbox, tree, fencedEnv(session, run, session.opts.env)),
          ...(sandbox ? { sandbox } : {}),
        })
        .catch(async (error: unknown) => {
          session.abandonPrimer();
          await settled(); // a gate seen not to run is the better line
          throw error;
        });
      if (setupStop.signal.aborted) {
        session.rpc = agent;
        await settled(); // the baseline said so before the primer's first token
      }
      return agent;
    },
    turn: (options) => ({
      ...options,
      signal: options.signal ? AbortSignal.any([options.signal, setupStop.signal]) : setupStop.signal,
    }),
    settled,
    async fanOut() {
      // Not waited for: known already to say no, it stops the run here; else the arms go and it goes on beside them.
      if (session.baseline.cannot) throw new InfrastructureError(session.baseline.cannot);
      out = true;
    },
    async refuseWrites() {
      const after = await treeOf(session, run, tree!.dir, tree!.own);
      const touched = primerWrites(after.dirty, after.untracked);
      if (touched.length > 0)
        throw new PhaseFailure(
          `the primer changed its tree (${listed(touched)}): it must only read`,
          undefined,
          'verdict',
        );
    },
    async primed(agent) {
      session.primerMessages = await agent.messageCount();
    },
  };
}

export function treeArm(session: BonSession, run: RunEvents, arm: number, signal: AbortSignal): ArmPlace {
  const name = `arm_${arm}`;
  const check = session.check!;
  const model = session.modelOf(arm);
  const env = { ...fencedEnv(session, run, armEnv(session.opts.env, arm)), ...lensEnv(session) };
  let tree: ArmTree | undefined;
  let sandbox: SandboxSpec | undefined;
  let setupOwn: string[] = [];
  let ticket: GateTicket | undefined;
  return {
    async prepare() {
      try {
        tree = await makeTree(session, run, name);
      } catch (error) {
        const motif = errorMessage(error);
        throw new PhaseFailure(
          motif.startsWith(`no worktree for ${name}:`) ? motif : `no worktree for ${name}: ${motif}`,
          undefined,
          'crashed',
        );
      }
      // A resumed run whose first life never recorded the baseline runs it now (started once: the primer did).
      void session.baseline.start(() => runBaseline(session, run));
      await runSetup(session, run, name, tree, armEnv(session.opts.gateEnv, arm), signal, (files) => {
        setupOwn = files;
      });
      sandbox = sandboxOf(session, tree);
    },
    async open(started) {
      const sessionId = randomUUID();
      started(sessionId);
      let agent: AgentSession;
      try {
        agent = await session.open(sessionId, name, {
          cwd: tree!.dir,
          model,
          env: boxedEnv(sandbox, tree!, env),
          fork: { from: session.primerFile!, messageCount: session.primerMessages },
          ...(sandbox ? { sandbox } : {}),
        });
      } catch (error) {
        // Ctrl-C ends every pi of the run, the ones still starting included: that is the user's stop, not a failure.
        if (signal.aborted) throw new PhaseFailure('interrupted by the user', undefined, 'interrupted');
        throw error;
      }
      session.armAgents.set(arm, agent);
      return agent;
    },
    async ready() {
      const entered = prefixGate(session).enter(arm, model);
      ticket = entered;
      if (entered.after !== undefined) {
        run.activity(name, {
          kind: 'note',
          text: `waits for arm ${entered.after}'s first token: its prompt is then cached on ${model ?? 'its model'}`,
        });
        await waitUnlessAborted(
          entered.ready,
          signal,
          () =>
            new PhaseFailure(
              `aborted before its first request (it waited for arm ${entered.after})`,
              undefined,
              'aborted',
            ),
        );
      }
      return entered.open;
    },
    endTurn: async (agent) => ({
      ...(await endTurn(session, run, agent)),
      ownGitChanges: await tree!.ownActs(),
      refActs: tree!.refActs(),
    }),
    async lateEnd(agent, turnEnded) {
      // An arm that ends without a token (red, aborted) lets the arms waiting on it go all the same.
      ticket?.open();
      const late = await endTurn(session, run, agent).catch((): TurnEnd => NOTHING_ENDED);
      if (!turnEnded && tree) {
        late.ownGitChanges = await tree.ownActs().catch(() => []);
        late.refActs = tree.refActs();
      }
      return late;
    },
    gates: () => ({
      cwd: tree!.dir,
      commands: treeCommands(session, tree!.dir),
      env: boxedEnv(sandbox, tree!, armEnv(session.opts.gateEnv, arm)),
      ...(sandbox ? { sandbox } : {}),
    }),
    async release(agent) {
      session.armAgents.delete(arm);
      await agent?.close().catch(() => undefined);
    },
    async harvest() {
      if (!tree) return {};
      try {
        return {
          harvest: await harvestPatch(tree.dir, armPatchFile(check.bonDir, arm), {
            base: check.head,
            git: gitOf(session, run),
            exclude: [...tree.own, ...setupOwn],
            privateFrom: check.root,
          }),
        };
      } catch (error) {
        return { failure: `its work could not be harvested: ${errorMessage(error)}` };
      } finally {
        session.trees.delete(name);
        await tree.release().catch(() => undefined);
      }
    },
  };
}
