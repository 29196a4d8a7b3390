// P1: reading a huge pi event stream. LineSplitter + StreamReader over a file read as a stream, against
// the plainest possible reader (the whole file as one string, split on LF, JSON.parse per line).
// Goals: throughput ≥ 0.8× the plain loop, peak RSS ≤ 1.2× (the streaming side should sit far below),
// and the same number of events on both sides (zero lost).
// Each side runs in its own child process so that RSS peaks are separable. Not part of `npm test`.
// Run alone: `node dist/bench/p1-stream.js [sizeMB]` after `npm run build`, or through `npm run bench p1`.
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LineSplitter } from '../src/pi/lines.js';
import { StreamReader } from '../src/pi/stream.js';

const THIS_FILE = fileURLToPath(import.meta.url);

interface SideResult {
  events: number;
  seconds: number;
  peakRssBytes: number;
}

export interface P1Result {
  fileBytes: number;
  expectedEvents: number;
  splitter: SideResult;
  baseline: SideResult;
  throughputRatio: number;
  rssRatio: number;
  ok: { throughput: boolean; rss: boolean; events: boolean };
}

// ---------- the stream generator ----------

/** Deterministic pseudo-random numbers, so two runs measure the same file. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const WORDS = [
  'the',
  'build',
  'passes',
  'déjà',
  'vu',
  '✓',
  'naïve',
  '😀',
  'line\u2028break',
  'para\u2029graph',
  'const',
  '{ x: 1 }',
  '"quoted"',
  'tab\t',
];

function sentence(random: () => number, words: number): string {
  const parts: string[] = [];
  for (let i = 0; i < words; i++) parts.push(WORDS[Math.floor(random() * WORDS.length)]!);
  return parts.join(' ');
}

/** Writes a pi-like event stream of at least `targetBytes`; returns the number of JSON events written. */
async function generate(file: string, targetBytes: number): Promise<number> {
  const random = lcg(0x5eed);
  const out = createWriteStream(file);
  const bigOutputs = [64, 512, 2048].map((kb) => sentence(random, kb * 100).slice(0, kb * 1024)); // tool outputs
  let bytes = 0;
  let events = 0;
  const write = async (text: string, isEvent: boolean) => {
    bytes += Buffer.byteLength(text);
    if (isEvent) events++;
    if (!out.write(text)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  let call = 0;
  while (bytes < targetBytes) {
    await write(`${JSON.stringify({ type: 'turn_start' })}\n`, true);
    const deltas = 20 + Math.floor(random() * 200);
    for (let i = 0; i < deltas; i++) {
      const update = {
        type: 'message_update',
        usage: { input: 0, output: i, totalTokens: i },
        assistantMessageEvent: {
          type: 'text_delta',
          contentIndex: 0,
          delta: sentence(random, 3 + Math.floor(random() * 12)),
        },
      };
      await write(`${JSON.stringify(update)}\n`, true);
    }
    const id = `call_${call++}`;
    const args = { command: `grep -rn "${sentence(random, 2)}" src` };
    await write(`${JSON.stringify({ type: 'tool_execution_start', toolCallId: id, toolName: 'bash', args })}\n`, true);
    const big = bigOutputs[Math.floor(random() * bigOutputs.length)]!;
    await write(
      `${JSON.stringify({ type: 'tool_execution_update', toolCallId: id, toolName: 'bash', args, partialResult: { content: [{ type: 'text', text: big }] } })}\n`,
      true,
    );
    await write(
      `${JSON.stringify({ type: 'tool_execution_end', toolCallId: id, toolName: 'bash', result: { content: [{ type: 'text', text: big.slice(0, 4096) }] }, isError: false })}\n`,
      true,
    );
    if (random() < 0.2) await write(`Warning: not a JSON line ${sentence(random, 4)}\n`, false);
    const message = {
      role: 'assistant',
      content: [{ type: 'text', text: sentence(random, 30) }],
      provider: 'scripted',
      model: 'alpha',
      usage: { totalTokens: 1000 + call, cost: { total: 0.000025 * (call % 7) } },
      stopReason: 'toolUse',
    };
    await write(`${JSON.stringify({ type: 'message_end', message })}\n`, true);
  }
  await new Promise<void>((resolveEnd, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolveEnd())),
  );
  return events;
}

// ---------- the two readers (run in child processes) ----------

async function runSplitter(file: string): Promise<number> {
  const splitter = new LineSplitter();
  const reader = new StreamReader();
  let events = 0;
  const feed = (lines: string[]) => {
    for (const line of lines) if (reader.feed(line)) events++;
  };
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }))
    feed(splitter.push(chunk as Buffer));
  feed(splitter.end());
  return events;
}

function runBaseline(file: string): number {
  const text = readFileSync(file, 'utf8');
  let events = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    try {
      const value: unknown = JSON.parse(line);
      if (value !== null && typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string')
        events++;
    } catch {
      // a non-JSON line: skipped, like the reader does
    }
  }
  return events;
}

async function child(mode: string, file: string): Promise<void> {
  const started = process.hrtime.bigint();
  const events = mode === 'splitter' ? await runSplitter(file) : runBaseline(file);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const result: SideResult = { events, seconds, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function measure(mode: 'splitter' | 'baseline', file: string): Promise<SideResult> {
  return new Promise((resolveRun, reject) => {
    const proc = spawn(process.execPath, [...process.execArgv, THIS_FILE, '--p1-child', mode, file], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) reject(new Error(`P1 ${mode} child exited ${code}`));
      else resolveRun(JSON.parse(out.trim()) as SideResult);
    });
  });
}

// ---------- the benchmark ----------

export async function benchP1(opts: { sizeMB?: number; runs?: number } = {}): Promise<P1Result> {
  const sizeMB = opts.sizeMB ?? 200;
  const runs = opts.runs ?? 2;
  const dir = mkdtempSync(join(tmpdir(), 'factory-p1-'));
  try {
    const file = join(dir, 'stream.jsonl');
    const expectedEvents = await generate(file, sizeMB * 1024 * 1024);
    const fileBytes = statSync(file).size;
    // Alternate the sides; keep each side's fastest run and its highest RSS peak.
    const best = { splitter: undefined as SideResult | undefined, baseline: undefined as SideResult | undefined };
    for (let i = 0; i < runs; i++) {
      for (const mode of ['baseline', 'splitter'] as const) {
        const r = await measure(mode, file);
        const prev = best[mode];
        best[mode] = prev
          ? {
              events: r.events,
              seconds: Math.min(prev.seconds, r.seconds),
              peakRssBytes: Math.max(prev.peakRssBytes, r.peakRssBytes),
            }
          : r;
      }
    }
    const splitter = best.splitter!;
    const baseline = best.baseline!;
    const throughputRatio = baseline.seconds / splitter.seconds;
    const rssRatio = splitter.peakRssBytes / baseline.peakRssBytes;
    const result: P1Result = {
      fileBytes,
      expectedEvents,
      splitter,
      baseline,
      throughputRatio,
      rssRatio,
      ok: {
        throughput: throughputRatio >= 0.8,
        rss: rssRatio <= 1.2,
        events: splitter.events === expectedEvents && baseline.events === expectedEvents,
      },
    };
    print(result);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function print(r: P1Result): void {
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
  const rate = (side: SideResult) => (r.fileBytes / 1024 / 1024 / side.seconds).toFixed(0);
  const goal = (ok: boolean) => (ok ? 'goal met' : 'GOAL MISSED');
  console.log(`P1 stream of ${mb(r.fileBytes)} MB, ${r.expectedEvents} events`);
  console.log(
    `P1 throughput: splitter+reader ${rate(r.splitter)} MB/s vs plain loop ${rate(r.baseline)} MB/s: ${r.throughputRatio.toFixed(2)}× (goal ≥ 0.8×) — ${goal(r.ok.throughput)}`,
  );
  console.log(
    `P1 peak RSS: splitter+reader ${mb(r.splitter.peakRssBytes)} MB vs plain loop ${mb(r.baseline.peakRssBytes)} MB: ${r.rssRatio.toFixed(2)}× (goal ≤ 1.2×) — ${goal(r.ok.rss)}`,
  );
  console.log(
    `P1 events: splitter+reader ${r.splitter.events}, plain loop ${r.baseline.events}, written ${r.expectedEvents} — ${r.ok.events ? 'zero lost' : 'EVENTS LOST'}`,
  );
}

// Runnable alone, and re-entered as a child (`--p1-child <mode> <file>`) by measure().
if (process.argv[1] && resolve(process.argv[1]) === THIS_FILE) {
  const [flag, mode, file] = process.argv.slice(2);
  const run =
    flag === '--p1-child' && mode && file
      ? child(mode, file)
      : benchP1({ sizeMB: flag ? Number(flag) : undefined }).then((r) => {
          if (!(r.ok.throughput && r.ok.rss && r.ok.events)) process.exitCode = 1;
        });
  run.catch((error: unknown) => {
    console.error(`P1: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
