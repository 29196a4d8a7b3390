// Seeded fuzzing of the patch check (issue 15 point 5). Generated patches mix every header form git accepts
// (renames and copies in all spellings, modes in odd spellings, quoted paths with escapes, hunks whose counts
// lie, binary markers) with hostile names. Two properties: our reader never throws and folds each motif to one
// line; and, checked against git itself on a sample, our reading is never blinder than git's — every path git
// would write is one we read (or refuse), and every symlink or submodule mode git would set is one we flag.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathRefusal } from '../../src/bon/patch/apply.js';
import { isSpecialMode, parsePatchHeaders } from '../../src/bon/patch/text.js';
import { fuzz, type Gen } from '../helpers/fuzz.js';

const NAMES = [
  'a.txt',
  'src/x.js',
  '.git/config',
  '.GIT/hooks/pre-commit',
  'sub/.git/x',
  '../out',
  '/etc/passwd',
  'dir with space/f',
  'tab\there',
  'é.txt',
  'a/../../b',
  'link',
  '.gitx',
  'x.git',
];
const MODES = [
  '100644',
  '100755',
  '120000',
  '120777',
  '0120000',
  '1120000',
  '160000',
  '040000',
  '100644 junk',
  '120000 x',
  '644',
  'zzz',
];

function quoted(g: Gen, name: string): string {
  if (!g.chance(0.3)) return name;
  // C-quoting as git writes it, sometimes with octal escapes for every byte.
  const body = g.chance(0.5)
    ? name.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\t/g, '\\t')
    : [...Buffer.from(name, 'utf8')].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('');
  return `"${body}"`;
}

function header(g: Gen, a: string, b: string): string[] {
  const lines = [`diff --git ${quoted(g, `a/${a}`)} ${quoted(g, `b/${b}`)}`];
  const pick = g.int(7);
  if (pick === 0) lines.push(`new file mode ${g.pick(MODES)}`);
  if (pick === 1) lines.push(`deleted file mode ${g.pick(MODES)}`);
  if (pick === 2) lines.push(`old mode ${g.pick(MODES)}`, `new mode ${g.pick(MODES)}`);
  if (pick === 3)
    lines.push(
      'similarity index 100%',
      `${g.pick(['rename from', 'rename old', 'copy from'])} ${quoted(g, a)}`,
      `${g.pick(['rename to', 'rename new', 'copy to'])} ${quoted(g, b)}`,
    );
  if (pick === 4) lines.push(`index 0000000..1111111 ${g.pick(MODES)}`);
  if (pick === 5) lines.push('GIT binary patch', 'literal 0', 'HcmV?d00001', '');
  return lines;
}

function hunk(g: Gen, a: string, b: string): string[] {
  const out = [`--- ${g.chance(0.5) ? '/dev/null' : quoted(g, `a/${a}`)}`, `+++ ${quoted(g, `b/${b}`)}`];
  // Bodies that look like headers, and (sometimes) a count that lies about the body's length.
  const body = Array.from({ length: 1 + g.int(4) }, () =>
    g.pick(['+x', '+--- a/.git/config', '+diff --git a/.git/x b/.git/x', '++++ b/.git/y']),
  );
  out.push(`@@ -0,0 +1,${g.chance(0.7) ? body.length : g.int(5)} @@`, ...body);
  return out;
}

function patch(g: Gen): string {
  const parts: string[] = [];
  for (let f = 0, n = g.chance(0.7) ? 1 : 2 + g.int(2); f < n; f += 1) {
    const a = g.pick(NAMES);
    const b = g.chance(0.7) ? a : g.pick(NAMES);
    parts.push(...header(g, a, b));
    if (g.chance(0.6)) parts.push(...hunk(g, a, b));
  }
  return `${parts.join(g.chance(0.1) ? '\r\n' : '\n')}\n`;
}

describe('fuzz: the patch header reader', () => {
  it('never throws, and every refusal it can give is one line', () => {
    fuzz('parsePatchHeaders', 3000, patch, (text) => {
      const headers = parsePatchHeaders(text);
      for (const p of headers.paths) {
        const refused = pathRefusal(p);
        if (refused !== undefined && /[\n\r\u2028\u2029\u0085]/.test(refused))
          throw new Error(`a refusal with a line break: ${JSON.stringify(refused)}`);
      }
    });
  });
});

describe('fuzz: our reading is never blinder than git apply', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-fuzz-patch-')));
    execFileSync('git', ['init', '-q'], { cwd: dir });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('every path git would write is read by us, every special mode git would set is flagged', () => {
    const file = path.join(dir, 'p.patch');
    let accepted = 0;
    let special = 0;
    fuzz('patch vs git', 250, patch, (text) => {
      fs.writeFileSync(file, text);
      let numstat: string;
      let summary: string;
      try {
        numstat = execFileSync('git', ['apply', '--numstat', '-z', '--', file], {
          cwd: dir,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        summary = execFileSync('git', ['apply', '--summary', '--', file], {
          cwd: dir,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        });
      } catch {
        return; // git refuses the patch outright: nothing it would write
      }
      accepted += 1;
      const ours = parsePatchHeaders(text);
      const read = new Set(ours.paths.map((p) => p.path));
      const gitPaths = numstat.split('\0').flatMap((field) => {
        const parts = field.split('\t');
        return parts.length >= 3 ? [parts.slice(2).join('\t')] : field ? [field] : [];
      });
      for (const p of gitPaths.filter((x) => x !== ''))
        expect({ path: p, read: read.has(p) }).toEqual({ path: p, read: true });
      const gitSpecial = summary.split('\n').some((line) => {
        const m = /^ (?:create|delete) mode (\S+) /.exec(line) ?? /^ mode change (\S+) => (\S+) /.exec(line);
        return m !== null && m.slice(1).some((x) => x !== undefined && isSpecialMode(x));
      });
      if (gitSpecial) {
        special += 1;
        expect(ours.symlinkCreated).toBeDefined();
      }
    });
    // Not vacuous: git reads a good share of the generated patches, special modes included.
    expect(accepted).toBeGreaterThan(50);
    expect(special).toBeGreaterThan(5);
  });
});
