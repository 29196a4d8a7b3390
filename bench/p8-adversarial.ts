// P8: the envelope text fallback on adversarial answers — what a model that repeats one pattern until its token
// limit leaves for the cockpit to parse, on its main thread. Each shape is parsed at 1 KB, 10 KB, 100 KB and
// 1 MB; the time per parse is printed with its growth per ×10. Goal: linear, ~10× per decade (a quadratic search
// shows ~100×); anything at or under 20× passes, to leave room for noise. Above ENVELOPE_SCAN_MAX_CHARS only the
// end of the answer is read, so the last decade grows less than 10×. In process, no child: the parse is pure.
// Run alone through `npm run bench p8` after `npm run build`.
import { Envelope, EnvelopeError, parse } from '../src/envelope/envelopes.js';
import { verdictLine } from './timing.js';

const SIZES = [1024, 10 * 1024, 100 * 1024, 1024 * 1024];
/** Most growth per ×10 of input that still reads as linear (quadratic is ~100×). */
const MAX_GROWTH = 20;
/** Each size is parsed repeatedly for at least this long, so that a 1 KB parse is not lost in timer noise. */
const MIN_SAMPLE_MS = 50;

/** The shapes, each a function of the target size in characters. */
const SHAPES: { name: string; make: (size: number) => string }[] = [
  { name: '`{` repeated', make: (size) => '{'.repeat(size) },
  { name: '`{"` repeated', make: (size) => '{"'.repeat(size / 2) },
  { name: '`{"a":` repeated', make: (size) => '{"a":'.repeat(size / 5) },
  { name: 'nested invalid braces', make: (size) => `${'{x'.repeat(size / 4)}${'}'.repeat(size / 4)}` },
  {
    name: 'deep arrays',
    make: (size) => `{"status":"fail","x":${'['.repeat(size / 2 - 12)}${']'.repeat(size / 2 - 12)}}`,
  },
  { name: 'spans that do not parse', make: (size) => '{x}'.repeat(size / 3) },
];

/** Milliseconds per parse of `text`: the mean over as many runs as fit MIN_SAMPLE_MS (at least 3). */
function msPerParse(text: string): number {
  let runs = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (runs < 3 || elapsed < MIN_SAMPLE_MS) {
    try {
      parse(text, Envelope);
    } catch (error) {
      if (!(error instanceof EnvelopeError)) throw error;
    }
    runs += 1;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return elapsed / runs;
}

export interface P8Row {
  shape: string;
  ms: number[];
  /** ms[i + 1] / ms[i]: the growth for each ×10 of input. */
  growth: number[];
}

export function benchP8(): { rows: P8Row[]; ok: boolean } {
  const rows: P8Row[] = [];
  for (const shape of SHAPES) {
    msPerParse(shape.make(SIZES[0]!)); // warm-up: the first parse pays for compiling the scanner
    const ms = SIZES.map((size) => msPerParse(shape.make(size)));
    const growth = ms.slice(1).map((value, i) => value / ms[i]!);
    rows.push({ shape: shape.name, ms, growth });
  }
  const ok = rows.every((row) => row.growth.every((g) => g <= MAX_GROWTH));
  console.log(
    `P8 envelope parse on adversarial answers (ms per parse at ${SIZES.map((s) => `${s / 1024} KB`).join(' / ')}; growth per ×10):`,
  );
  for (const row of rows) {
    const times = row.ms.map((ms) => ms.toFixed(3)).join(' / ');
    console.log(
      `  ${row.shape.padEnd(24)} ${times} ms   growth ${row.growth.map((g) => `${g.toFixed(1)}×`).join(' ')}`,
    );
  }
  const worst = Math.max(...rows.flatMap((row) => row.growth));
  console.log(
    `P8 worst growth per ×10: ${worst.toFixed(1)}× (goal ≤ ${MAX_GROWTH}×, linear ~10×) — ${verdictLine(ok)}`,
  );
  return { rows, ok };
}
