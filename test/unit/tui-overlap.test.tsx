// The overlap and side-by-side views, rendered through Ink: grouping, windowing, widths that hold, and a hostile
// patch whose control characters never reach the terminal.
import React from 'react';
import { describe, expect, it } from 'vitest';
import { OverlapView, overlapLines, overlapTitle } from '../../components/OverlapView.js';
import { SideBySide, sideBySideLines, sideColumnWidth } from '../../components/SideBySide.js';
import { armOverlap, sideBySide } from '../../src/bon/harvest/overlap.js';
import { BonScreen } from '../../components/BonScreen.js';
import type { BonController } from '../../state/controller.js';
import { createBonStore } from '../../state/bon/store.js';
import { eventsThrough } from '../helpers/bonEvents.js';
import { screenTests, waitFor, type InkHarness } from '../helpers/ink.js';
import { displayWidth } from '../../src/contract/text.js';

const screens = screenTests();

async function mount(tree: React.ReactElement, columns: number): Promise<InkHarness> {
  return screens.mount(tree, { columns });
}

// Patches in the shape `git diff` writes them, against one 60-line base (see bon-overlap.test.ts for real ones).
const fileHead = (file: string) => [
  `diff --git a/${file} b/${file}`,
  'index 3b18e51..a8c0f2d 100644',
  `--- a/${file}`,
  `+++ b/${file}`,
];
const context = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ` export const v${from + i} = ${from + i};`);
const fixSum = (shift: number) => [
  `@@ -37,7 +${37 + shift},7 @@ export const v36 = 36;`,
  ...context(37, 3),
  '-export const sum = (a, b) => a - b;',
  '+export const sum = (a, b) => a + b;',
  ...context(41, 3),
];
const fifty = [
  '@@ -47,7 +47,7 @@',
  ...context(47, 3),
  '-export const v50 = 50;',
  '+export const fifty = 50;',
  ...context(51, 3),
];
const header = ['@@ -1,3 +1,6 @@', '+// calc: tiny numbers', '+// (kept small)', "+'use strict';", ...context(1, 3)];
const ten = [
  '@@ -7,7 +7,7 @@',
  ...context(7, 3),
  '-export const v10 = 10;',
  '+export const ten = 10; // 十を意味する長いコメント',
  ...context(11, 3),
];
const patch = (...hunks: string[][]) => [...fileHead('src/calc.js'), ...hunks.flat(), ''].join('\n');

const ARM1 = patch(header, fixSum(3), fifty);
const ARM2 = patch(ten, fixSum(0));
const ARM3 = patch(fixSum(0), fifty);
const THREE = armOverlap([
  { arm: 1, patch: ARM1 },
  { arm: 2, patch: ARM2 },
  { arm: 3, patch: ARM3 },
]);

/** Control characters a terminal would act on: C0 (but \n between lines), DEL, C1. */
const CONTROL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/;
/** The frame without Ink's own colour codes (SGR only: a hostile `ESC[2J` must not be stripped away unseen). */
const withoutSgr = (frame: string) => frame.replace(/\u001B\[[0-9;]*m/g, '');

const HOSTILE = [
  'diff --git "a/evil\\033[2Jname\\a" "b/evil\\033[2Jname\\a"',
  'index 3b18e51..a8c0f2d 100644',
  '--- "a/evil\\033[2Jname\\a"',
  '+++ "b/evil\\033[2J\\nname\\a"',
  '@@ -1,2 +1,2 @@ \u001B]0;pwned\u0007',
  ' keep\u0008\u0008\u0008',
  '-old \u001B[31mred\u001B[0m',
  '+new \u009B2J\rcarriage\u0000nul\u007Fdel\ttab',
  '',
].join('\n');

describe('overlapLines', () => {
  it('summarises each arm, then groups: shared by all, arms 1+3, only arm N', () => {
    const texts = overlapLines(THREE, [1, 2, 3]).map((l) => l.text);
    expect(texts.slice(0, 3)).toEqual([
      'arm 1 · 3 hunks · 1 shared · 1 unique · +5 −2 · src/calc.js',
      'arm 2 · 2 hunks · 1 shared · 1 unique · +2 −2 · src/calc.js',
      'arm 3 · 2 hunks · 1 shared · 0 unique · +2 −2 · src/calc.js',
    ]);
    const groups = texts.filter((t) => t.startsWith('── '));
    expect(groups).toEqual(['── shared by all (1)', '── arms 1+3 (1)', '── only arm 1 (1)', '── only arm 2 (1)']);
    expect(texts).toContain('src/calc.js  @@ -37,7 +40,7 @@ export const v36 = 36;');
    expect(overlapTitle(THREE, [1, 2, 3])).toBe('── overlap of arms 1, 2, 3 · 1 shared · 1 in some · 2 unique');
  });

  it('colours body lines like the diff view and names an empty arm', () => {
    const overlap = armOverlap([
      { arm: 1, patch: ARM2 },
      { arm: 2, patch: '' },
    ]);
    const lines = overlapLines(overlap, [1, 2]);
    expect(lines[1]).toEqual({ text: 'arm 2 · empty patch', style: { dim: true } });
    expect(lines.find((l) => l.text.startsWith('+export const sum'))!.style).toEqual({ color: 'green' });
    expect(lines.find((l) => l.text.startsWith('-export const sum'))!.style).toEqual({ color: 'red' });
    expect(overlapLines(armOverlap([{ arm: 1, patch: '' }]), [1]).at(-1)!.text).toBe('(no arm changed anything)');
  });
});

describe('OverlapView', () => {
  it('windows the lines by offset and height, under a fixed title', async () => {
    const all = overlapLines(THREE, [1, 2, 3]);
    const ui = await mount(<OverlapView overlap={THREE} arms={[1, 2, 3]} height={4} columns={100} offset={5} />, 100);
    const lines = ui.lines();
    expect(lines[0]).toBe(overlapTitle(THREE, [1, 2, 3]));
    expect(lines.slice(1)).toEqual(all.slice(5, 9).map((l) => l.text.trimEnd()));
  });

  it('clamps an offset past the end to the last full window', async () => {
    const all = overlapLines(THREE, [1, 2, 3]);
    const ui = await mount(<OverlapView overlap={THREE} arms={[1, 2, 3]} height={3} columns={100} offset={999} />, 100);
    expect(ui.lines().slice(1)).toEqual(all.slice(-3).map((l) => l.text.trimEnd()));
  });

  it.each([60, 120])('holds %i columns', async (columns) => {
    const ui = await mount(
      <OverlapView overlap={THREE} arms={[1, 2, 3]} height={200} columns={columns} offset={0} />,
      columns,
    );
    const lines = ui.lines();
    expect(lines.length).toBe(1 + overlapLines(THREE, [1, 2, 3]).length);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(columns);
  });

  it('never lets a hostile patch’s control characters reach the terminal', async () => {
    const overlap = armOverlap([
      { arm: 1, patch: HOSTILE },
      { arm: 2, patch: ARM3 },
    ]);
    const ui = await mount(<OverlapView overlap={overlap} arms={[1, 2]} height={50} columns={120} offset={0} />, 120);
    const frame = withoutSgr(ui.rawFrame());
    expect(frame).not.toMatch(CONTROL);
    expect(frame).toContain('evil�[2J�name�'); // the file name, decoded from its quotes, made visible
    expect(frame).toContain('+new �2J�carriage�nul�del    tab');
    expect(frame).toContain('�]0;pwned�');
  });
});

/** Where in `line` its first `columns` display columns end (a wide character takes two). */
function at(line: string, columns: number): number {
  let used = 0;
  let index = 0;
  for (const ch of line) {
    if (used >= columns) break;
    used += displayWidth(ch);
    index += ch.length;
  }
  return index;
}

describe('SideBySide', () => {
  const rows = sideBySide(ARM1, ARM2);

  it.each([60, 120])('keeps both columns aligned in %i columns', async (columns) => {
    const width = sideColumnWidth(columns);
    expect(width).toBe(Math.floor((columns - 3) / 2));
    const ui = await mount(
      <SideBySide left={{ arm: 1 }} right={{ arm: 2 }} rows={rows} height={100} columns={columns} offset={0} />,
      columns,
    );
    const body = ui.lastFrame().split('\n').slice(1);
    expect(body).toHaveLength(rows.length);
    for (const line of body) {
      expect(displayWidth(line)).toBeLessThanOrEqual(2 * width + 3); // Ink drops trailing spaces
      // The gutter sits at the same column on every line: the left cell is cut and padded to its width.
      expect(line.slice(at(line, width), at(line, width) + 3), line).toMatch(/^ [│=≠] $/);
    }
    // The wide-character comment is cut with an ellipsis at 60 columns, never wrapped onto a second line.
    if (columns === 60) expect(body.some((l) => l.includes('…'))).toBe(true);
  });

  it('marks same and differing hunks in the gutter and leaves a missing side blank', () => {
    const lines = sideBySideLines(rows, 100);
    expect(lines.find((l) => l.left.text.startsWith('+export const sum'))!.gutter).toBe(' = ');
    const fiftyLine = lines.find((l) => l.left.text.startsWith('+export const fifty'))!;
    expect(fiftyLine.right.text.trim()).toBe('');
    expect(fiftyLine.left.style).toEqual({ color: 'green' });
    // Another arm's change to line 50: the same base lines, changed otherwise.
    const otherFifty = fifty.map((l) => (l === '+export const fifty = 50;' ? "+export const v50 = 'fifty';" : l));
    const differ = sideBySideLines(sideBySide(ARM1, patch(otherFifty)), 100);
    const facing = differ.find((l) => l.left.text.startsWith('+export const fifty'))!;
    expect(facing.gutter).toBe(' ≠ ');
    expect(facing.right.text.trimEnd()).toBe("+export const v50 = 'fifty';");
  });

  it('windows by offset and says which lines it shows', async () => {
    const ui = await mount(
      <SideBySide left={{ arm: 1 }} right={{ arm: 3 }} rows={rows} height={5} columns={100} offset={4} />,
      100,
    );
    const lines = ui.lines();
    expect(lines[0]).toBe(`── arm 1 ⟷ arm 3 · lines 5–9 of ${rows.length}`);
    const expected = sideBySideLines(rows, 100)
      .slice(4, 9)
      .map((l) => `${l.left.text}${l.gutter}${l.right.text}`.trimEnd());
    expect(lines.slice(1)).toEqual(expected);
  });

  it('never lets a hostile patch’s control characters reach the terminal', async () => {
    const hostileRows = sideBySide(HOSTILE, ARM2);
    const ui = await mount(
      <SideBySide left={{ arm: 1 }} right={{ arm: 2 }} rows={hostileRows} height={50} columns={120} offset={0} />,
      120,
    );
    const frame = withoutSgr(ui.rawFrame());
    expect(frame).not.toMatch(CONTROL);
    expect(frame).toContain('evil�[2J�name�');
    expect(frame).toContain('-old �[31mred�[0m');
  });

  it('says so when neither arm changed anything', async () => {
    const ui = await mount(
      <SideBySide left={{ arm: 1 }} right={{ arm: 2 }} rows={sideBySide('', '')} height={5} columns={60} offset={0} />,
      60,
    );
    expect(ui.lines()).toEqual(['── arm 1 ⟷ arm 2 · lines 0–0 of 0', '(neither arm changed anything)']);
  });
});

describe('s on the arms board: two arms whose hunks differ in length', () => {
  // Arm 1 comments its fix (one line more), arm 2 fixes the sum another way: the same base lines.
  const ARM_1 = patch([
    `@@ -37,7 +37,8 @@ export const v36 = 36;`,
    ...context(37, 3),
    '-export const sum = (a, b) => a - b;',
    '+// sum them',
    '+export const sum = (a, b) => a + b;',
    ...context(41, 3),
  ]);
  const ARM_2 = patch([
    `@@ -37,7 +37,7 @@ export const v36 = 36;`,
    ...context(37, 3),
    '-export const sum = (a, b) => a - b;',
    '+export const sum = (a, b) => b + a;',
    ...context(41, 3),
  ]);

  it('through the real store and Ink: identical lines `=`, the changed one `≠`, the extra line alone, the rest in step', async () => {
    const store = createBonStore();
    const events = eventsThrough('harvested');
    const shift = Date.now() - Math.max(...events.map((e) => e.ts));
    for (const event of events) store.getState().apply({ ...event, ts: event.ts + shift });
    const patches: Record<number, string> = { 1: ARM_1, 2: ARM_2, 3: '' };
    const controller: BonController = {
      abort: () => {},
      quit: () => {},
      abortArm: () => {},
      cloneArm: () => {},
      apply: () => {},
      raiseArm: () => {},
      confirmFanOut: () => {},
      steerArm: () => {},
      readPatch: (arm) => Promise.resolve(patches[arm] ?? ''),
    };
    const ui = await mount(<BonScreen store={store} controller={controller} />, 100);
    await ui.waitForFrame('proposal:');
    await ui.press('s');
    await ui.waitForFrame(/arm 1 ⟷ arm 2/);
    await waitFor(() => ui.lastFrame().includes('+// sum them'), { describe: () => ui.lastFrame() });
    const width = sideColumnWidth(100);
    const gutterOf = (start: string) => {
      const line = ui.lines().find((l) => l.startsWith(start));
      if (line === undefined) throw new Error(`no line starts with ${start}:\n${ui.lastFrame()}`);
      // lines() drops trailing spaces: a blank right column leaves the gutter's last space off.
      return {
        gutter: line.slice(at(line, width), at(line, width) + 3).trim(),
        right: line.slice(at(line, width) + 3).trim(),
      };
    };
    for (const same of [
      ' export const v37',
      ' export const v39',
      '-export const sum',
      ' export const v41',
      ' export const v43',
    ]) {
      expect(gutterOf(same).gutter, same).toBe('=');
    }
    // The headers differ in the new side's length: that is marked too.
    expect(gutterOf('@@ -37,7 +37,8 @@')).toEqual({ gutter: '≠', right: '@@ -37,7 +37,7 @@ export const v36 = 36;' });
    expect(gutterOf('+// sum them')).toEqual({ gutter: '│', right: '' });
    expect(gutterOf('+export const sum = (a, b) => a + b;')).toEqual({
      gutter: '≠',
      right: '+export const sum = (a, b) => b + a;',
    });
    // In step after the extra line: every context line faces itself.
    expect(gutterOf(' export const v42').right).toBe('export const v42 = 42;');
    expect(ui.lines().filter((l) => l.includes(' ≠ '))).toHaveLength(2);
  });
});
