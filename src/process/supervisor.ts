// Every child the factory starts goes through here: its own process group (so pi's tools die with it), a run
// tag in its environment (so a test can prove nothing is left), and one kill ladder. The registry lets the
// lifecycle root (../lifecycle.ts) end every child on Ctrl-C, SIGTERM or SIGHUP of the cockpit. Long-lived children (pi
// sessions, harness runs) are spawned here; programs run to their end go through run.ts, which adopts them.
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';

/** A child under supervision: its own process group, in the live set until it has exited and been swept. */
export interface Supervised {
  readonly pid: number;
  /** Resolves once the process has exited (code or signal). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM the group, then SIGKILL it after `graceMs` if it is still alive. */
  kill(graceMs?: number): Promise<void>;
  /**
   * Ends everything the child started that is still alive — its descendants and every process carrying its
   * spawn id (a background or `setsid` job adopted by init) — and leaves the child itself running. Resolves
   * with the pids ended, once they are gone.
   */
  endStrays(): Promise<number[]>;
}

export interface SupervisedChild extends Supervised {
  readonly child: ChildProcessWithoutNullStreams;
}

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Tag written into the child's env as FACTORY_RUN_TAG. */
  runTag?: string;
  /**
   * How many processes stand between the spawned one and the program (a sandbox: bwrap and the init of its pid
   * namespace): they and the program are never a stray of it.
   */
  wrappers?: number;
}

const live = new Set<Supervised>();

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Every live descendant of `pid` (Linux /proc; empty elsewhere). pi's bash tool starts commands in process
 * groups of their own, so signalling pi's group alone can miss them when pi itself is SIGKILLed: the tree is
 * read before the ladder starts and swept after it.
 */
export function descendants(pid: number): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (!fields) continue; // exited meanwhile
    const ppid = Number(fields[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function killPids(pids: number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * The environment of a child to supervise: `env` with the run tag, and a spawn id of its own. The spawn id is
 * inherited by every descendant, even one that left the process group and was adopted by init (pi's bash tool
 * starts commands in sessions of their own): the sweep after the child ends finds them by it.
 */
export function supervisedEnv(base: NodeJS.ProcessEnv, runTag?: string): { env: NodeJS.ProcessEnv; spawnId: string } {
  const env = { ...base };
  if (runTag) env.FACTORY_RUN_TAG = runTag;
  const spawnId = randomUUID();
  env.FACTORY_SPAWN_ID = spawnId;
  return { env, spawnId };
}

/** What `adopt` gives the module that started the child (src/process/run.ts). */
export interface Adopted extends Supervised {
  /** Resolves once the child has exited and what it left behind was swept. */
  readonly swept: Promise<void>;
}

/**
 * Puts a child under supervision: it must have been spawned detached (its own process group) with the
 * environment of `supervisedEnv(…, spawnId)`. It joins the live set (killAllChildren reaches it) until it has
 * exited and its group and spawn id were swept.
 */
export function adopt(child: ChildProcess, spawnId: string, wrappers = 0): Adopted {
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', () => {
      done = true;
      resolve({ code: null, signal: null });
    });
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  const pid = child.pid ?? -1;
  const supervised: Adopted = {
    pid,
    exited,
    async kill(graceMs = 1500) {
      // The ladder: stdin closed (a well-behaved child ends on EOF), SIGTERM to the group, SIGKILL after the grace.
      child.stdin?.destroy();
      if (pid > 0) {
        const tree = done ? [] : descendants(pid);
        // Even after the leader exits, its group may hold orphans: always signal the group.
        signalGroup(pid, 'SIGTERM');
        if (!done) {
          const timer = new Promise<'timeout'>((r) => setTimeout(r, graceMs, 'timeout').unref());
          const outcome = await Promise.race([exited.then(() => 'exited' as const), timer]);
          if (outcome === 'timeout') signalGroup(pid, 'SIGKILL');
        }
        signalGroup(pid, 'SIGKILL');
        killPids(tree);
        killPids(processesWithEnv('FACTORY_SPAWN_ID', spawnId));
      }
      await exited;
    },
    endStrays: () => endStrays(pid, spawnId, wrappers),
    swept: exited.then(() => {
      // The leader is gone; sweep its group and whatever still carries its spawn id (a tool's grandchild).
      if (pid > 0) {
        signalGroup(pid, 'SIGKILL');
        killPids(processesWithEnv('FACTORY_SPAWN_ID', spawnId));
      }
      live.delete(supervised);
    }),
  };
  live.add(supervised);
  return supervised;
}

const STRAY_ROUNDS = 5;
const STRAY_WAIT_MS = 1000;

/**
 * SIGKILLs every descendant of `leader` and every process carrying `spawnId`, the leader excepted, in rounds
 * (a job that forks while it is being ended is caught by the next round), then waits until they are gone.
 * By what the child started, never by name: another program of the user's with the same name is not touched.
 */
async function endStrays(leader: number, spawnId: string, wrappers: number): Promise<number[]> {
  const ended = new Set<number>();
  if (leader <= 0) return [];
  const kept = new Set(wrapperChain(leader, wrappers));
  for (let round = 0; round < STRAY_ROUNDS; round += 1) {
    const found = [...new Set([...descendants(leader), ...processesWithEnv('FACTORY_SPAWN_ID', spawnId)])].filter(
      (p) => !kept.has(p) && !ended.has(p),
    );
    if (found.length === 0) break;
    for (const p of found) {
      signalGroupOf(p, leader);
      ended.add(p);
    }
    killPids(found);
  }
  const deadline = Date.now() + STRAY_WAIT_MS;
  const alive = () => [...ended].some((p) => isRunning(p));
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return [...ended];
}

/** The leader and, `depth` deep, the first child of each: the wrappers and the program they run. */
function wrapperChain(leader: number, depth: number): number[] {
  const chain = [leader];
  for (let level = 0; level < depth; level += 1) {
    const parent = chain[chain.length - 1]!;
    const first = descendants(parent)
      .filter((p) => parentOf(p) === parent)
      .sort((a, b) => a - b)[0];
    if (first === undefined) break;
    chain.push(first);
  }
  return chain;
}

/** The fields of /proc/<pid>/stat after the command name (state, ppid, pgrp, session…), or undefined. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: split after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** SIGKILL the process group a stray leads (its own jobs), never the group of the leader itself. */
function signalGroupOf(pid: number, leader: number): void {
  if (pid === leader || Number(statFields(pid)?.[2]) !== pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}

/** Alive and not a zombie (a zombie is dead: only its parent's wait is missing). */
function isRunning(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
}

/** Spawns a long-lived child under supervision (pi sessions, harness runs): its streams are the caller's to drive. */
export function spawnSupervised(command: string, args: string[], opts: SpawnOptions): SupervisedChild {
  const { env, spawnId } = supervisedEnv(opts.env, opts.runTag);
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env,
    detached: true, // own process group: the kill ladder reaches grandchildren (bash tools)
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as ChildProcessWithoutNullStreams;
  const { pid, exited, kill, endStrays: strays } = adopt(child, spawnId, opts.wrappers);
  return { child, pid, exited, kill, endStrays: strays };
}

/** End every live child (used by the lifecycle root on exit or a fatal signal). */
export async function killAllChildren(graceMs = 1000): Promise<void> {
  await Promise.all([...live].map((c) => c.kill(graceMs)));
}

/** Synchronous last resort for process 'exit': no awaiting possible there. */
export function killAllChildrenSync(): void {
  for (const c of live) if (c.pid > 0) signalGroup(c.pid, 'SIGKILL');
}

export function liveChildren(): number {
  return live.size;
}

/** The parent pid of a live process (Linux /proc), or undefined. */
export function parentOf(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : undefined;
}

/** pids of live processes (Linux /proc) whose environment carries FACTORY_RUN_TAG=<tag>, this process excluded. */
export function taggedProcesses(tag: string): number[] {
  return processesWithEnv('FACTORY_RUN_TAG', tag);
}

/** pids of live processes (Linux /proc) whose environment holds `name=value`, this process excluded. */
function processesWithEnv(name: string, value: string): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const needle = `${name}=${value}`;
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(needle)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/**
 * End what a killed cockpit left behind for one run (its pi, its tools): a resumed session must never have two
 * writers. SIGTERM, a short grace, then SIGKILL. Returns how many were found.
 */
export async function endTagged(tag: string, graceMs = 1000): Promise<number> {
  const pids = taggedProcesses(tag);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && taggedProcesses(tag).length > 0) await new Promise((r) => setTimeout(r, 50));
  killPids(taggedProcesses(tag));
  return pids.length;
}
