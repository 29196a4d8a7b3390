// Fuzzing the roster parser (issue 15): mutations of a valid roster (odd keys, reserved names, control characters,
// deep nesting, random scalars, truncations, YAML noise, aliases) must each give a Roster or a one-line
// UsageError that quotes no secret; never another error, never a crash. Reproducible: FUZZ_SEED=<seed> reruns
// the sequence a failure names. The pure parser is driven directly; a handful of cases go through the file and
// its cache twice.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/contract/errors.js';
import { agentFor, loadRosterIfPresent, rosterParser, type Roster } from '../../src/config/roster.js';
import { RESERVED_NAMES, ROLE_PATTERN } from '../../src/config/rosterVocabulary.js';
import { fuzz, fuzzSeed, gen, type Gen } from '../helpers/fuzz.js';
import { makeTempRepo } from '../helpers/repo.js';

const parse = await rosterParser();
/**
 * About 1.5 ms of CPU each on a 2-core machine under load (3 s for the lot), less when idle.
 * FUZZ_ITERATIONS=50000 soaks it longer, locally.
 */
const ITERATIONS = Number(process.env.FUZZ_ITERATIONS) || 2000;
const BREAKS = /[\n\r\v\f\u0085\u2028\u2029]/;
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

interface Case {
  text: string;
  secret: string;
}

/** Letters and digits alternate, so every 16-character window of the tail looks like a key (and must stay hidden). */
function secretOf(g: Gen): string {
  let tail = '';
  for (let i = 0; i < 12; i += 1) tail += `${g.pick([...'abcdefghijklmnopqrstuvwxyz'])}${g.int(10)}`;
  return `sk-or-v1-${tail}`;
}

function baseRoster(g: Gen, secret: string): string[] {
  // The secret sits in one spot, most often where a key NAME belongs (auth.keys), else where a value does; some
  // cases hold it nowhere. Each optional block is there half the time: a case's parse time is about its size.
  const spot = g.int(12);
  const at = (n: number, value: string) => (spot === n ? secret : value);
  const some = (...lines: string[]) => (g.chance(0.5) ? lines : []);
  return [
    ...some(`gateway: ${at(0, 'openrouter')}`),
    ...some(`fallback_model: ${at(1, 'moonshotai/kimi-k2.6')}`),
    ...some('payload:', `  dir: ${at(2, '.')}`, '  commands: [npm test, { run: npm run lint, timeout: 120 }]'),
    ...some('context: { prune_turns: 4, prune_kb: 8 }'),
    'agents:',
    '  prompter:',
    `    model: ${at(3, 'z-ai/glm-5.3')}`,
    ...some(`    thinking: ${at(4, 'low')}`),
    ...some(`    tools: [read, ${at(5, 'grep')}]`),
    ...some('    limits: { max_turns: 10, max_cost_usd: 0.25 }'),
    `    auth: { keys: [${at(6, 'ZAI_API_KEY')}] }`,
    ...some(
      '  builder:',
      `    writable: [src, ${at(7, 'test')}]`,
      '    auth:',
      `      keys: [OPENROUTER_API_KEY, "${at(8, 'ZAI_API_KEY')}"]`,
      '      direct: false',
    ),
  ];
}

const KEYS = [
  ...RESERVED_NAMES,
  '"__proto__"',
  '"constructor"',
  'model',
  'tools',
  'agents',
  'auth',
  'keys',
  'limits',
  'builder',
  'prompter',
  'run',
  'timeout',
  'Builder',
  'my role',
  '"a\\nb"',
  '"a\\rb"',
  '"a\\u2028b"',
  '"a\\u2029b"',
  '"a\\x85b"',
  '"a\\x7fb"',
  '"a\\tb"',
  '"\\u202e"',
  'a\u2028b',
  'a\u0085b',
  'ünïcode',
  '"quoted key"',
  "'single'",
  '1',
  'true',
  '~',
  '? [1, 2]',
  '<<',
  'x'.repeat(1100),
];
const SCALARS = [
  '0',
  '-1',
  '1e309',
  '.nan',
  '.inf',
  '-.inf',
  '0x1F',
  '0o17',
  '2.5',
  '1_000',
  '~',
  'null',
  'true',
  'yes',
  '',
  '""',
  "''",
  '"\\u2028"',
  '"\\q"',
  "'it''s'",
  '|\n  line one\n  line two',
  '>-\n  folded',
  '!!str 3',
  '!!int x',
  '!custom v',
  '!!binary aGVsbG8=',
  '!!timestamp 2001-12-14',
  '!!set { a, b }',
  '2001-12-14',
  'x'.repeat(300),
  '@x',
  '`x',
  '%x',
  '*nowhere',
  '&anchor v',
  '[]',
  '{}',
  'read',
  'grpe',
  'report_phase',
  '../out',
  '/abs',
  'a/b',
  'openrouter/',
  'ghp_a1b2c3d4e5f6g7h8i9',
];
const NOISE = [
  '[',
  ']',
  '{',
  '}',
  ':',
  ': ',
  '-',
  '- ',
  '?',
  ',',
  '&a',
  '*a',
  '!t',
  '!!set',
  '"',
  "'",
  '|',
  '>',
  '#',
  ' #',
  '%',
  '@',
  '`',
  '\t',
  '\r',
  '\n',
  '\u2028',
  '\u0085',
  '\u0000',
  '---',
  '...',
  '  ',
  '\n  ',
];

function value(g: Gen, secret: string): string {
  if (g.chance(0.1)) return secret;
  if (g.chance(0.15)) return nest(g, g.pick(SCALARS));
  return g.pick(SCALARS);
}

function nest(g: Gen, inner: string): string {
  const n = g.pick([1, 2, 5, 20, 40, 100, 1000]);
  const style = g.int(4);
  if (style === 0) return `${'['.repeat(n)}${inner}${']'.repeat(n)}`;
  if (style === 1) return `${'{a: '.repeat(n)}${inner}${'}'.repeat(n)}`;
  if (style === 2) return '['.repeat(n); // never closed
  return `\n${Array.from({ length: Math.min(n, 300) }, (_, i) => `${' '.repeat(i + 2)}k${i}:`).join('\n')} ${inner}`;
}

const indentOf = (line: string) => line.length - line.trimStart().length;

function mutate(g: Gen, lines: string[], secret: string): string[] {
  const at = g.int(lines.length);
  switch (g.int(13)) {
    case 0: {
      const indent = g.chance(0.7) ? indentOf(lines[at] ?? '') : g.int(9);
      const key = g.chance(0.05) ? secret : g.pick(KEYS);
      lines.splice(at, 0, `${' '.repeat(indent)}${key}: ${value(g, secret)}`);
      return lines;
    }
    case 1: {
      const line = lines[at] ?? '';
      const colon = line.indexOf(': ');
      lines[at] = colon === -1 ? `${line} ${value(g, secret)}` : `${line.slice(0, colon + 2)}${value(g, secret)}`;
      return lines;
    }
    case 2:
      lines[at] = `${lines[at] ?? ''}${nest(g, g.pick(SCALARS))}`;
      return lines;
    case 3: {
      const text = lines.join('\n');
      return text.slice(0, g.int(text.length + 1)).split('\n');
    }
    case 4: {
      let text = lines.join('\n');
      for (let k = 1 + g.int(4); k > 0; k -= 1) {
        const i = g.int(text.length + 1);
        text = `${text.slice(0, i)}${g.pick(NOISE)}${text.slice(i)}`;
      }
      return text.split('\n');
    }
    case 5:
      if (g.chance(0.5)) lines.splice(at, 0, lines[g.int(lines.length)] ?? '');
      else lines.splice(at, 1);
      return lines;
    case 6: {
      const line = lines[at] ?? '';
      const shift = g.pick([-4, -2, -1, 1, 2, 4]);
      lines[at] = g.chance(0.1) ? `\t${line}` : `${' '.repeat(Math.max(0, indentOf(line) + shift))}${line.trimStart()}`;
      return lines;
    }
    case 7: {
      // Aliases: one shared anchor, an alias out of nowhere, or a small bomb.
      const target = lines.findIndex((l, i) => i >= at && /: \S/.test(l));
      if (target !== -1) lines[target] = lines[target]!.replace(': ', ': &a ');
      lines.splice(
        g.int(lines.length + 1),
        0,
        `${' '.repeat(g.pick([0, 2, 4]))}${g.pick(KEYS)}: *${g.pick(['a', 'b'])}`,
      );
      if (g.chance(0.2)) lines.push('b: &b [*a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b]');
      return lines;
    }
    case 8:
      return g.chance(0.5)
        ? [...lines, '---', ...lines.slice(0, 3)]
        : lines.map((l) => (g.chance(0.1) ? `${l} # ${g.pick(NOISE)}` : l));
    default:
      return benign(g, lines, at);
  }
}

/** Edits that keep a valid roster valid, so that accepted rosters get their invariants checked too. */
function benign(g: Gen, lines: string[], at: number): string[] {
  switch (g.int(4)) {
    case 0:
      lines.splice(at, 0, g.pick(['', '# a comment [ { " \'', `${' '.repeat(indentOf(lines[at] ?? ''))}# ünïcode ✓`]));
      return lines;
    case 1:
      return [
        ...lines,
        `  ${g.pick(['judge'])}: { model: a/b, tools: [read], timeout: ${g.pick(['1', '60', '0.5'])} }`,
      ];
    case 2:
      return lines.map((l) =>
        l.replace(
          /^(\s*(?:gateway|model|thinking|dir): )([\w./-]+)$/,
          (_, key: string, v: string) => `${key}${g.pick([`"${v}"`, `'${v}'`, v])}`,
        ),
      );
    default:
      return [...lines.slice(1), lines[0]!];
  }
}

function makeCase(g: Gen): Case {
  const secret = secretOf(g);
  let lines = baseRoster(g, secret);
  for (let m = 1 + g.int(3); m > 0; m -= 1) lines = mutate(g, lines, secret);
  return { text: lines.join(g.chance(0.1) ? '\r\n' : '\n'), secret };
}

/** The invariants a motif keeps, whatever the input. */
function checkMotif(message: string, c: Case): void {
  if (BREAKS.test(message) || UNSAFE.test(message))
    throw new Error(`motif not on one line: ${JSON.stringify(message)}`);
  const tail = c.secret.slice('sk-or-v1-'.length);
  for (let i = 0; i + 16 <= tail.length; i += 1) {
    if (message.includes(tail.slice(i, i + 16))) throw new Error(`motif quotes the secret: ${JSON.stringify(message)}`);
  }
  // The pre-scan bounds nesting before the parser: only an alias loop can reach the walk's own depth check.
  if (/nested deeper than/.test(message) && !c.text.includes('*'))
    throw new Error(`the nesting pre-scan under-counted: ${message}`);
  // The reader's last resort names an exception it did not expect: a bug, even if the user sees one line.
  if (/YAML could not be read/.test(message)) throw new Error(`unexpected exception in the reader: ${message}`);
}

/** The invariants an accepted roster keeps. Plain checks, not expect(): they run thousands of times. */
function checkRoster(roster: Roster): void {
  if (Object.getPrototypeOf(roster.agents) !== null) throw new Error('agents is not a null-prototype map');
  for (const role of [...Object.keys(roster.agents), 'constructor', 'builder']) {
    if (Object.hasOwn(roster.agents, role) && (!ROLE_PATTERN.test(role) || RESERVED_NAMES.has(role)))
      throw new Error(`role ${JSON.stringify(role)} accepted`);
    const profile = agentFor(roster, role);
    if (!(Number.isFinite(profile.timeoutMs) && profile.timeoutMs > 0))
      throw new Error(`${role}: timeout ${profile.timeoutMs}`);
    if (!Array.isArray(profile.tools)) throw new Error(`${role}: tools ${String(profile.tools)}`);
  }
}

/** Checks one case; true when the roster was refused. */
function check(c: Case): boolean {
  let roster: Roster;
  try {
    roster = parse('/fuzz/factory.config.yaml', c.text);
  } catch (error) {
    if (!(error instanceof UsageError))
      throw new Error(
        `not a UsageError: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
      );
    checkMotif(error.message, c);
    return true;
  }
  checkRoster(roster);
  return false;
}

describe('roster fuzz', () => {
  it(`${ITERATIONS} mutated rosters: a Roster, or a one-line UsageError without the secret`, () => {
    let refused = 0;
    fuzz('roster', ITERATIONS, makeCase, (c) => {
      if (check(c)) refused += 1;
    });
    // The generator must exercise both outcomes, or it tests nothing.
    expect(refused).toBeGreaterThan(ITERATIONS * 0.5);
    expect(refused).toBeLessThan(ITERATIONS * 0.95);
  });

  it('the unmutated roster is valid', () => {
    const g = gen(fuzzSeed());
    const secret = secretOf(g);
    const roster = parse('/r.yaml', baseRoster({ ...g, int: () => 11, chance: () => true }, secret).join('\n'));
    expect(roster.agents.builder?.auth?.keys).toEqual(['OPENROUTER_API_KEY', 'ZAI_API_KEY']);
    expect(roster.payload.commands).toHaveLength(2);
  });

  it('through the file and the cache, twice: the same outcome both times', async () => {
    const seed = fuzzSeed();
    const repo = makeTempRepo();
    try {
      const file = path.join(repo.dir, 'adws', 'adw_config', 'factory.config.yaml');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      for (let i = 0; i < 12; i += 1) {
        const c = makeCase(gen(seed * 104_729 + i));
        fs.writeFileSync(file, c.text);
        const outcome = async () =>
          loadRosterIfPresent(repo.dir).then(
            (r) => ({ roster: JSON.stringify(r) }),
            (e: unknown) => ({ error: e }),
          );
        const [first, second] = [await outcome(), await outcome()];
        const where = `seed ${seed}, file case ${i} (FUZZ_SEED=${seed})`;
        if ('error' in first) {
          expect(first.error, where).toBeInstanceOf(UsageError);
          expect(second, where).toEqual(first);
          checkMotif((first.error as Error).message, c);
        } else expect(second, where).toEqual(first);
      }
    } finally {
      repo.cleanup();
    }
  });
});
