// A program run to its end: git, the gates' commands, the doctor's probes, `pi --version`. One helper (timeout,
// cancel signal, output buffering and limits, spawn errors) under the supervisor: the program starts in a process
// group of its own with a spawn id, joins the live set (killAllChildren reaches it), and every way of ending it
// early (timeout, cancel, output limit) is the supervisor's kill ladder on the whole group, never a signal to the
// leader alone. Never throws for a program that fails: the outcome says how it ended.
//
// Node's own spawn, not execa: execa 9 costs ~130 ms to import on Node 20 (measured here), and git runs on the way
// to every command's first pi spawn (bench P2). What execa would add (a promise, buffers, a timeout, a cancel
// signal) is the few lines below; its forced kill would reach the leader only, where the ladder reaches the group.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adopt, supervisedEnv } from './supervisor.js';

export interface RunOptions {
  /** Default: the cockpit's own folder. */
  cwd?: string;
  /** The program's whole environment (nothing is added but the run tag and the spawn id). Default: the cockpit's. */
  env?: NodeJS.ProcessEnv;
  /** Written into the program's environment as FACTORY_RUN_TAG (so a test can prove nothing is left). */
  runTag?: string;
  /** Ended (the kill ladder) after this long; `timedOut` then. Default: never. */
  timeoutMs?: number;
  /** Ended (the kill ladder) when this aborts; `aborted` then. Aborted already: the program is not started. */
  signal?: AbortSignal;
  /** The ladder's grace between SIGTERM and SIGKILL of the group. Default 1000 ms. */
  killGraceMs?: number;
  /**
   * Bytes kept of stdout and of stderr, each. A program whose piped output passes it is ended (`outputLimited`);
   * what it wrote up to the limit is kept. Default 100 MB; Infinity = no limit.
   */
  maxOutputBytes?: number;
  /**
   * Stdout to a temporary file, read back once the program has ended, instead of a pipe. Node's stdio "pipes" are
   * socket pairs: a Node program that ends with process.exit() can lose the end of a long output written to one
   * (pi --list-models does), never when it writes to a file. The limit then cuts what is read back.
   */
  stdoutToFile?: boolean;
  /** False: the output is not kept (`stdout`/`stderr` stay empty), only given to `onOutput`. Default true. */
  keepOutput?: boolean;
  /** Every chunk as it arrives, stdout and stderr interleaved in their order of arrival. */
  onOutput?(chunk: Buffer, from: 'stdout' | 'stderr'): void;
  /**
   * How long the pipes may stay open once the program has exited and its group was swept (a descendant that left
   * both the group and the spawn id may hold them); they are then closed. Default 500 ms.
   */
  drainMs?: number;
}

export interface RunOutcome {
  /** Exit code; null when ended by a signal or never started. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
  /** Ended by the cancel signal (or never started because it was aborted already). */
  aborted: boolean;
  /** Ended because its output passed `maxOutputBytes` (or its stdout file was cut there). */
  outputLimited: boolean;
  /** The program could not be started: `code` is the errno name (ENOENT, EACCES …) when there is one. */
  spawnError?: { code?: string; message: string };
  /** From the start to the end of the program (the helper's own load not counted). */
  ms: number;
}

const DEFAULT_MAX_OUTPUT_BYTES = 100_000_000;
const DEFAULT_KILL_GRACE_MS = 1000;
const DEFAULT_DRAIN_MS = 500;
/** The longest a drain goes on while a descendant that holds the pipes keeps writing into them. */
const DRAIN_CAP_MS = 5_000;

const EMPTY = Buffer.alloc(0);

/** The first `max` bytes of a file (and whether there was more); removes the file's folder. */
function readBack(dir: string, file: string, max: number): { data: Buffer; cut: boolean } {
  try {
    const size = fs.statSync(file).size;
    const length = Math.min(size, max);
    const data = Buffer.alloc(length);
    const fd = fs.openSync(file, 'r');
    try {
      let read = 0;
      while (read < length) {
        const n = fs.readSync(fd, data, read, length - read, read);
        if (n === 0) break;
        read += n;
      }
      return { data: data.subarray(0, read), cut: size > max };
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return { data: EMPTY, cut: false };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `command` with `args` (never a shell) to its end. See RunOptions for what can end it early. */
export async function runToEnd(command: string, args: readonly string[], opts: RunOptions = {}): Promise<RunOutcome> {
  const ended = { timedOut: false, aborted: false, outputLimited: false };
  if (opts.signal?.aborted)
    return { code: null, signal: null, stdout: EMPTY, stderr: EMPTY, ...ended, aborted: true, ms: 0 };
  const started = performance.now();
  const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const grace = opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const keep = opts.keepOutput ?? true;
  const { env, spawnId } = supervisedEnv(opts.env ?? process.env, opts.runTag);

  let out: { dir: string; file: string; fd: number } | undefined;
  if (opts.stdoutToFile) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-run-'));
    const file = path.join(dir, 'stdout');
    out = { dir, file, fd: fs.openSync(file, 'w') };
  }
  let child: ChildProcess;
  try {
    child = spawn(command, [...args], {
      cwd: opts.cwd,
      env,
      detached: true, // a process group of its own: the ladder reaches what the program starts
      stdio: ['pipe', out ? out.fd : 'pipe', 'pipe'],
    });
  } catch (error) {
    if (out) fs.rmSync(out.dir, { recursive: true, force: true });
    throw error; // a bad option, not a failing program
  } finally {
    if (out) fs.closeSync(out.fd); // the program has its own copy
  }

  const supervised = adopt(child, spawnId);
  let spawnError: RunOutcome['spawnError'];
  child.once('error', (error: NodeJS.ErrnoException) => {
    spawnError ??= { code: error.code, message: error.message };
  });
  let killing: Promise<void> | undefined;
  const ladder = () => {
    killing ??= supervised.kill(grace);
  };
  const timer =
    opts.timeoutMs !== undefined
      ? setTimeout(() => {
          ended.timedOut = true;
          ladder();
        }, opts.timeoutMs)
      : undefined;
  const onAbort = () => {
    ended.aborted = true;
    ladder();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  child.stdin?.on('error', () => {}); // a program that never reads its stdin may close it first
  child.stdin?.end(); // nothing to say: a program waiting on stdin sees EOF, never hangs
  const kept = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  const counted = { stdout: 0, stderr: 0 };
  const closed: Promise<void>[] = [];
  let arrivals = 0; // chunks and ends read from the pipes: the drain below waits while they come
  for (const from of ['stdout', 'stderr'] as const) {
    const stream = child[from];
    if (!stream) continue;
    closed.push(new Promise<void>((resolve) => stream.once('close', () => resolve())));
    stream.on('error', () => {});
    stream.once('end', () => (arrivals += 1));
    stream.on('data', (chunk: Buffer) => {
      arrivals += 1;
      const room = max - counted[from];
      counted[from] += chunk.length;
      if (keep && room > 0) kept[from].push(room >= chunk.length ? chunk : chunk.subarray(0, room));
      if (counted[from] > max && !ended.outputLimited) {
        ended.outputLimited = true;
        ladder();
      }
      opts.onOutput?.(chunk, from);
    });
  }

  const exit = await supervised.exited;
  await supervised.swept;
  clearTimeout(timer);
  opts.signal?.removeEventListener('abort', onAbort);
  // Output may still be in the pipes after the exit; a descendant holding them open must not stall the caller.
  // The wait ends when they close, or once a whole drain interval brought nothing — judged after the event loop's
  // poll phase had its turn (setImmediate): on a busy loop (other programs' exits and sweeps) the timer came due
  // before the pipes were read at all, and giving up then lost a finished program's whole output (an empty
  // `git rev-parse`, a green arm's empty patch). A holder that keeps writing is cut at DRAIN_CAP_MS.
  let drainTimer: NodeJS.Timeout | undefined;
  const drainMs = opts.drainMs ?? DEFAULT_DRAIN_MS;
  const drained = await new Promise<boolean>((resolve) => {
    let settled = false;
    const finish = (value: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(drainTimer);
      resolve(value);
    };
    void Promise.all(closed).then(() => finish(true));
    const giveUpAt = performance.now() + Math.max(drainMs, DRAIN_CAP_MS);
    let seen = arrivals;
    const check = () =>
      setImmediate(() => {
        if (settled) return;
        if (arrivals !== seen && performance.now() < giveUpAt) {
          seen = arrivals;
          drainTimer = setTimeout(check, drainMs);
          return;
        }
        finish(false);
      });
    drainTimer = setTimeout(check, drainMs);
  });
  clearTimeout(drainTimer);
  if (!drained) {
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
  await killing; // the ladder's sweep of the tree is done before the outcome
  const ms = performance.now() - started;

  let stdout: Buffer = Buffer.concat(kept.stdout);
  if (out) {
    const back = readBack(out.dir, out.file, max);
    stdout = back.data;
    if (back.cut) ended.outputLimited = true;
  }
  return {
    code: exit.code,
    signal: exit.signal,
    stdout: keep ? stdout : EMPTY,
    stderr: keep ? Buffer.concat(kept.stderr) : EMPTY,
    ...ended,
    spawnError,
    ms,
  };
}
