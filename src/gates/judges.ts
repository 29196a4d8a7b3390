// Gates: zero-token judges of what an agent left behind. Each returns a report (never throws for a red
// verdict); `motif` turns the first red report into the one line that goes back to the agent as its
// correction. Commands are run to their end by the process helper: their own process group, the run tag, the
// kill ladder on timeout or abort, so a hung test suite never outlives its gate.
import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { failureLinesOf, summaryOf, tailOf } from './runnerSummary.js';
import { runToEnd } from '../process/run.js';
import { wrapCommand, type SandboxSpec } from '../sandbox/wrap.js';
import { setupFailure } from './program.js';
import { displayWidth, fit } from '../contract/text.js';

export interface GateReport {
  gate: string;
  ok: boolean;
  /** Why the gate is red: one line, bounded (absent when green). */
  motif?: string;
  seconds: number;
  /** The last ~4 KB of a command's stdout+stderr, interleaved as they arrived (command gates only). */
  outputTail?: string;
  /** How many bytes the command printed in all (stdout+stderr): what an agent running it would read, uncut. */
  outputBytes?: number;
  /**
   * `setup`: the gate could not run at all (its program missing or not executable, or bash could not start): the
   * machine's failure, not a test result. No baseline excuses it; bon and build stop on it (exit 2).
   */
  outcome?: 'setup';
  /** What to do about a setup failure, in one sentence (also the end of its motif). */
  fix?: string;
}

export interface GateCommand {
  /** A bash command line, run with `bash -c`. */
  run: string;
  /** The folder it runs in. */
  cwd: string;
  timeoutMs: number;
}

export interface CommandGateOptions {
  /** Ends the command's whole process group (Ctrl-C of the cockpit). */
  signal?: AbortSignal;
  /** Written into the command's environment as FACTORY_RUN_TAG (so a test can prove nothing is left). */
  runTag?: string;
  /** The command's environment; defaults to the cockpit's. */
  env?: NodeJS.ProcessEnv;
  /** Grace between SIGTERM and SIGKILL of the group. */
  killGraceMs?: number;
  /** Run the command in this OS sandbox, in its own folder (a best-of-N arm's gates, in the arm's tree). */
  sandbox?: SandboxSpec;
  /** Told the size of each piece of output as it comes (best-of-N's forecast reads a suite still running on HEAD). */
  onOutputBytes?: (bytes: number) => void;
}

/** Anything with the BuildEnvelope's `changed_files` (other fields are not the gates' business). */
export interface ChangedFilesCarrier {
  changed_files?: readonly string[];
}

/** The bound of a motif, in terminal columns: the runner keeps 300 of one line, so the tail must fit in. */
export const MOTIF_MAX = 300;
/** How much of a command's output is kept for the report (the trace keeps it, the motif quotes its end). */
export const OUTPUT_TAIL_BYTES = 4096;
const COMMAND_IN_MOTIF = 80;

const CHANGED_FILES_GATE = 'changed_files';

function elapsed(start: number): number {
  return (performance.now() - start) / 1000;
}

// Terminal escape sequences, as ECMA-48 frames them. Strings (OSC: titles, OSC 8 hyperlinks; DCS, SOS, PM, APC)
// run to BEL or ST — or to the end of their line when the output was cut short; CSI carries parameters and ends
// on one final byte (colours, cursor moves, erase-line) or where the output ends; the other escapes are ESC,
// intermediates, one final byte. The 8-bit C1 forms are the same sequences in one code point.
const ESCAPE_STRING = /(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c|(?=\n)|$)/g;
const CSI_SEQUENCE = /(?:\x1b\[|\x9b)[0-?]*[ -/]*(?:[@-~]|$)/g;
const OTHER_ESCAPE = /\x1b[ -/]*[0-~]/g;
const OVERSTRUCK = /[^\n\x08]\x08/;
/** Control characters other than tab and newline (C0, DEL, C1), once the sequences are gone. */
const CONTROL_CHARS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Output as a reader sees it on a terminal, as plain text: escape sequences removed (colours, hyperlinks keep
 * their text, cursor moves), a line redrawn with `\r` (a progress line, a spinner) kept as it was last drawn,
 * backspace overstrikes resolved, every other control character dropped. Tab and newline stay.
 */
export function plainText(text: string): string {
  let plain = text.replace(ESCAPE_STRING, '').replace(CSI_SEQUENCE, '').replace(OTHER_ESCAPE, '');
  plain = plain
    .split('\n')
    .map((line) => {
      const drawn = line.replace(/\r+$/, ''); // CRLF, or a line that ends by returning to its start
      return drawn.slice(drawn.lastIndexOf('\r') + 1);
    })
    .join('\n');
  while (OVERSTRUCK.test(plain)) plain = plain.replace(new RegExp(OVERSTRUCK, 'g'), '');
  return plain.replace(CONTROL_CHARS, '');
}

/** Whether `target` is `root` or lies under it (both absolute). */
function inside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/** Why one declared path is refused, or undefined when it is a file inside the work tree. */
function refusal(root: string, realRoot: string, declared: string): string | undefined {
  if (declared.trim() === '') return 'an empty path';
  if (declared.includes('\0')) return `${JSON.stringify(declared)} is not a path`;
  const abs = path.resolve(root, declared);
  if (!inside(root, abs)) return `${declared} escapes the work tree`;
  let real: string;
  try {
    real = fs.realpathSync(abs);
  } catch {
    return `${declared} does not exist in the work tree`;
  }
  // A symlink inside the tree that points out of it is an escape too: the gate judges what is on disk.
  if (!inside(realRoot, real)) return `${declared} escapes the work tree (it resolves to ${real})`;
  if (fs.statSync(real).isDirectory()) return `${declared} is a folder, not a file`;
  return undefined;
}

/** Every declared changed file must exist, as a file, inside the work tree rooted at `cwd`. */
export function changedFilesExist(envelope: ChangedFilesCarrier, cwd: string): GateReport {
  const start = performance.now();
  const root = path.resolve(cwd);
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    return {
      gate: CHANGED_FILES_GATE,
      ok: false,
      motif: `changed_files: the work tree ${root} does not exist`,
      seconds: elapsed(start),
    };
  }
  const declared = envelope.changed_files ?? [];
  const refused = declared.map((p) => refusal(root, realRoot, p)).filter((r): r is string => r !== undefined);
  if (refused.length === 0) return { gate: CHANGED_FILES_GATE, ok: true, seconds: elapsed(start) };
  const more = refused.length > 1 ? ` (and ${refused.length - 1} more)` : '';
  // The paths are the agent's words: they may carry control bytes.
  return {
    gate: CHANGED_FILES_GATE,
    ok: false,
    motif: fit(plainText(`changed_files: ${refused[0]}${more}`), MOTIF_MAX),
    seconds: elapsed(start),
  };
}

/** How much raw output is kept for the tail: escape sequences can outweigh the text they paint. */
const RAW_TAIL_CHARS = 4 * OUTPUT_TAIL_BYTES;

/** The end of `text` that fits in `bytes` of UTF-8, starting on a whole character. */
function lastBytes(text: string, bytes: number): string {
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length <= bytes) return text;
  let start = encoded.length - bytes;
  while (start < encoded.length && (encoded[start]! & 0xc0) === 0x80) start += 1; // skip continuation bytes
  return encoded.subarray(start).toString('utf8');
}

/**
 * A rolling tail of a byte stream, decoded as UTF-8 without splitting a character, read as plain text (a
 * runner's colours and progress redraws are for a terminal, not for a motif or an agent).
 */
class OutputTail {
  private text = '';
  private readonly decoder = new StringDecoder('utf8');
  bytes = 0;

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    this.text += this.decoder.write(chunk);
    // Trim lazily (at twice the bound) so a chatty command does not re-slice on every chunk; the cut is made at
    // a line start, so no escape sequence is left half-cut at the head.
    if (this.text.length > 2 * RAW_TAIL_CHARS) {
      const kept = this.text.slice(-RAW_TAIL_CHARS);
      const lineStart = kept.indexOf('\n');
      this.text = lineStart >= 0 ? kept.slice(lineStart + 1) : kept;
    }
  }

  value(): string {
    return lastBytes(plainText(this.text + this.decoder.end()), OUTPUT_TAIL_BYTES);
  }
}

/** The end of an output, flattened to one line of at most `max` columns (stack frames left out). */
export function flattenTail(output: string, max: number): string {
  return tailOf(plainText(output), max);
}

function describeCommand(run: string): string {
  return `\`${fit(run.replace(/\s+/g, ' ').trim(), COMMAND_IN_MOTIF)}\``;
}

/** The lines of a command's output that say what failed, as plain text (empty when it names no failure). */
export function failureLines(output: string): string[] {
  return failureLinesOf(plainText(output));
}

/** The telling part of a red command's output (gates/runnerSummary.ts): the runner's own summary, else its tail. */
export function tellingOutput(output: string, max: number): string {
  return summaryOf(plainText(output), max);
}

/** The motif of a red command: the command, how it ended, then what its output says failed. */
function commandMotif(run: string, how: string, output: string): string {
  const head = `${describeCommand(run)} ${how}`;
  const room = MOTIF_MAX - displayWidth(head) - 2;
  const tail = room > 20 ? tellingOutput(output, room) : '';
  return tail ? `${head}: ${tail}` : head;
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

function setupReport(run: string, what: string, fix: string, output: string, start: number): GateReport {
  const motif = `${describeCommand(run)} cannot run: ${what} — ${fix}`;
  return {
    gate: run,
    ok: false,
    outcome: 'setup',
    fix,
    motif: fit(plainText(motif).replace(/\s*\n\s*/g, ' '), MOTIF_MAX),
    seconds: elapsed(start),
    outputTail: output,
  };
}

/** A gate that runs one payload command with `bash -c` in its folder: green when it exits 0 in time. */
export function commandGate(
  cmd: GateCommand,
  opts: CommandGateOptions = {},
): (envelope?: unknown) => Promise<GateReport> {
  return async () => {
    const start = performance.now();
    const gate = cmd.run;
    const cwd = path.resolve(cmd.cwd);
    const red = (motif: string, outputTail?: string): GateReport => ({
      gate,
      ok: false,
      motif: fit(plainText(motif), MOTIF_MAX),
      seconds: elapsed(start),
      outputTail,
    });
    if (opts.signal?.aborted) return red(`${describeCommand(cmd.run)} not run: interrupted by the user`);
    let isDir = false;
    try {
      isDir = fs.statSync(cwd).isDirectory();
    } catch {
      // reported below
    }
    // Checked here: a missing cwd makes spawn fail with ENOENT, which would read as "bash is missing".
    if (!isDir) return red(`${describeCommand(cmd.run)} not run: its folder ${cwd} does not exist`);

    // --norc: node's stdio pipes are sockets, and bash sources ~/.bashrc when its stdin is a socket and SHLVL
    // is unset (the "started by rshd" rule); a gate must run the same in every environment.
    const tail = new OutputTail();
    const bash = ['--norc', '--noprofile', '-c', cmd.run];
    const line = opts.sandbox
      ? wrapCommand({ ...opts.sandbox, policy: { ...opts.sandbox.policy, cwd } }, 'bash', bash)
      : { command: 'bash', args: bash };
    const out = await runToEnd(line.command, line.args, {
      cwd,
      // The user's environment as it is: a variable that quiets colour (NO_COLOR, FORCE_COLOR=0…) changes what a
      // suite that asserts colour does, not only how it prints. Colour is read out of the output afterwards (plainText).
      env: opts.env ?? process.env,
      runTag: opts.runTag,
      timeoutMs: cmd.timeoutMs,
      signal: opts.signal,
      killGraceMs: opts.killGraceMs ?? 1000,
      keepOutput: false, // only the tail is kept
      maxOutputBytes: Infinity,
      onOutput: (chunk) => {
        tail.push(chunk);
        opts.onOutputBytes?.(chunk.length);
      },
    });
    const output = tail.value();
    const lookup = { cwd, env: opts.env ?? process.env };
    if (out.spawnError)
      return setupReport(
        cmd.run,
        `could not start bash: ${out.spawnError.message}`,
        'install bash, or put it on PATH',
        output,
        start,
      );
    if (!out.timedOut && !out.aborted && out.code !== 0) {
      const setup = setupFailure(cmd.run, out.code, output, lookup);
      if (setup) return setupReport(cmd.run, setup.what, setup.fix, output, start);
    }
    if (out.timedOut)
      return red(
        commandMotif(cmd.run, `timed out after ${seconds(cmd.timeoutMs)} (its process group was ended)`, output),
        output,
      );
    if (out.aborted)
      return red(`${describeCommand(cmd.run)} interrupted by the user (its process group was ended)`, output);
    if (out.code === 0) return { gate, ok: true, seconds: elapsed(start), outputTail: output, outputBytes: tail.bytes };
    const how = out.code !== null ? `exited ${out.code}` : `was killed by ${out.signal ?? 'a signal'}`;
    return { ...red(commandMotif(cmd.run, how, output), output), outputBytes: tail.bytes };
  };
}

/** How much of a red gate's output the correction ask carries (the one-line motif is for logs and screen). */
const CORRECTION_TAIL = 1500;

/** The correction material: the first red gate's motif, then the tail of its output as it was printed. */
export function correctionDetail(reports: readonly GateReport[]): string {
  const red = reports.find((r) => !r.ok);
  if (!red) return '';
  const tail = red.outputTail?.trim();
  const head = red.motif ?? `gate ${red.gate} failed`;
  return tail ? `${head}\n\nend of its output:\n${tail.slice(-CORRECTION_TAIL)}` : head;
}

/** Empty when every gate is green; otherwise the first red gate's motif (one line, bounded, plain text). */
export function motif(reports: readonly GateReport[]): string {
  const red = reports.find((r) => !r.ok);
  if (!red) return '';
  return fit(plainText(red.motif ?? `gate ${red.gate} failed`).replace(/\s*\n\s*/g, ' '), MOTIF_MAX);
}
