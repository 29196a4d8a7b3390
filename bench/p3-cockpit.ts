// P3: the cockpit under load. The real BonScreen (Ink, the bon store, the keymap hook) is rendered to a fake
// terminal that counts frames and bytes, and fed a synthetic 5-arm run where every arm emits `rate` events per
// second (usage, tool calls, text) for `seconds`: the CPU share of this process, frames per second, RSS at
// start / middle / end (it should stay flat), and the store's final figures against the sums of the events
// (they must be exact). The events go through `store.getState().apply`, as src/tui/run.ts wires the runner, and the
// screen reads the store as it does there: through the paced view (one notice a frame). Ink writes a frame in three
// (begin synchronized update, the frame, end it), and each counts. Goals (issue 12): ≤ 30 % of one core, ≤ 30 terminal writes/s, RSS and live heap flat (end ≤ 1.1×
// middle).
// Run alone: `node dist/bench/p3-cockpit.js [seconds]` after `npm run build`, or `npm run bench p3[:seconds]`.
import './ui-production.js';
import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import React from 'react';
import { render } from 'ink';
import { BonScreen } from '../components/BonScreen.js';
import { createBonStore, type BonStore } from '../state/bon/store.js';
import { pacedStore } from '../state/paced.js';
import type { BonController } from '../state/controller.js';
import type { RunEvent } from '../src/contract/events.js';

const THIS_FILE = fileURLToPath(import.meta.url);
const ADW = 'p3p3p3p3';
const ARMS = 5;

/** A terminal that draws nothing: it counts the writes Ink makes (one per frame) and their bytes. */
class CountingTerminal extends EventEmitter {
  readonly isTTY = true;
  columns = 160;
  rows = 48;
  frames = 0;
  bytes = 0;
  write(chunk: string | Uint8Array, ...rest: unknown[]): boolean {
    this.frames += 1;
    this.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    const callback = rest.find((arg): arg is () => void => typeof arg === 'function');
    callback?.();
    return true;
  }
}

/** A keyboard nobody types on (Ink's input hook needs a TTY-like stdin with raw mode). */
class IdleKeyboard extends EventEmitter {
  readonly isTTY = true;
  setRawMode(): this {
    return this;
  }
  setEncoding(): this {
    return this;
  }
  read(): null {
    return null;
  }
  resume(): this {
    return this;
  }
  pause(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

export interface P3Result {
  seconds: number;
  eventsPerArmPerSecond: number;
  events: number;
  achievedRate: number;
  cpuShare: number;
  /** Writes to the terminal (Ink writes each frame it draws in one write; the cursor's own writes count too). */
  frames: number;
  fps: number;
  /** Ink's own render passes (its `onRender`), and their mean time. */
  inkRenders: number;
  meanRenderMs: number;
  bytes: number;
  rssMB: { start: number; middle: number; end: number };
  /** Heap in use after a full collection: the live memory. */
  heapMB: { start: number; middle: number; end: number };
  exact: boolean;
  mismatches: string[];
}

const mb = (bytes: number) => bytes / 1024 / 1024;

// A full collection before each heap sample, so "flat" means live memory and not the GC's laziness.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  collect();
  return mb(process.memoryUsage().heapUsed);
}

/** React picks its development or production build from NODE_ENV when first imported: what is measured. */
const REACT_BUILD = process.env.NODE_ENV === 'production' ? 'production' : 'development';

/** Figures the generator owes the store, counted on the side (never read back from the store). */
interface ArmLedger {
  tokens: number;
  /** Kept in 1/1024 dollar steps: binary fractions add exactly, so "exact" means ===. */
  cost: number;
  usages: number;
  lastTool?: string;
}

function event(type: RunEvent['type'], payload: Record<string, unknown>): RunEvent {
  return { type, adwId: ADW, ts: Date.now(), ...payload } as unknown as RunEvent;
}

function startRun(store: BonStore): void {
  const arms = Array.from({ length: ARMS }, (_, i) => ({
    name: `arm_${i + 1}`,
    kind: 'agent',
    attempts: 1,
    arm: i + 1,
  }));
  const apply = (e: RunEvent) => store.getState().apply(e);
  apply(
    event('run_started', {
      adwName: 'adw_bon',
      cwd: '/bench/payload',
      phases: [
        { name: 'check', kind: 'code', attempts: 1 },
        { name: 'prime', kind: 'agent', attempts: 1 },
        ...arms,
        { name: 'harvest', kind: 'code', attempts: 1 },
      ],
    }),
  );
  apply(event('phase_started', { phase: 'check', kind: 'code' }));
  apply(event('phase_ok', { phase: 'check', kind: 'code', attempt: 1, attempts: 1, seconds: 0.1, tokens: 0, cost: 0 }));
  apply(event('phase_started', { phase: 'prime', kind: 'agent' }));
  apply(event('phase_ok', { phase: 'prime', kind: 'agent', attempt: 1, attempts: 1, seconds: 2, tokens: 0, cost: 0 }));
  // All five arms live at once: the heaviest board there is (the core runs them one after the other).
  for (let k = 1; k <= ARMS; k++) {
    apply(event('phase_started', { phase: `arm_${k}`, kind: 'agent' }));
    apply(
      event('attempt_started', {
        phase: `arm_${k}`,
        attempt: 1,
        attempts: 1,
        sessionId: `clone-${k}`,
        model: `scripted/m${k}`,
      }),
    );
  }
}

/** The n-th event of an arm: mostly usage (running figures), with tool calls and text between. */
function armEvent(k: number, n: number, ledger: ArmLedger): RunEvent {
  const phase = `arm_${k}`;
  switch (n % 4) {
    case 0:
    case 2:
      ledger.tokens += 17 + (n % 13);
      ledger.cost += (1 + (n % 3)) / 1024;
      ledger.usages += 1;
      return event('usage', { phase, tokens: ledger.tokens, cost: ledger.cost });
    case 1: {
      const detail = `src/file-${n % 97}.ts`;
      ledger.lastTool = `edit ${detail}`;
      return event('activity', { phase, activity: { kind: 'tool_start', tool: 'edit', detail } });
    }
    default:
      return event('activity', { phase, activity: { kind: 'text', text: `step ${n}: editing the arm's files` } });
  }
}

function compare(store: BonStore, ledgers: ArmLedger[], when: string): string[] {
  const state = store.getState();
  const mismatches: string[] = [];
  const tokens = ledgers.reduce((sum, l) => sum + l.tokens, 0);
  const cost = ledgers.reduce((sum, l) => sum + l.cost, 0);
  if (state.totals.tokens !== tokens) mismatches.push(`${when}: total tokens ${state.totals.tokens} ≠ ${tokens}`);
  if (state.totals.cost !== cost) mismatches.push(`${when}: total cost ${state.totals.cost} ≠ ${cost}`);
  ledgers.forEach((ledger, i) => {
    const phase = `arm_${i + 1}`;
    const shown = state.phases.find((p) => p.name === phase);
    const extras = state.bon.arms[phase];
    if (shown?.tokens !== ledger.tokens)
      mismatches.push(`${when}: ${phase} tokens ${shown?.tokens} ≠ ${ledger.tokens}`);
    if (extras?.turns !== ledger.usages) mismatches.push(`${when}: ${phase} turns ${extras?.turns} ≠ ${ledger.usages}`);
    if (extras?.lastTool !== ledger.lastTool)
      mismatches.push(`${when}: ${phase} last tool ${extras?.lastTool} ≠ ${ledger.lastTool}`);
  });
  return mismatches;
}

export async function benchP3(opts: { seconds?: number; eventsPerArmPerSecond?: number } = {}): Promise<P3Result> {
  const seconds = opts.seconds ?? 30;
  const rate = opts.eventsPerArmPerSecond ?? 2000;
  const store = createBonStore();
  const terminal = new CountingTerminal();
  const controller: BonController = {
    abort() {},
    quit() {},
    abortArm() {},
    cloneArm() {},
    apply() {},
    raiseArm() {},
    confirmFanOut() {},
    steerArm() {},
    readPatch: () => '',
  };
  let renders = 0;
  let renderMs = 0;
  const app = render(React.createElement(BonScreen, { store: pacedStore(store), controller }), {
    onRender: ({ renderTime }) => {
      renders += 1;
      renderMs += renderTime;
    },
    stdout: terminal as unknown as NodeJS.WriteStream,
    stdin: new IdleKeyboard() as unknown as NodeJS.ReadStream,
    stderr: terminal as unknown as NodeJS.WriteStream,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  startRun(store);
  await new Promise((r) => setTimeout(r, 200));
  const ledgers: ArmLedger[] = Array.from({ length: ARMS }, () => ({ tokens: 0, cost: 0, usages: 0 }));
  const counts = new Array<number>(ARMS).fill(0);
  const heap = { start: heapAfterGc(), middle: 0, end: 0 };
  const rss = { start: mb(process.memoryUsage().rss), middle: 0, end: 0 };
  const framesBefore = terminal.frames;
  const rendersBefore = renders;
  const renderMsBefore = renderMs;
  const bytesBefore = terminal.bytes;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let middleTaken = false;
  // Events leave in small batches on a 5 ms timer, catching up to `rate × elapsed` per arm: like pi's stdout
  // chunks, and the event loop stays free for Ink's throttled renders between batches.
  await new Promise<void>((done) => {
    const timer = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      const due = Math.floor(Math.min(elapsed, seconds) * rate);
      for (let k = 0; k < ARMS; k++) {
        while (counts[k]! < due) store.getState().apply(armEvent(k + 1, counts[k]!++, ledgers[k]!));
      }
      if (!middleTaken && elapsed >= seconds / 2) {
        middleTaken = true;
        rss.middle = mb(process.memoryUsage().rss);
        heap.middle = heapAfterGc();
      }
      if (elapsed >= seconds) {
        clearInterval(timer);
        done();
      }
    }, 5);
  });
  const wall = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  rss.end = mb(process.memoryUsage().rss);
  heap.end = heapAfterGc();
  const frames = terminal.frames - framesBefore;
  const inkRenders = renders - rendersBefore;
  const meanRenderMs = inkRenders > 0 ? (renderMs - renderMsBefore) / inkRenders : 0;
  const bytes = terminal.bytes - bytesBefore;
  const events = counts.reduce((a, b) => a + b, 0);

  // Exact figures: live (the usage events), then settled by each arm's phase_ok carrying the same sums.
  const mismatches = compare(store, ledgers, 'live');
  ledgers.forEach((ledger, i) =>
    store.getState().apply(
      event('phase_ok', {
        phase: `arm_${i + 1}`,
        kind: 'agent',
        attempt: 1,
        attempts: 1,
        seconds: wall,
        tokens: ledger.tokens,
        cost: ledger.cost,
      }),
    ),
  );
  mismatches.push(...compare(store, ledgers, 'settled'));
  app.unmount();
  await app.waitUntilExit().catch(() => undefined);

  const result: P3Result = {
    seconds: wall,
    eventsPerArmPerSecond: rate,
    events,
    achievedRate: events / wall,
    cpuShare: (cpu.user + cpu.system) / 1e6 / wall,
    frames,
    fps: frames / wall,
    inkRenders,
    meanRenderMs,
    bytes,
    rssMB: rss,
    heapMB: heap,
    exact: mismatches.length === 0,
    mismatches,
  };
  print(result);
  return result;
}

function print(r: P3Result): void {
  const target = r.eventsPerArmPerSecond * ARMS;
  const verdict = (ok: boolean) => (ok ? 'goal met' : 'GOAL MISSED');
  console.log(`P3 (React ${REACT_BUILD} build, as NODE_ENV=${process.env.NODE_ENV ?? '(unset)'} gives it)`);
  console.log(
    `P3 cockpit: ${ARMS} arms × ${r.eventsPerArmPerSecond} events/s for ${r.seconds.toFixed(1)} s — ${r.events} events, ${r.achievedRate.toFixed(0)}/s achieved of ${target}/s (${(r.achievedRate / target).toFixed(2)}×)`,
  );
  console.log(
    `P3 CPU share of the process: ${(r.cpuShare * 100).toFixed(0)}% of one core (generator, store and Ink together; goal ≤ 30%) — ${verdict(r.cpuShare <= 0.3)}`,
  );
  console.log(
    `P3 frames: ${r.fps.toFixed(1)} terminal writes/s (${r.frames} writes, ${(r.bytes / 1024 / 1024).toFixed(1)} MB; goal ≤ 30/s) — ${verdict(r.fps <= 30)}; Ink renders ${(r.inkRenders / r.seconds).toFixed(1)}/s, ${r.meanRenderMs.toFixed(2)} ms each`,
  );
  const rss = r.rssMB.end / r.rssMB.middle;
  console.log(
    `P3 RSS start ${r.rssMB.start.toFixed(0)} MB, middle ${r.rssMB.middle.toFixed(0)} MB, end ${r.rssMB.end.toFixed(0)} MB: end ${rss.toFixed(2)}× middle (goal ≤ 1.1×) — ${verdict(rss <= 1.1)}`,
  );
  const heap = r.heapMB.end / r.heapMB.middle;
  console.log(
    `P3 live heap after GC: start ${r.heapMB.start.toFixed(0)} MB, middle ${r.heapMB.middle.toFixed(0)} MB, end ${r.heapMB.end.toFixed(0)} MB: end ${heap.toFixed(2)}× middle (goal ≤ 1.1×) — ${verdict(heap <= 1.1)}`,
  );
  console.log(
    `P3 final totals against the sums of the events: ${r.exact ? 'exact' : `NOT EXACT — ${r.mismatches.join('; ')}`}`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === THIS_FILE) {
  const arg = process.argv[2];
  benchP3({ seconds: arg ? Number(arg) : undefined })
    .then((r) => {
      if (!r.exact) process.exitCode = 1;
    })
    .catch((error: unknown) => {
      console.error(`P3: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    });
}
