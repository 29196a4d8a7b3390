// Best-of-N in worktrees: the primer reads in a worktree of its own, each arm is a fork of the primer's session
// in a worktree of its own (its own pi process), and the arms run at once. The user's tree is never written or
// reset: they can go on working in it. Each arm is judged in its tree (envelope, gates) and harvested from it.
// The arm and the primer themselves are ./arm.ts; this is where they work (and the gates' baseline on HEAD).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errorMessage, InfrastructureError, PhaseFailure } from '../contract/errors.js';
import type { RunEvent } from '../contract/events.js';
import type { GateCommand } from '../gates/judges.js';
import { treeState, type TreeState } from '../process/git.js';
import { withPrivateGit } from './git/private.js';
import type { RunEvents } from '../engine/runEvents.js';
import type { AgentSession } from '../harness/types.js';
import { prepareArmTree, type ArmTree } from './tree/armTree.js';
import { FENCE_ENV } from '../../.pi/lib/fence.js';
import { LENS_ENV } from '../../.pi/lib/lens.js';
import { PrefixGate, waitUnlessAborted, type GateTicket } from './spend/prefixGate.js';
import { armPatchFile, harvestPatch } from './patch/patch.js';
import { runFolder } from './tree/worktrees.js';
import { piAgentDir, sandboxEnv } from '../sandbox/policy.js';
import type { SandboxSpec } from '../sandbox/wrap.js';
import { gateSignature } from '../gates/baseline.js';
import type { BonSession } from './session.js';
import { endTurn, NOTHING_ENDED, type TurnEnd } from './turn.js';
import { listed, primerWrites, type ArmPlace, type PrimerPlace } from './arm.js';
import { sessionHeader } from '../trace/jsonl.js';

/** The first port an arm's dev server may take: arm k gets BASE + k, so servers of arms at once never collide. */
export const ARM_PORT_BASE = 41_000;

function gitOf(session: BonSession, run: RunEvents) {
  return { env: session.opts.gateEnv, runTag: run.adwId };
}

/** What changed in an arm's (or the primer's) tree since the base, read through the factory's private git. */
async function treeOf(session: BonSession, run: RunEvents, tree: string, own: readonly string[]): Promise<TreeState> {
  const check = session.check!;
  return withPrivateGit(check.root, tree, check.head, gitOf(session, run), (git) => treeState(tree, git), own);
}

/** A gate's folder inside the arm's tree, or undefined when it lies outside the user's work tree. */
function intoTree(root: string, tree: string, folder: string): string | undefined {
  const rel = path.relative(root, path.resolve(root, folder));
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  return path.join(tree, rel);
}

function treeCommands(session: BonSession, tree: string): GateCommand[] {
  const root = session.check!.root;
  return session.opts.payloadCommands.map((c) => ({ ...c, cwd: intoTree(root, tree, c.cwd) ?? c.cwd }));
}

/** Makes a tree of the run (kept by the session until it closes); the spec comes along when git does not carry it. */
async function makeTree(session: BonSession, run: RunEvents, name: string): Promise<ArmTree> {
  const check = session.check!;
  const gateFolders = session.opts.payloadCommands.map((c) => path.relative(check.root, path.resolve(check.root, c.cwd)));
  const tree = await prepareArmTree(check.root, { run: run.adwId, name, commit: check.head, gateFolders, git: gitOf(session, run), env: session.opts.gateEnv });
  session.trees.set(name, tree);
  const spec = path.resolve(session.opts.cwd, check.spec);
  const rel = path.relative(check.root, spec);
  if (!rel.startsWith('..') && !path.isAbsolute(rel) && !fs.existsSync(path.join(tree.dir, rel))) {
    fs.mkdirSync(path.dirname(path.join(tree.dir, rel)), { recursive: true });
    fs.copyFileSync(spec, path.join(tree.dir, rel));
  }
  return tree;
}

/**
 * The OS sandbox a tree's programs run in (../sandbox/policy.ts): they write the tree, its scratch, the sessions
 * folder (pi's session file) and the harness traces (the node's), nothing else; the ledger and the primer's session
 * (every arm forks it) stay read-only. None when the run has no sandbox (`--unsandboxed`).
 */
const specs = new WeakMap<ArmTree, SandboxSpec>();

function sandboxOf(session: BonSession, tree: ArmTree): SandboxSpec | undefined {
  const sandbox = session.opts.sandbox;
  if (!sandbox) return undefined;
  // Once per tree: its setup, its pi and its gates share it (an arm's tree is made once the primer's file is known).
  const made = specs.get(tree);
  if (made) return made;
  const ws = session.opts.workspace;
  for (const dir of [ws.sessionsDir, ws.harnessTracesDir]) fs.mkdirSync(dir, { recursive: true });
  const agent = piAgentDir(session.opts.env ?? process.env);
  const readOnly = [ws.ledgerFile, ...(session.primerFile ? [session.primerFile] : []), ...agent.readOnly];
  const spec = { sandbox, policy: { writable: [tree.dir, tree.scratch, ws.sessionsDir, ws.harnessTracesDir, ...agent.writable], readOnly, cwd: tree.dir } };
  specs.set(tree, spec);
  return spec;
}

/** The environment of a tree's programs: in a sandbox, their temp folder is the tree's scratch. */
function boxedEnv(spec: SandboxSpec | undefined, tree: ArmTree, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return spec ? sandboxEnv(env, tree.scratch) : env;
}

/** What an arm's gates get besides the run's environment: its number and a port of its own. */
function armEnv(base: NodeJS.ProcessEnv | undefined, arm: number): NodeJS.ProcessEnv {
  return { ...(base ?? process.env), FACTORY_ARM: String(arm), FACTORY_PORT: String(ARM_PORT_BASE + arm) };
}

/**
 * The fence an agent of the run works behind (../../.pi/lib/fence.ts): the user's tree and every tree of the run,
 * its own excepted by the node (it is the agent's project). The arm's agent also gets its number and port.
 */
function fencedEnv(session: BonSession, run: RunEvents, base: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  const root = session.check!.root;
  const fenced = [root, runFolder(root, run.adwId, session.opts.gateEnv)];
  return { ...(base ?? process.env), [FENCE_ENV]: JSON.stringify(fenced) };
}

/**
 * How an arm is shown to its model (../../.pi/lib/lens.ts): at the primer's folder (its session's header names it),
 * with the primer's cache-routing key, so that every arm's prompt begins with the primer's byte for byte.
 */
function lensEnv(session: BonSession): Record<string, string> {
  const shown = session.primerFile ? sessionHeader(session.primerFile)?.cwd : undefined;
  if (typeof shown !== 'string' || !path.isAbsolute(shown)) return {};
  return { [LENS_ENV]: JSON.stringify({ shown, ...(session.primer.sessionId ? { key: session.primer.sessionId } : {}) }) };
}

/** The run's gate on first requests (./spend/prefixGate.ts). */
function prefixGate(session: BonSession): PrefixGate {
  session.prefixGate ??= new PrefixGate();
  return session.prefixGate;
}

/**
 * `payload.setup` in the arm's tree before the arm starts (an install), with the gates' environment: red, it makes
 * the arm red in one line at zero tokens, and the other arms go on.
 */
async function runSetup(session: BonSession, run: RunEvents, name: string, armTree: ArmTree, env: NodeJS.ProcessEnv, signal: AbortSignal, written: (files: string[]) => void = () => undefined): Promise<void> {
  const setup = session.opts.setup;
  if (!setup) return;
  const { dir: tree, own } = armTree;
  const cwd = intoTree(session.check!.root, tree, setup.cwd) ?? tree;
  run.activity(name, { kind: 'note', text: `setup: ${setup.run}` });
  const { commandGate } = await import('../gates/judges.js');
  const sandbox = sandboxOf(session, armTree);
  const report = await commandGate({ ...setup, cwd }, { signal, env: boxedEnv(sandbox, armTree, env), runTag: run.adwId, ...(sandbox ? { sandbox } : {}) })();
  // What the setup wrote (not ignored) is the tree's, not the arm's work: it stays out of the arm's patch, a red
  // setup's included (its arm is still harvested: what it left must not pass for work).
  const after = await treeOf(session, run, tree, own).catch((error: unknown) => {
    if (report.ok) throw error;
    return undefined;
  });
  written(after ? [...after.dirty, ...after.untracked] : []);
  if (!report.ok) throw new PhaseFailure(`setup ${report.motif ?? `\`${setup.run}\` failed`}`, report.outputTail, 'gate');
}

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
      const report = await commandGate(cmd, { signal, runTag: run.adwId, env, onOutputBytes: count, ...(sandbox ? { sandbox } : {}) })();
      const setup = report.outcome === 'setup';
      const signature = report.ok || setup ? undefined : gateSignature(report, tree.dir);
      if (signature) baseline.preexisting.set(report.gate, signature);
      if (setup) cannot ??= report.motif ?? `gate \`${report.gate}\` cannot run`;
      // The signature travels in the event: a resumed run judges its arms against the same baseline.
      gates.push({ gate: report.gate, ok: report.ok, ...(report.motif ? { motif: report.motif } : {}), ...(signature ? { signature: { ending: signature.ending, lines: [...signature.lines] } } : {}), ...(setup ? { setup: true } : {}) });
    }
    // Stopped on the way (the primer given up, the run interrupted): a gate cut short says nothing of HEAD.
    if (signal.aborted) return undefined;
    run.emit({ type: 'baseline', adwId: run.adwId, ts: Date.now(), gates, seconds: (performance.now() - started) / 1000 });
    return cannot;
  } catch (error) {
    baseline.preexisting.clear();
    run.activity('prime', { kind: 'note', text: `the gates could not run on HEAD (${errorMessage(error)}): every red gate counts against its arm` });
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
        throw new InfrastructureError(`the primer has no worktree: ${errorMessage(error)} (--in-place runs the arms in your tree)`);
      }
      void session.baseline.start(() => runBaseline(session, run), cannotRun);
      const sandbox = sandboxOf(session, tree);
      const agent = await session.open(sessionId, 'prime', { cwd: tree.dir, env: boxedEnv(sandbox, tree, fencedEnv(session, run, session.opts.env)), ...(sandbox ? { sandbox } : {}) }).catch(async (error: unknown) => {
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
    turn: (options) => ({ ...options, signal: options.signal ? AbortSignal.any([options.signal, setupStop.signal]) : setupStop.signal }),
    settled,
    async fanOut() {
      // Not waited for: known already to say no, it stops the run here; else the arms go and it goes on beside them.
      if (session.baseline.cannot) throw new InfrastructureError(session.baseline.cannot);
      out = true;
    },
    async refuseWrites() {
      const after = await treeOf(session, run, tree!.dir, tree!.own);
      const touched = primerWrites(after.dirty, after.untracked);
      if (touched.length > 0) throw new PhaseFailure(`the primer changed its tree (${listed(touched)}): it must only read`, undefined, 'verdict');
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
        throw new PhaseFailure(motif.startsWith(`no worktree for ${name}:`) ? motif : `no worktree for ${name}: ${motif}`, undefined, 'crashed');
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
        agent = await session.open(sessionId, name, { cwd: tree!.dir, model, env: boxedEnv(sandbox, tree!, env), fork: { from: session.primerFile!, messageCount: session.primerMessages }, ...(sandbox ? { sandbox } : {}) });
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
        run.activity(name, { kind: 'note', text: `waits for arm ${entered.after}'s first token: its prompt is then cached on ${model ?? 'its model'}` });
        await waitUnlessAborted(entered.ready, signal, () => new PhaseFailure(`aborted before its first request (it waited for arm ${entered.after})`, undefined, 'aborted'));
      }
      return entered.open;
    },
    endTurn: async (agent) => ({ ...(await endTurn(session, run, agent)), ownGitChanges: await tree!.ownActs(), refActs: tree!.refActs() }),
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
    gates: () => ({ cwd: tree!.dir, commands: treeCommands(session, tree!.dir), env: boxedEnv(sandbox, tree!, armEnv(session.opts.gateEnv, arm)), ...(sandbox ? { sandbox } : {}) }),
    async release(agent) {
      session.armAgents.delete(arm);
      await agent?.close().catch(() => undefined);
    },
    async harvest() {
      if (!tree) return {};
      try {
        return { harvest: await harvestPatch(tree.dir, armPatchFile(check.bonDir, arm), { base: check.head, git: gitOf(session, run), exclude: [...tree.own, ...setupOwn], privateFrom: check.root }) };
      } catch (error) {
        return { failure: `its work could not be harvested: ${errorMessage(error)}` };
      } finally {
        session.trees.delete(name);
        await tree.release().catch(() => undefined);
      }
    },
  };
}
