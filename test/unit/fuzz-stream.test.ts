// Fuzzing the reader of pi's stdout: generated streams of events and junk, cut into chunks at random bytes
// (inside UTF-8 sequences and CRLF pairs too), read the way json mode and RPC read them. Each input is
// reproducible from the seed and its iteration (FUZZ_SEED=<seed> replays a failure). The invariants: nothing
// throws; the lines do not depend on where the chunks were cut; figures are finite and non-negative; what
// reaches the cockpit is one line, at most 100 code points, with no lone surrogate.
import { describe, expect, it } from 'vitest';
import type { Activity } from '../../src/contract/events.js';
import { LineSplitter } from '../../src/pi/lines.js';
import { StreamReader, TurnObserver, readStream } from '../../src/pi/stream.js';
import { fuzz, type Gen } from '../helpers/fuzz.js';

/** Any line break a terminal may honour: none may reach an activity. */
const ANY_BREAK = /[\n\v\f\r\u0085\u2028\u2029]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Figures as a stream may write them, raw: `1e400` reads as Infinity, the rest as junk, negatives or overflow. */
const NUMBERS = [
  '0',
  '5',
  '1234',
  '-3',
  '1.5',
  '1e308',
  '1e400',
  '-1e400',
  '9007199254740993',
  '"7"',
  'null',
  'true',
  '{}',
];

/** Text pieces: every line break, escapes, braces, multi-byte characters (whole ones: the reader gets UTF-8). */
const TEXT = [
  'a',
  'b c',
  ' ',
  '\n',
  '\r\n',
  '\r',
  '\v',
  '\f',
  '\u0085',
  '\u2028',
  '\u2029',
  '\t',
  '"',
  '\\',
  '{',
  '}',
  'é',
  '✓',
  '😀',
  '\u0000',
];

const JUNK = [
  '{',
  '}',
  '"',
  ':',
  ',',
  'type',
  '"type"',
  '"message_end"',
  '[',
  ']',
  'x',
  ' ',
  '\\',
  '😀',
  'null',
  '1e400',
];

function text(g: Gen, max: number): string {
  return g.text(g.int(max), TEXT);
}

/** One line of a stream: an event of a kind the reader looks at, with hostile fields, or junk. */
function eventLine(g: Gen): string {
  const s = (max = 40) => JSON.stringify(text(g, max));
  const n = () => g.pick(NUMBERS);
  const content = () =>
    g.chance(0.5) ? s(300) : `[{"type":"text","text":${s(300)}},{"type":"toolCall","name":${s()}}]`;
  switch (g.int(10)) {
    case 0:
      return `{"type":"message_end","message":{"role":"assistant","content":${content()},"usage":{"totalTokens":${n()},"cost":{"total":${n()}}},"model":${s(10)},"provider":${s(10)},"stopReason":${s(10)}}}`;
    case 1:
      return `{"type":"message_end","message":{"role":${g.pick(['"user"', '"toolResult"', '"system"', 'null'])},"content":${content()},"usage":{"totalTokens":${n()}}}}`;
    case 2:
      return `{"type":"tool_execution_start","toolName":${s(20)},"args":${g.chance(0.5) ? `{"command":${s(300)}}` : `{"x":${s(200)},"n":${n()}}`}}`;
    case 3:
      return `{"type":"tool_execution_end","toolName":${g.chance(0.3) ? '"report_phase"' : s(20)},"isError":${g.pick(['true', 'false', '1'])},"result":{"content":${content()},"details":{"status":${s(10)}}}}`;
    case 4:
      return `{"type":"auto_retry_start","attempt":${n()},"errorMessage":${s(200)}}`;
    case 5:
      return g.pick([
        '{"type":"turn_start"}',
        `{"type":"session","id":${s(10)}}`,
        `{"type":"agent_settled","aborted":${g.pick(['true', 'false', '0'])}}`,
      ]);
    case 6:
      return `{"type":"entry_appended","entry":{"customType":${g.pick(['"factory-guard"', '"factory-inventory"', s(10)])},"data":{"reason":${s()},"pi_version":${s(10)},"present":[${s(5)}]}}}`;
    case 7: {
      const whole = eventLine(g);
      return whole.slice(0, g.int(whole.length)); // torn JSON
    }
    case 8:
      return g.text(g.int(80), JUNK);
    default:
      return g.chance(0.5) ? '' : `{"type":${n()}}`;
  }
}

interface StreamCase {
  bytes: Buffer;
  cuts: number[];
  maxLineBytes?: number;
}

function streamCase(g: Gen): StreamCase {
  const lines = Array.from({ length: g.int(12) }, () => eventLine(g));
  const body = lines.map((l) => `${l}${g.chance(0.2) ? '\r\n' : '\n'}`).join('');
  // Sometimes a torn last line, sometimes a few invalid UTF-8 bytes, sometimes a small line cap.
  const tail = g.chance(0.3) ? Buffer.from(eventLine(g)) : Buffer.alloc(0);
  const bad = g.chance(0.1) ? Buffer.from([0xff, 0xc3, 0x0a]) : Buffer.alloc(0);
  const bytes = Buffer.concat([Buffer.from(body), bad, tail]);
  const cuts = Array.from({ length: g.int(10) }, () => g.int(bytes.length + 1)).sort((a, b) => a - b);
  return { bytes, cuts, maxLineBytes: g.chance(0.2) ? 16 + g.int(400) : undefined };
}

function split({ bytes, cuts, maxLineBytes }: StreamCase, whole = false): string[] {
  const splitter = new LineSplitter({ maxLineBytes });
  const out: string[] = [];
  let at = 0;
  for (const cut of whole ? [] : cuts) {
    out.push(...splitter.push(bytes.subarray(at, cut)));
    at = cut;
  }
  out.push(...splitter.push(bytes.subarray(at)));
  out.push(...splitter.end());
  return out;
}

function isFigure(value: number): boolean {
  return Number.isFinite(value) && value >= 0;
}

function checkShown(what: string, value: string): void {
  if (ANY_BREAK.test(value)) throw new Error(`${what} holds a line break: ${JSON.stringify(value)}`);
  if (LONE_SURROGATE.test(value)) throw new Error(`${what} holds a lone surrogate: ${JSON.stringify(value)}`);
  if ([...value].length > 100) throw new Error(`${what} is longer than 100 code points`);
}

function checkActivity(activity: Activity): void {
  if (activity.kind === 'tool_start' || activity.kind === 'tool_end') {
    checkShown('tool', activity.tool);
    checkShown('detail', activity.detail);
  } else if (activity.kind === 'text' || activity.kind === 'note') checkShown('text', activity.text);
  else {
    checkShown('retry message', activity.message);
    if (!Number.isFinite(activity.attempt)) throw new Error(`retry attempt ${activity.attempt}`);
  }
}

describe('fuzz: pi stream reader', () => {
  it('the lines do not depend on where the chunks were cut', () => {
    fuzz('LineSplitter', 2000, streamCase, (input) => {
      expect(split(input)).toEqual(split(input, true));
    });
  });

  it('chunks to lines to events: nothing throws, figures stay finite and non-negative, activities are one line', () => {
    fuzz('TurnObserver', 2000, streamCase, (input) => {
      const usage: { tokens: number; cost: number }[] = [];
      const observer = new TurnObserver({ onActivity: checkActivity, onUsage: (figures) => usage.push(figures) });
      const lines = split(input);
      for (const line of lines) observer.take(line);
      const summary = observer.reader.summary;
      for (const figures of [summary, ...usage]) {
        if (!isFigure(figures.tokens) || !isFigure(figures.cost))
          throw new Error(`figures ${figures.tokens} / ${figures.cost}`);
      }
      expect(summary.lines).toBeLessThanOrEqual(lines.length);
      expect(summary.nonJson).toBeLessThanOrEqual(summary.lines);
    });
  });

  it('arbitrary single lines: the reader never throws and counts what is not an event', () => {
    fuzz(
      'StreamReader.feed',
      3000,
      (g) => (g.chance(0.5) ? eventLine(g) : g.text(g.int(200), [...JUNK, ...TEXT])),
      (line) => {
        const reader = new StreamReader();
        const event = reader.feed(line);
        const { lines, nonJson, tokens, cost } = reader.summary;
        expect(lines).toBeLessThanOrEqual(1);
        expect(nonJson).toBe(event === undefined ? lines : 0);
        expect(isFigure(tokens) && isFigure(cost)).toBe(true);
        expect(isFigure(readStream([line, line]).tokens)).toBe(true);
      },
    );
  });
});
