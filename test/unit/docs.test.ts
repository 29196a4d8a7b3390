// The README is a newcomer's page and docs/ holds the rest (issue 40, point 1): the README stays short, every link
// between them lands on a file and a heading that exist, each docs page says its command lines are illustrative
// (the README's set-up blocks are the ones test/e2e/readme-install.test.ts runs), and the floor table of
// docs/architecture.md is the wall test's own list.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLOORS } from '../helpers/floors.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = path.join(ROOT, 'docs');
const pages = fs
  .readdirSync(DOCS)
  .filter((f) => f.endsWith('.md'))
  .map((f) => path.join(DOCS, f));
const read = (file: string) => fs.readFileSync(file, 'utf8');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  let code = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) code = !code;
    const m = !code && /^#{1,6}\s+(.*)$/.exec(line);
    if (m) out.add(slug(m[1]!));
  }
  return out;
}

/** Relative links of a Markdown text (`[x](target#anchor)`), outside code blocks and spans. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
}

describe('the README and docs/', () => {
  it('the README is a page a newcomer reads: at most 180 lines', () => {
    expect(read(path.join(ROOT, 'README.md')).trimEnd().split('\n').length).toBeLessThanOrEqual(180);
  });

  it('every link between them lands on a file and, when it names one, a heading', () => {
    const broken: string[] = [];
    for (const file of [path.join(ROOT, 'README.md'), ...pages]) {
      for (const link of linksOf(read(file))) {
        const [target, anchor] = link.split('#') as [string, string | undefined];
        const to = target === '' ? file : path.resolve(path.dirname(file), target);
        if (!fs.existsSync(to)) broken.push(`${path.relative(ROOT, file)} → ${link} (no file)`);
        else if (anchor && to.endsWith('.md') && !anchorsOf(read(to)).has(anchor))
          broken.push(`${path.relative(ROOT, file)} → ${link} (no heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("each docs page says its command lines are illustrative (the README's are the tested ones)", () => {
    const silent = pages.filter(
      (p) => /```(sh|bash)\n/.test(read(p)) && !read(p).includes('Command lines on this page are illustrative'),
    );
    expect(silent.map((p) => path.basename(p))).toEqual([]);
  });

  it("the floor table of docs/architecture.md is the wall test's list, floor by floor", () => {
    const rows = read(path.join(DOCS, 'architecture.md'))
      .split('\n')
      .filter((l) => /^\| \d+ \|/.test(l))
      .map((l) => [...l.split('|')[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, '')));
    expect(rows).toEqual(FLOORS.map((floor) => [...floor]));
  });
});
