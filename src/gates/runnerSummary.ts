// How a red command's output (already plain text) becomes the telling part of its motif: the runner's own summary
// — which test failed and why (pytest's `FAILED x.py::test_y - assert …`, go's `--- FAIL:`, cargo's panic) and its
// closing counts (`1 failed, 3 passed`, `test result: FAILED. …`) — else the failure lines seen in the output,
// else its tail. Pure functions on text, kept apart from the gates that spawn the commands.
import { displayWidth, fit, fitStart } from '../contract/text.js';

/**
 * Lines that say what failed in the usual test runners' words: TAP's `not ok`, node:test's `✖`, vitest's `×`
 * and `FAIL`, jest's `✕` and `● suite › test` (not its `● Console` blocks), mocha's numbered `1) test`, `✗`,
 * errors and assertion lines, pytest's `E   ` and `FAILED x::y`, unittest's `FAIL: test`, go's `--- FAIL:`, cargo's
 * `thread '…' panicked at`.
 */
const FAILURE_LINE =
  /^(not ok\b|✖|×|✕|✗|●(?! Console\b)|\d+\) \S|FAIL\b|FAILED\b|ERROR\b|Error\b|\w*Error:|AssertionError|assert|expected|actual|E\s{2,}|--- FAIL:|thread '[^']*'(?: \(\d+\))? panicked at\b)/i;

/** Lines that frame rather than say: TAP's YAML fences and plans, rules drawn between sections, go's lone `FAIL`. */
const DECORATION = /^(---|\.\.\.|FAIL)$|^[─━═⎯]{3,}|^[=-]{10,}$|^\d+\.\.\d+$/;

/**
 * A runner's closing counts, as the runner prints them (the captured part is what the motif keeps): pytest's
 * `=== 1 failed, 3 passed in 0.26s ===`, unittest's `Ran 2 tests in …` and `FAILED (failures=1)`, jest's and
 * vitest's `Tests: …`, mocha's `1 passing`/`1 failing`, node:test's `# fail 1` (TAP) and `ℹ fail 1` (spec), uvu's
 * `Total:`/`Passed:`, go's `FAIL <package> 0.01s`, cargo's `test result: FAILED. …`.
 */
const COUNT_LINES: readonly RegExp[] = [
  /^=+ (\d+ (?:failed|passed|errors?|error)\b.* in [\d.]+s(?: \([^)]*\))?) =+$/,
  /^(Ran \d+ tests? in \S+)$/,
  /^(FAILED \((?:failures|errors)=\d+[^)]*\))$/,
  /^(Tests:\s+.*\d+ (?:failed|passed).*)$/,
  /^(Tests\s+\d+ (?:failed|passed).*)$/,
  /^(\d+ (?:passing|failing)\b.*)$/,
  /^(# (?:pass|fail) \d+)$/,
  /^(ℹ (?:pass|fail) \d+)$/,
  /^((?:Total|Passed):\s+\d+)$/,
  /^(FAIL\s+\S+\s+[\d.]+s)$/,
  /^(test result: FAILED\..*)$/,
];

/** The runner's counts in a line, as kept (pytest's `=` fences dropped), or undefined. */
function countsIn(line: string): string | undefined {
  for (const pattern of COUNT_LINES) {
    const match = pattern.exec(line);
    if (match) return match[1]!.replace(/\s+/g, ' ');
  }
  return undefined;
}

/** A line of a printed diff: `++x`/`--x` (uvu), `+ x`/`- x` (jest, node:assert). */
const DIFF_LINE = /^(\+\+|--)(?![+-])\S|^[+-]\s\S/; // not TAP's `---` nor a `+++` header

const isFailure = (line: string): boolean =>
  FAILURE_LINE.test(line) && !DECORATION.test(line) && countsIn(line) === undefined;

/** The lines of a plain-text output that say what failed (empty when it names no failure). */
export function failureLinesOf(plain: string): string[] {
  return plain
    .split('\n')
    .map((l) => l.trim())
    .filter(isFailure);
}

/**
 * pytest's short test summary (`FAILED x.py::test_y - assert 4 == 5`, `ERROR …`): each line names the test and
 * why, so the motif needs nothing of the failure blocks above it, which the output's tail may have cut mid-way.
 */
function pytestSummary(lines: readonly string[]): string[] {
  const header = lines.findLastIndex((l) => /^=+ short test summary info =+$/.test(l));
  if (header < 0) return [];
  return lines.slice(header + 1).filter((l) => /^(FAILED|ERROR) \S/.test(l));
}

/** The failure lines, each with the next non-blank line where runners put the reason (a diff whole). */
function failuresWithReasons(lines: readonly string[]): string[] {
  const picked: string[] = [];
  lines.forEach((line, i) => {
    if (!isFailure(line)) return;
    if (!picked.includes(line)) picked.push(line);
    const rest = lines.slice(i + 1).filter((l) => l !== '');
    const next = rest[0];
    if (!next || isFailure(next) || DECORATION.test(next) || countsIn(next) !== undefined || picked.includes(next))
      return;
    picked.push(next);
    // A diff (uvu's `++expected` / `--actual`, jest's `- Expected` / `+ Received`) reads only whole: its other side
    // comes along, a few lines at most.
    if (!DIFF_LINE.test(next)) return;
    for (const more of rest.slice(1, 4)) {
      if (!DIFF_LINE.test(more) || picked.includes(more)) break;
      picked.push(more);
    }
  });
  return picked.filter((l) => l !== '' && !/^at\s.+/.test(l));
}

/**
 * The telling part of a red command's plain-text output in at most `max` columns: what failed first (the start is
 * kept when room is short), the runner's counts last and always whole when they fit in half the room; the tail of
 * the output when it names no failure.
 */
export function summaryOf(plain: string, max: number): string {
  const lines = plain.split('\n').map((l) => l.trim());
  const counts = [...new Set(lines.map(countsIn).filter((c): c is string => c !== undefined))];
  const pytest = pytestSummary(lines);
  const named = pytest.length > 0 ? pytest : failuresWithReasons(lines);
  if (named.length === 0) return tailOf(plain, max);
  // A room too short for both keeps what failed: the counts come only where they leave it half the line.
  const countsText = counts.length > 0 && max >= 80 ? fit(counts.join(' | '), Math.floor(max / 2)) : '';
  if (!countsText) return fit(named.join(' | '), max);
  return `${fit(named.join(' | '), Math.max(1, max - displayWidth(countsText) - 3))} | ${countsText}`;
}

/**
 * The end of a plain-text output, flattened to one line of at most `max` columns. Stack frames are left out: they
 * say where, not what, and the budget is small; the full tail stays in the report.
 */
export function tailOf(plain: string, max: number): string {
  const lines = plain
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^at\s.+/.test(l));
  const whole = lines.join(' | ');
  if (displayWidth(whole) <= max) return whole;
  const mark = '… | ';
  let kept: string[] = [];
  let used = displayWidth(mark);
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const cost = displayWidth(lines[i]!) + (kept.length > 0 ? 3 : 0);
    if (used + cost > max) break;
    kept = [lines[i]!, ...kept];
    used += cost;
  }
  // Even the last line alone is too long: keep its end.
  if (kept.length === 0) return fitStart(`…${lines.at(-1)!}`, max);
  return `${mark}${kept.join(' | ')}`;
}
