// Rosters without traps (issue 15): names an object inherits, keys that break a line, texts too big or too deep
// for the parser, and parser errors that would quote a secret. Each is a one-line RosterError, never a raw
// TypeError or RangeError, never a crash; and every lookup by role is own-only.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { UsageError } from '../../src/contract/errors.js';
import {
  agentFor,
  defaultRoster,
  loadRoster,
  loadRosterIfPresent,
  roleConfig,
  RosterError,
  rosterParser,
} from '../../src/config/roster.js';
import { MAX_ROSTER_BYTES, MAX_ROSTER_DEPTH, RESERVED_NAMES } from '../../src/config/rosterVocabulary.js';
import { fuzz, type Gen } from '../helpers/fuzz.js';
import { makeTempRepo, type TempRepo } from '../helpers/repo.js';

const BREAKS = /[\n\r\v\f\u0085\u2028\u2029]/;
const SECRET = 'sk-or-v1-a1b2c3d4e5f6a7b8c9d0e1f2';
const parse = await rosterParser();

function refusal(text: string): string {
  let error: unknown;
  try {
    parse('/r.yaml', text);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(RosterError);
  expect(error).toBeInstanceOf(UsageError);
  const message = (error as Error).message;
  expect(message).not.toMatch(BREAKS);
  expect(message.startsWith('/r.yaml: ')).toBe(true);
  return message.slice('/r.yaml: '.length);
}

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

function repoRoster(text: string): string {
  repo = makeTempRepo();
  const file = path.join(repo.dir, 'adws', 'adw_config', 'factory.config.yaml');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/** Through the file and the cache path, twice: an invalid roster is never cached, so both reads refuse alike. */
async function refusedTwice(text: string): Promise<string> {
  repoRoster(text);
  const messages: string[] = [];
  for (let i = 0; i < 2; i += 1) {
    const error = await loadRosterIfPresent(repo!.dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RosterError);
    messages.push((error as Error).message);
  }
  expect(messages[1]).toBe(messages[0]);
  expect(messages[0]).not.toMatch(BREAKS);
  return messages[0]!;
}

describe('reserved names', () => {
  it('covers every name Object.prototype has, and prototype', () => {
    for (const name of [...Object.getOwnPropertyNames(Object.prototype), 'prototype'])
      expect(RESERVED_NAMES.has(name), name).toBe(true);
  });

  it('refuses a role named constructor with a clear motif', () => {
    expect(refusal('agents:\n  constructor: { model: a/b }\n')).toBe(
      'agents."constructor" is a reserved name (it collides with JavaScript object internals): rename the role',
    );
  });

  it('refuses every reserved name as a role and as any key, at any level', () => {
    for (const name of RESERVED_NAMES) {
      const key = JSON.stringify(name);
      expect(refusal(`agents:\n  ${key}: {}\n`)).toMatch(/^agents\..+ is a reserved name .*: rename the role$/);
      expect(refusal(`${key}: 1\n`)).toMatch(/ is a reserved name .*: rename or remove the key$/);
      expect(refusal(`agents:\n  builder:\n    limits: { ${key}: 1 }\n`)).toMatch(
        /^agents\.builder\.limits\..+ is a reserved name/,
      );
      expect(refusal(`payload:\n  commands:\n    - { run: ls, ${key}: 2 }\n`)).toMatch(
        /^payload\.commands\[0\]\..+ is a reserved name/,
      );
    }
  });

  it('refuses a reserved name as an auth key NAME: names index the environment', () => {
    expect(refusal('agents:\n  builder:\n    auth: { keys: [OPENROUTER_API_KEY, toString] }\n')).toBe(
      'agents.builder.auth.keys[1]: "toString" is a reserved name (it collides with JavaScript object internals), not an environment variable',
    );
    expect(refusal('agents:\n  builder:\n    auth: { keys: [__proto__] }\n')).toMatch(
      /keys\[0\]: "__proto__" is a reserved name/,
    );
  });

  it('refuses __proto__ (plain or quoted), where it used to be dropped silently', () => {
    expect(refusal('agents:\n  __proto__: { model: a/b }\n')).toMatch(/^agents\."__proto__" is a reserved name/);
    expect(refusal('agents: { "__proto__": { model: a/b } }\n')).toMatch(/^agents\."__proto__" is a reserved name/);
    expect(refusal('__proto__: { gateway: x }\n')).toMatch(/^"__proto__" is a reserved name/);
  });

  it('lookups by role are own-only: no inherited member, no NaN timeout, no TypeError', async () => {
    const loaded = parse('/r.yaml', 'agents:\n  builder: { model: a/b }\n');
    expect(Object.getPrototypeOf(loaded.agents)).toBeNull();
    for (const roster of [defaultRoster(), loaded]) {
      for (const role of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
        expect(roleConfig(roster, role)).toBeUndefined();
        const profile = agentFor(roster, role);
        expect(profile.timeoutMs).toBe(600_000);
        expect(profile.tools).toEqual(['read', 'grep', 'find', 'ls', 'bash']);
        expect(profile.auth).toBeUndefined();
      }
    }
    // The cache hands back JSON.parse's ordinary objects: lookups stay own-only there too.
    repoRoster('agents:\n  builder: { model: a/b }\n');
    await loadRosterIfPresent(repo!.dir);
    const cached = await loadRosterIfPresent(repo!.dir);
    expect(agentFor(cached, 'constructor').timeoutMs).toBe(600_000);
    expect(roleConfig(cached, 'builder')?.model).toBe('a/b');
  });
});

describe('keys that would break the line', () => {
  it('refuses a key with a control or line-break character, shown escaped', () => {
    const cases: Array<[string, string]> = [
      ['a\\nb', 'a\\nb'],
      ['a\\rb', 'a\\rb'],
      ['a\\tb', 'a\\tb'],
      ['a\\x7fb', 'a\\u007fb'],
      ['a\\x85b', 'a\\u0085b'],
      ['a\\u2028b', 'a\\u2028b'],
      ['a\\u2029b', 'a\\u2029b'],
      ['a\\u202eb', 'a\\u202eb'],
      ['a\\x00b', 'a\\u0000b'],
    ];
    for (const [written, escaped] of cases) {
      expect(refusal(`agents:\n  "${written}": {}\n`)).toBe(
        `agents."${escaped}": a key with a control or line-break character (shown escaped): rename it`,
      );
      expect(refusal(`gateway: x\n"${written}": 1\n`)).toContain(`"${escaped}"`);
    }
  });

  it('a file whose path holds a line break is named quoted', async () => {
    repo = makeTempRepo();
    const file = path.join(repo.dir, 'odd\nname.yaml');
    fs.writeFileSync(file, 'gateway: 3\n');
    await expect(loadRoster(file)).rejects.toThrow(
      `${JSON.stringify(file)}: gateway: string expected, number received`,
    );
    await expect(loadRoster(`${file}.missing`)).rejects.toThrow(/^roster not found: ".*odd\\nname\.yaml\.missing"$/);
  });

  it('an unknown or badly named key is quoted, and one that looks like a credential is not shown', () => {
    expect(refusal('agents:\n  "My Role": {}\n')).toMatch(/^agents\."My Role": role names are lower-case words/);
    expect(refusal(`agents:\n  builder:\n    ${SECRET}: 1\n`)).not.toContain(SECRET.slice(9));
    expect(refusal(`agents:\n  ${SECRET}:\n    model: 3\n`)).not.toContain(SECRET.slice(9));
  });
});

describe('size and nesting, bounded before the parser', () => {
  it('refuses a text over the size bound', () => {
    expect(refusal(`gateway: x\n#${'-'.repeat(MAX_ROSTER_BYTES)}\n`)).toMatch(/^larger than 256 KB/);
  });

  it('reads a file no further than the bound (a huge file, a device)', async () => {
    const file = repoRoster(`# ${'x'.repeat(MAX_ROSTER_BYTES)}\n`);
    await expect(loadRoster(file)).rejects.toThrow(/: larger than 256 KB, which no roster needs/);
    if (fs.existsSync('/dev/zero'))
      await expect(loadRoster('/dev/zero')).rejects.toThrow(/^\/dev\/zero: larger than 256 KB/);
  });

  it('refuses 10 000-deep flow nesting, on the first read and on the cache path', async () => {
    const motif = /nested too deeply at line 1 \(more than 64 levels\)/;
    expect(refusal(`a: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`)).toMatch(motif);
    expect(refusal(`a: ${'['.repeat(10_000)}\n`)).toMatch(motif);
    expect(refusal(`a: ${'{a: '.repeat(10_000)}\n`)).toMatch(motif);
    expect(await refusedTwice(`agents: ${'['.repeat(10_000)}\n`)).toMatch(motif);
  });

  it('refuses deep block nesting (indented maps, compact sequences), on both paths', async () => {
    const indented = Array.from({ length: 600 }, (_, i) => `${' '.repeat(i)}k:`).join('\n');
    expect(refusal(indented)).toMatch(/nested too deeply at line \d+ /);
    expect(refusal(`${'- '.repeat(10_000)}x\n`)).toMatch(/nested too deeply/);
    expect(refusal(Array.from({ length: 200 }, (_, i) => `${'  '.repeat(i)}${i ? '- ' : ''}k:`).join('\n'))).toMatch(
      /nested too deeply/,
    );
    expect(await refusedTwice(indented)).toMatch(/nested too deeply/);
  });

  it('counts nothing in scalars, comments or block scalars, and lets real rosters nest well within the bound', () => {
    const script = `payload:\n  commands:\n    - run: |\n${'        [[[ { "don\'t\n'.repeat(200)}`;
    expect(parse('/r.yaml', script).payload.commands).toHaveLength(1);
    expect(parse('/r.yaml', `pi: "${'['.repeat(500)}"\n# ${'{'.repeat(500)}\n`).pi).toBe('['.repeat(500));
    const nested = (depth: number) =>
      `${Array.from({ length: depth }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n')} 1\n`;
    expect(refusal(nested(MAX_ROSTER_DEPTH / 4))).toMatch(/^roster: unknown key "k0"/); // parsed, then validated
  });

  it('the estimate is an upper bound: deep documents in every style yaml writes are refused before the parser', () => {
    // A random chain of mappings and sequences `depth` deep, written by yaml itself in block, flow or mixed style.
    const chain = (g: Gen, depth: number): unknown => {
      let value: unknown = 'leaf';
      for (let i = 0; i < depth; i += 1)
        value = g.chance(0.5) ? [value, ...(g.chance(0.3) ? ['x'] : [])] : { [g.pick(['k', 'agents', 'a b'])]: value };
      return { agents: value };
    };
    const write = (g: Gen, depth: number) =>
      stringify(chain(g, depth), {
        indent: 1 + g.int(4),
        indentSeq: g.chance(0.5),
        collectionStyle: g.pick(['any', 'block', 'flow'] as const),
      });
    fuzz(
      'deep roster',
      150,
      (g) => write(g, MAX_ROSTER_DEPTH + 1 + g.int(150)),
      (text) => {
        expect(refusal(text)).toMatch(/^(nested too deeply at line \d+ |larger than 256 KB)/); // both before the parser
      },
    );
    fuzz(
      'shallow roster',
      150,
      (g) => write(g, 1 + g.int(MAX_ROSTER_DEPTH / 4)),
      (text) => {
        expect(refusal(text)).not.toMatch(/nested too deeply/);
      },
    );
  });

  it('refuses an alias bomb and an alias inside its own anchor; a shared block is fine', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...'bcdefgh'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefgh'[i]}`).join(', ')}]`),
    ].join('\n');
    expect(refusal(bomb)).toMatch(/^YAML aliases expand too much \(more than 50 references\)/);
    expect(refusal('agents: &x\n  builder: *x\n')).toMatch(
      /nested deeper than 64 levels \(or an alias inside its own anchor\)$/,
    );
    expect(refusal('agents:\n  builder: *nowhere\n')).toBe('YAML syntax error: an alias names no anchor set before it');
    const shared = parse('/r.yaml', 'agents:\n  builder: &b { model: a/b, timeout: 60 }\n  prompter: *b\n');
    expect(shared.agents.prompter).toEqual(shared.agents.builder);
  });
});

describe('parser errors never quote the source', () => {
  it('a syntax error on the line of a secret names the line and the code, not the value', () => {
    const texts = [
      `agents:\n  builder:\n    auth:\n      keys: [${SECRET}, "unterminated\n`,
      `agents:\n  builder:\n    auth:\n      keys: ["${SECRET}\\q"]\n`,
      `agents:\n  builder:\n    auth:\n      keys: [${SECRET}\n    model: a/b\n`,
      `agents:\n  builder:\n    auth:\n      keys: [ZAI_API_KEY] ${SECRET}\n`,
      `agents:\n  builder:\n    auth:\n\tkeys: [${SECRET}]\n`,
      `agents:\n  builder:\n    model: @${SECRET}\n`,
      `agents:\n  builder:\n    model: a/b\n    model: ${SECRET}\n`,
    ];
    for (const text of texts) {
      const motif = refusal(text);
      expect(motif).toMatch(/^YAML syntax error at line \d+, column \d+: .* \([A-Z_]+\)$/);
      expect(motif).not.toContain(SECRET.slice(9, 21));
    }
  });

  it('a schema motif names the path, and shows a value only when it cannot be a credential', () => {
    for (const text of [
      `fallback_model: ${SECRET}\n`,
      `gateway: ${SECRET}/\n`,
      `agents:\n  builder: { thinking: ${SECRET} }\n`,
      `agents:\n  builder: { tools: [read, ${SECRET}] }\n`,
      `payload: { dir: /${SECRET} }\n`,
      `harness: ghp_a1b2c3d4e5f6g7h8\n`,
    ]) {
      const motif = refusal(text);
      expect(motif).toMatch(/not shown/);
      expect(motif).not.toMatch(/a1b2c3d4|sk-or|ghp_/);
    }
    expect(refusal('agents:\n  builder: { tools: [grpe] }\n')).toContain('unknown tool "grpe"');
  });

  it('odd values and keys get a motif, not a crash', () => {
    expect(refusal('agents:\n  builder: { timeout: .nan }\n')).toBe(
      'agents.builder.timeout: number expected, NaN received',
    );
    expect(refusal('agents:\n  builder: { timeout: .inf }\n')).toBe(
      'agents.builder.timeout: number expected, Infinity received',
    );
    expect(refusal('? [1, 2]\n: 3\n')).toMatch(/\(NON_STRING_KEY\)$/);
    expect(refusal('%YAML 1.1\n---\ngateway: !!set { a, b }\n')).toMatch(/^gateway: a tagged YAML value/);
    expect(refusal('gateway: x\n---\ngateway: y\n')).toMatch(/more than one YAML document .*\(MULTIPLE_DOCS\)$/);
  });
});
