// The built CLI in a real 80×24 terminal (tmux): the doctor's checklist, taller than the terminal, opens on its first
// problem and scrolls (g, G, k, j, PgUp, PgDn); the arms board's compare view (`s`, after `factory demo`: the real
// pi under test and the scripted model) aligns two arms' patches line by line. Needs `npm run build`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FACTORY_BIN } from '../helpers/cli.js';
import { makeTempRepo, type TempRepo } from '../helpers/repo.js';
import { cliChildEnv } from '../helpers/rig.js';
import { hasTmux, startTmux, type TmuxSession } from '../helpers/tmux.js';

let term: TmuxSession | undefined;
let repo: TempRepo | undefined;
let scratch: string | undefined;
afterEach(() => {
  term?.close();
  term = undefined;
  repo?.cleanup();
  repo = undefined;
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

const WINDOW = /^factory · doctor · lines (\d+)–(\d+) of (\d+)$/;

/** The doctor's window as its title states it, and the checklist lines under the title. */
function windowOf(screen: string): { first: number; last: number; total: number; body: string[] } {
  const lines = screen.split('\n').map((line) => line.trimEnd());
  const m = WINDOW.exec(lines[0] ?? '');
  if (!m) throw new Error(`no window in the title:\n${screen}`);
  const end = lines.findIndex((line) => /^\d+ ok, \d+ warnings?, \d+ failed, \d+ skipped/.test(line));
  return { first: Number(m[1]), last: Number(m[2]), total: Number(m[3]), body: lines.slice(2, end - 1) };
}

// tmux is part of this project's test machine; without it there is no real terminal to drive.
describe.skipIf(!hasTmux())('80×24 in a real terminal', () => {
  it('the doctor fits the terminal, opens on its first failing or warning row and scrolls', async () => {
    // A repo never initialised: node.rules fails (no damage-control rules), with its fix; the node itself comes at
    // spawn time, so node.settings is fine without a file. More lines than 24 rows hold.
    repo = makeTempRepo({ files: { 'README.md': '# r\n' } });
    term = startTmux([process.execPath, FACTORY_BIN, 'doctor', '--quick'], {
      cwd: repo.dir,
      env: await cliChildEnv(),
      cols: 80,
      rows: 24,
    });
    const opened = await term.waitForScreen(
      (s) => /\d+ ok, \d+ warnings?, \d+ failed/.test(s) && WINDOW.test(s.split('\n')[0]!.trimEnd()),
    );
    const first = windowOf(opened);
    const page = first.last - first.first + 1;
    expect(first.total).toBeGreaterThan(page);
    expect(first.body).toHaveLength(page);
    // The first line shown is the first problem (or its category heading, the problem under it).
    expect(
      first.body.slice(0, 2).some((line) => /^ {2}[!✗] /.test(line)),
      opened,
    ).toBe(true);
    expect(opened).toMatch(/g top · G end/);

    term.sendKeys('g');
    const topScreen = await term.waitForScreen((s) => s.startsWith('factory · doctor · lines 1–'));
    const top = windowOf(topScreen);
    expect(top.body[0]).toBe('tools');
    // A long fix wraps under its row, whole (tools.node's on an old Node): the failure may be a page further.
    if (!topScreen.includes('✗ node.rules')) {
      term.sendKeys('NPage');
      await term.waitForScreen((s) => s.includes('✗ node.rules'));
    }
    term.sendKeys('G');
    const bottom = windowOf(
      await term.waitForScreen((s) => new RegExp(`lines \\d+–${first.total} of ${first.total}`).test(s)),
    );
    expect(bottom.body.at(-1)).toMatch(/– tests\.battery\s+skipped by --quick/);
    term.sendKeys('k');
    await term.waitForScreen((s) => s.includes(`lines ${bottom.first - 1}–${bottom.last - 1} of`));
    term.sendKeys('j');
    await term.waitForScreen((s) => s.includes(`lines ${bottom.first}–${bottom.last} of`));
    term.sendKeys('PPage');
    const paged = Math.max(1, bottom.first - (page - 1));
    await term.waitForScreen((s) => s.includes(`lines ${paged}–${paged + page - 1} of`));
    term.sendKeys('NPage');
    await term.waitForScreen((s) => s.includes(`lines ${bottom.first}–${bottom.last} of`));
    term.sendKeys('Up');
    await term.waitForScreen((s) => s.includes(`lines ${bottom.first - 1}–${bottom.last - 1} of`));
    expect(
      term
        .capture()
        .split('\n')
        .filter((line) => line.trim() !== '').length,
    ).toBeLessThan(24);

    term.sendKeys('q');
    expect(await term.waitForExit()).toBe(1); // node.rules is required and failed
  });

  it('s on the demo board compares two arms line by line: what both wrote `=`, what differs `≠`, an extra line alone', async () => {
    scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-compare-term-')));
    term = startTmux([process.execPath, FACTORY_BIN, 'demo', '--dir', path.join(scratch, 'greet')], {
      cwd: scratch,
      env: await cliChildEnv(),
      cols: 80,
      rows: 24,
    });
    await term.waitForScreen((s) => s.includes('★ winner') && s.includes('run green'));
    // The winner (arm 2: three lines) beside arm 3 (five: a doc comment and a local more).
    term.sendKeys('s');
    const compare = await term.waitForScreen((s) => s.includes('── arm 2 ⟷ arm 3') && s.includes('farewell(name) {'));
    expect(compare).toMatch(/^@@ -0,0 \+1,3 @@\s+≠ @@ -0,0 \+1,5 @@$/m);
    expect(compare).toMatch(/^\s+│ \+\/\*\* Says goodbye\. \*\/$/m);
    expect(compare).toMatch(/^\+export function farewell\(name\) \{\s+= \+export function farewell\(name\) \{$/m);
    expect(compare).toMatch(/^\s+│ \+ {2}const who = String\(name\);$/m);
    expect(compare).toMatch(/^\+ {2}return `Goodbye, \$\{name\}!`;\s+≠ \+ {2}return `Goodbye, \$\{who\}!`;$/m);
    expect(compare).toMatch(/^\+\}\s+= \+\}$/m);
    // Beside arm 1 (the same three lines but one): only that one is marked.
    term.sendKeys('Tab');
    const other = await term.waitForScreen((s) => s.includes('── arm 2 ⟷ arm 1') && s.includes('farewell(name) {'));
    expect(other.split('\n').filter((line) => line.includes(' ≠ '))).toHaveLength(1);
    expect(other).toMatch(/^\+ {2}return `Goodbye, \$\{name\}!`;\s+≠ \+ {2}return `Bye, \$\{name\}\.`;$/m);
    term.sendKeys('Escape');
    await term.waitForScreen((s) => s.includes('★ winner') && !s.includes('⟷'));
    term.sendKeys('q');
    expect(await term.waitForExit()).toBe(0);
  });
});
