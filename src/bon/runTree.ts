// A tree of a best-of-N run (./treeArms.ts's primer, baseline and arms work in one each): made at the run's HEAD, its
// OS sandbox, what its programs run with (the arm's number and port, the fence, the lens), its payload.setup, and how
// its changes are read (the factory's private git).
import fs from 'node:fs';
import path from 'node:path';
import { PhaseFailure } from '../contract/errors.js';
import type { GateCommand } from '../gates/judges.js';
import type { TreeState } from '../process/git.js';
import { treeState } from '../process/git.js';
import { withPrivateGit } from './git/private.js';
import type { RunEvents } from '../engine/runEvents.js';
import { prepareArmTree, type ArmTree } from './tree/armTree.js';
import { FENCE_ENV } from '../../.pi/lib/fence.js';
import { LENS_ENV } from '../../.pi/lib/lens.js';
import { PrefixGate } from './spend/prefixGate.js';
import { runFolder } from './tree/worktrees.js';
import { piAgentDir, sandboxEnv } from '../sandbox/policy.js';
import type { SandboxSpec } from '../sandbox/wrap.js';
import type { BonSession } from './session.js';
import { sessionHeader } from '../trace/jsonl.js';

/** The first port an arm's dev server may take: arm k gets BASE + k, so servers of arms at once never collide. */
export const ARM_PORT_BASE = 41_000;

export function gitOf(session: BonSession, run: RunEvents) {
  return { env: session.opts.gateEnv, runTag: run.adwId };
}

/** What changed in an arm's (or the primer's) tree since the base, read through the factory's private git. */
export async function treeOf(
  session: BonSession,
  run: RunEvents,
  tree: string,
  own: readonly string[],
): Promise<TreeState> {
  const check = session.check!;
  return withPrivateGit(check.root, tree, check.head, gitOf(session, run), (git) => treeState(tree, git), own);
}

/** A gate's folder inside the arm's tree, or undefined when it lies outside the user's work tree. */
export function intoTree(root: string, tree: string, folder: string): string | undefined {
  const rel = path.relative(root, path.resolve(root, folder));
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  return path.join(tree, rel);
}

export function treeCommands(session: BonSession, tree: string): GateCommand[] {
  const root = session.check!.root;
  return session.opts.payloadCommands.map((c) => ({ ...c, cwd: intoTree(root, tree, c.cwd) ?? c.cwd }));
}

/** Makes a tree of the run (kept by the session until it closes); the spec comes along when git does not carry it. */
export async function makeTree(session: BonSession, run: RunEvents, name: string): Promise<ArmTree> {
  const check = session.check!;
  const gateFolders = session.opts.payloadCommands.map((c) =>
    path.relative(check.root, path.resolve(check.root, c.cwd)),
  );
  const tree = await prepareArmTree(check.root, {
    run: run.adwId,
    name,
    commit: check.head,
    gateFolders,
    git: gitOf(session, run),
    env: session.opts.gateEnv,
  });
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

export function sandboxOf(session: BonSession, tree: ArmTree): SandboxSpec | undefined {
  const sandbox = session.opts.sandbox;
  if (!sandbox) return undefined;
  // Once per tree: its setup, its pi and its gates share it (an arm's tree is made once the primer's file is known).
  const made = specs.get(tree);
  if (made) return made;
  const ws = session.opts.workspace;
  for (const dir of [ws.sessionsDir, ws.harnessTracesDir]) fs.mkdirSync(dir, { recursive: true });
  const agent = piAgentDir(session.opts.env ?? process.env);
  const readOnly = [ws.ledgerFile, ...(session.primerFile ? [session.primerFile] : []), ...agent.readOnly];
  const spec = {
    sandbox,
    policy: {
      writable: [tree.dir, tree.scratch, ws.sessionsDir, ws.harnessTracesDir, ...agent.writable],
      readOnly,
      cwd: tree.dir,
    },
  };
  specs.set(tree, spec);
  return spec;
}

/** The environment of a tree's programs: in a sandbox, their temp folder is the tree's scratch. */
export function boxedEnv(spec: SandboxSpec | undefined, tree: ArmTree, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return spec ? sandboxEnv(env, tree.scratch) : env;
}

/** What an arm's gates get besides the run's environment: its number and a port of its own. */
export function armEnv(base: NodeJS.ProcessEnv | undefined, arm: number): NodeJS.ProcessEnv {
  return { ...(base ?? process.env), FACTORY_ARM: String(arm), FACTORY_PORT: String(ARM_PORT_BASE + arm) };
}

/**
 * The fence an agent of the run works behind (../../.pi/lib/fence.ts): the user's tree and every tree of the run,
 * its own excepted by the node (it is the agent's project). The arm's agent also gets its number and port.
 */
export function fencedEnv(session: BonSession, run: RunEvents, base: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  const root = session.check!.root;
  const fenced = [root, runFolder(root, run.adwId, session.opts.gateEnv)];
  return { ...(base ?? process.env), [FENCE_ENV]: JSON.stringify(fenced) };
}

/**
 * How an arm is shown to its model (../../.pi/lib/lens.ts): at the primer's folder (its session's header names it),
 * with the primer's cache-routing key, so that every arm's prompt begins with the primer's byte for byte.
 */
export function lensEnv(session: BonSession): Record<string, string> {
  const shown = session.primerFile ? sessionHeader(session.primerFile)?.cwd : undefined;
  if (typeof shown !== 'string' || !path.isAbsolute(shown)) return {};
  return {
    [LENS_ENV]: JSON.stringify({ shown, ...(session.primer.sessionId ? { key: session.primer.sessionId } : {}) }),
  };
}

/** The run's gate on first requests (./spend/prefixGate.ts). */
export function prefixGate(session: BonSession): PrefixGate {
  session.prefixGate ??= new PrefixGate();
  return session.prefixGate;
}

/**
 * `payload.setup` in the arm's tree before the arm starts (an install), with the gates' environment: red, it makes
 * the arm red in one line at zero tokens, and the other arms go on.
 */
export async function runSetup(
  session: BonSession,
  run: RunEvents,
  name: string,
  armTree: ArmTree,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  written: (files: string[]) => void = () => undefined,
): Promise<void> {
  const setup = session.opts.setup;
  if (!setup) return;
  const { dir: tree, own } = armTree;
  const cwd = intoTree(session.check!.root, tree, setup.cwd) ?? tree;
  run.activity(name, { kind: 'note', text: `setup: ${setup.run}` });
  const { commandGate } = await import('../gates/judges.js');
  const sandbox = sandboxOf(session, armTree);
  const report = await commandGate(
    { ...setup, cwd },
    { signal, env: boxedEnv(sandbox, armTree, env), runTag: run.adwId, ...(sandbox ? { sandbox } : {}) },
  )();
  // What the setup wrote (not ignored) is the tree's, not the arm's work: it stays out of the arm's patch, a red
  // setup's included (its arm is still harvested: what it left must not pass for work).
  const after = await treeOf(session, run, tree, own).catch((error: unknown) => {
    if (report.ok) throw error;
    return undefined;
  });
  written(after ? [...after.dirty, ...after.untracked] : []);
  if (!report.ok)
    throw new PhaseFailure(`setup ${report.motif ?? `\`${setup.run}\` failed`}`, report.outputTail, 'gate');
}
