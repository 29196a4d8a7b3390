// `factory demo` (an offline best-of-3: the real pi under test in RPC mode, the scripted model) in a real terminal
// (tmux): the arms board live, then ranked; enter shows the winner's coloured diff, esc goes back, p then y
// applies the winner through the verified path, q exits 0. Needs `npm run build` (the built CLI runs).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FACTORY_BIN } from '../helpers/cli.js';
import { cliChildEnv } from '../helpers/rig.js';
import { hasTmux, startTmux, type TmuxSession } from '../helpers/tmux.js';

let term: TmuxSession | undefined;
let scratch: string | undefined;
afterEach(() => {
  term?.close();
  term = undefined;
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/**
 * Each line of a `capture-pane -e` screen with the foreground colour (SGR 30–37 / 90–97, undefined = default)
 * in force at its first character. tmux carries a colour over line ends without repeating it, so the state is
 * followed through the whole screen.
 */
function linesWithColour(screen: string): { text: string; fg?: number }[] {
  let fg: number | undefined;
  return screen.split('\n').map((raw) => {
    let text = '';
    let first: number | undefined;
    let seen = false;
    for (const part of raw.split(/(\u001b\[[\d;]*m)/)) {
      const sgr = /^\u001b\[([\d;]*)m$/.exec(part);
      if (sgr) {
        for (const code of (sgr[1] || '0').split(';').map(Number)) {
          if (code === 0 || code === 39) fg = undefined;
          else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) fg = code;
        }
        continue;
      }
      if (part.length > 0 && !seen) {
        seen = true;
        first = fg;
      }
      text += part;
    }
    return { text, fg: seen ? first : fg };
  });
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });

// tmux is part of this project's test machine; without it there is no real terminal to drive.
describe.skipIf(!hasTmux())('factory demo in a real terminal', () => {
  it('shows the arms live, ranks them, diffs the winner in colour, applies it on p y, and q exits 0', async () => {
    scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-bon-term-')));
    const repo = path.join(scratch, 'greet');
    const env = await cliChildEnv();
    term = startTmux([process.execPath, FACTORY_BIN, 'demo', '--dir', repo], {
      cwd: scratch,
      env,
      cols: 120,
      rows: 42,
    });

    // Live: the three arms side by side, all three running at once (each in its own worktree), nothing ranked.
    const live = await term.waitForScreen((s) => /running\s+││ \S+ running\s+││ \S+ running/.test(s), 120_000);
    expect(live).toMatch(/│ ▸ arm_1\s+││ arm_2\s+││ arm_3\s+│/);
    expect(live).toMatch(/scripted\/alpha\s+││ scripted\/beta\s+││ scripted\/gamma/);
    expect(live).not.toContain('★');

    // Ranked: arm_2 (beta, the cheapest green) first and the winner, arm_3 second, arm_1 red last.
    const ranked = await term.waitForScreen((s) => s.includes('★ winner') && s.includes('run green'), 120_000);
    expect(ranked).toMatch(/│ #3 arm_1\s+││ ▸ #1 arm_2 ★ winner\s+││ #2 arm_3\s+│/);
    expect(ranked).toMatch(/✗ red\s+││ ✓ green\s+││ ✓ green/);
    expect(ranked).toMatch(/why #1: arm_2 \(scripted\/beta\) is green and cheapest/);
    expect(ranked).toMatch(/primer: .* paid once/);

    // enter: the selected (winning) arm's patch, coloured like git diff.
    term.sendKeys('Enter');
    const diff = await term.waitForScreen((s) => s.includes('arm_2 patch') && s.includes('Goodbye'));
    expect(diff).toContain('+++ b/src/farewell.js');
    expect(diff).toContain('+  return `Goodbye, ${name}!`;');
    expect(diff).not.toContain('★ winner');
    const coloured = term.captureWithEscapes();
    // Added lines green (SGR 32), the hunk header cyan (SGR 36), file headers in the default colour.
    const lines = linesWithColour(coloured);
    const colourOf = (start: string) => lines.find((line) => line.text.startsWith(start))?.fg;
    expect(colourOf('+  return `Goodbye')).toBe(32);
    expect(colourOf('+export function farewell')).toBe(32);
    expect(colourOf('@@ -0,0 +1,3 @@')).toBe(36);
    expect(colourOf('+++ b/src/farewell.js')).toBeUndefined();

    // esc: back to the board.
    term.sendKeys('Escape');
    const board = await term.waitForScreen((s) => s.includes('★ winner') && !s.includes('arm_2 patch'));
    // The forecast made before the arms, the baseline on HEAD (the spec's test is red there), each patch's size.
    expect(board).toMatch(/forecast: 3 arm\(s\) ~\$[\d.]+ \(\$[\d.]+–\$[\d.]+\) after the primer's \$[\d.]+/);
    expect(board).toContain('baseline on HEAD: ✗ node --test');
    expect(board).toMatch(/patch 211 B · \+3 −0 · 1 file/);

    // o: what the arms share and what is each one's own (three different farewell.js: all their own).
    term.sendKeys('o');
    const overlap = await term.waitForScreen((s) => s.includes('── overlap of arms 1, 2, 3'));
    expect(overlap).toMatch(/── only arm 2 \(1\)/);
    term.sendKeys('Escape');
    await term.waitForScreen((s) => s.includes('★ winner') && !s.includes('── overlap'));
    // s: the selected arm (the winner) beside the next one; tab, beside the one after.
    term.sendKeys('s');
    await term.waitForScreen((s) => s.includes('── arm 2 ⟷ arm 3'));
    term.sendKeys('Tab');
    await term.waitForScreen((s) => s.includes('── arm 2 ⟷ arm 1'));
    term.sendKeys('Escape');
    await term.waitForScreen((s) => s.includes('★ winner') && !s.includes('⟷'));

    // p asks, y applies: verified (paths, git apply --check, gates on HEAD in a scratch worktree), then --index.
    expect(git(repo, 'diff', '--cached', '--stat')).toBe('');
    term.sendKeys('p');
    await term.waitForScreen((s) => /apply arm_2's patch\? y applies/.test(s));
    term.sendKeys('y');
    await term.waitForScreen((s) => /applied arm 2 .*git apply --index/.test(s), 120_000);
    const staged = git(repo, 'diff', '--cached', '--stat');
    expect(staged).toMatch(/src\/farewell\.js \| 3 \+\+\+/);
    expect(staged).toMatch(/1 file changed, 3 insertions/);

    term.sendKeys('q');
    expect(await term.waitForExit()).toBe(0);
  });
});
