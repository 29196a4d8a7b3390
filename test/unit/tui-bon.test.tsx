import React from 'react';
import { describe, expect, it } from 'vitest';
import { BonScreen } from '../../components/BonScreen.js';
import { STATUS_CONFIRM_QUIT, type BonController } from '../../state/controller.js';
import { createBonStore, type BonStore } from '../../state/bon/store.js';
import type { RunEvent } from '../../src/contract/events.js';
import { ev, eventsThrough, RED_MOTIF, samplePatch, T0, type Stage } from '../helpers/bonEvents.js';
import { KEYS, screenTests, waitFor, type InkHarness } from '../helpers/ink.js';
import { boardFit, boardLayout, lineWindow } from '../../components/ArmsBoard.js';
import { fitHelp } from '../../components/KeyHelp.js';
import { displayWidth } from '../../src/contract/text.js';
import { recordingBonController, type RecordingBonController } from '../helpers/bonController.js';
import { createLogFormatter } from '../../src/headless/log.js';

const SPIN = '[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]';

/**
 * The fixture's events with their times moved so that the last one happened just now: the screen's live
 * clock (Date.now()) then reads sensible durations for the arm in flight.
 */
function live(events: readonly RunEvent[]): RunEvent[] {
  const shift = Date.now() - Math.max(...events.map((event) => event.ts));
  return events.map((event) => ({ ...event, ts: event.ts + shift }));
}

function storeAt(stage: Stage): BonStore {
  const store = createBonStore();
  for (const event of live(eventsThrough(stage))) store.getState().apply(event);
  return store;
}

/** Feed the fixture's events after `from` up to `to` into a mounted store. */
function advance(store: BonStore, from: Stage, to: Stage): void {
  const seen = eventsThrough(from).length;
  for (const event of live(eventsThrough(to)).slice(seen)) store.getState().apply(event);
}

function recorder(patch = samplePatch(40)): RecordingBonController {
  return recordingBonController(() => Promise.resolve(patch));
}

const screens = screenTests();

async function mount(store: BonStore, controller: BonController = recorder(), size = { columns: 100 }) {
  return screens.mount(<BonScreen store={store} controller={controller} />, size);
}

function lineOf(ui: InkHarness, pattern: RegExp): string {
  const line = ui.lines().find((l) => pattern.test(l));
  if (line === undefined) throw new Error(`no line matches ${pattern} in:\n${ui.lastFrame()}`);
  return line;
}

/** The cells of one board row: the text between the column borders, trimmed. */
function cells(line: string): string[] {
  return line
    .split('│')
    .map((cell) => cell.trim())
    .filter((cell) => cell !== '');
}

describe('BonScreen: the arms board of a best-of-3', () => {
  it('draws the arms side by side, live, with the primer apart and the arms branching in the graph', async () => {
    const store = storeAt('arm3running');
    const ui = await mount(store);
    await ui.waitForFrame('▸ arm_3');

    // One row of three columns: titles, models, states, figures, patches, chips, verdicts, last tool calls.
    expect(cells(lineOf(ui, /arm_1 .*arm_2 .*arm_3/))).toEqual(['arm_1', 'arm_2', '▸ arm_3']);
    expect(cells(lineOf(ui, /^│ scripted\/fast/))).toEqual(['scripted/fast', 'scripted/sloppy', 'scripted/pricey']);
    expect(lineOf(ui, /✓ green/)).toMatch(new RegExp(`✓ green .*✗ red .*${SPIN} running`));
    expect(cells(lineOf(ui, /turns/))).toEqual(['turns 2', 'turns 1', 'turns 2']);
    expect(cells(lineOf(ui, /tokens 1/))).toEqual(['tokens 1.1k', 'tokens 900', 'tokens 1.3k']);
    expect(cells(lineOf(ui, /cost \$0\.0021/))).toEqual(['cost $0.0021', 'cost $0.0018', 'cost $0.0027']);
    expect(cells(lineOf(ui, /patch/))).toEqual(['patch 1.5 KB · 1 file', 'patch 800 B · 2 files', 'patch —']);
    expect(cells(lineOf(ui, /changed_files/))).toEqual([
      '✓ changed_files ✓ npm test',
      '✓ changed_files ✗ npm test',
      'gates —',
    ]);
    const verdicts = cells(lineOf(ui, /verdict green/));
    expect(verdicts[0]).toBe('verdict green');
    expect(RED_MOTIF.startsWith(verdicts[1].replace(/^↳ /, '').replace(/…$/, ''))).toBe(true);
    expect(verdicts[2]).toBe('verdict —');
    expect(cells(lineOf(ui, /⚙ edit/))).toEqual(['⚙ edit src/sum.js', '⚙ write test/sum.test.js', '⚙ bash npm test']);
    // The primer's cost apart from the arms'.
    expect(ui.lastFrame()).toContain('primer: 2.1k tokens, $0.0050, paid once');
    // The graph: arms as parallel branches between prime and harvest.
    expect(lineOf(ui, /├─┬─/)).toMatch(/^├─┬─ ✓ arm_1 +scripted\/fast  4\.0s  1\.1k tok  \$0\.0021$/);
    expect(lineOf(ui, /│ └─/)).toMatch(
      new RegExp(`^│ └─ ${SPIN} arm_3 +scripted/pricey  attempt 1/2  \\d+\\.\\ds  1\\.3k tok  \\$0\\.0027$`),
    );
    expect(ui.lastFrame()).toContain('○ code  harvest');

    // Live: the running arm's clock ticks on its own, and its figures follow the usage events.
    const timeOf = () => cells(lineOf(ui, /time /))[2];
    const before = timeOf();
    await waitFor(() => timeOf() !== before, { describe: () => ui.lastFrame() });
    store.getState().apply({ ...ev('usage', 0, { phase: 'arm_3', tokens: 1500, cost: 0.003 }), ts: Date.now() });
    await ui.waitForFrame('tokens 1.5k');
    expect(cells(lineOf(ui, /turns/))[2]).toBe('turns 3');
  });

  it('after the harvest: ranked marks, the winner selected, why #1, the primer line and the proposal', async () => {
    const store = storeAt('arm3running');
    const ui = await mount(store);
    advance(store, 'arm3running', 'harvested');
    await ui.waitForFrame('why #1');
    expect(cells(lineOf(ui, /arm_1 .*arm_2 .*arm_3/))).toEqual(['▸ #1 arm_1 ★ winner', '#3 arm_2', '#2 arm_3']);
    expect(ui.lastFrame()).toContain(
      'why #1: arm_1 (scripted/fast) is green and cheapest: $0.0021 vs $0.0034 for arm_3 (-38%) (1 red)',
    );
    expect(ui.lastFrame()).toContain(
      'primer: 2.1k tokens, $0.0050, paid once — cold it would have been paid 3 times: ~4.2k more tokens',
    );
    expect(lineOf(ui, /^proposal:/)).toMatch(
      /^proposal: factory apply b0b0b0b0 · harvest: adws\/adw_data\/bon\/b0b0b0b0\/harvest\.json$/,
    );
    expect(ui.lastFrame()).toContain('run green (exit 0)');
    // The selected column is drawn cyan, the others gray.
    expect(ui.rawFrame()).toMatch(/\u001B\[36m╭/);
  });

  it('a green arm that tried what its guards refused says so where its verdict is, in full cards, compact cards and lines', async () => {
    for (const size of [
      { columns: 140, rows: 40 },
      { columns: 100, rows: 22 },
      { columns: 160, rows: 15 },
    ]) {
      const store = storeAt('arm3done');
      const harvest = eventsThrough('harvested').find((e) => e.type === 'harvest')!;
      const tried = { tried: ['bash git config core.hooksPath /x — blocked by damage-control'], triedCount: 3 };
      const ranking =
        harvest.type === 'harvest' ? harvest.ranking.map((r) => (r.arm === 3 ? { ...r, ...tried } : r)) : [];
      store.getState().apply({ ...harvest, ranking, ts: Date.now() } as RunEvent);
      const ui = await mount(store, recorder(), size as { columns: number });
      await ui.waitForFrame('why #1').catch(() => undefined);
      if (!/verdict green · tried: |arm_3 .*· tried: /.test(ui.lastFrame()))
        throw new Error(`${size.columns}×${size.rows}:\n${ui.lastFrame()}`);
      expect(ui.lastFrame(), `${size.columns}×${size.rows}`).toMatch(/tried: /);
      if (size.rows === 15) expect(ui.lastFrame()).not.toContain('╭'); // one line per arm
      expect(ui.lastFrame()).toContain('why #1: arm_1 (scripted/fast) is green and tried nothing its guards refused');
      ui.unmount();
    }
  });

  it('an arm that waits for a slot says so on its card, and the log says it too', async () => {
    const store = storeAt('arm1');
    store.getState().apply({
      ...ev('phase_waiting', 0, { phase: 'arm_3', limit: 2, why: 'on this machine (2 per core, at most 5)' }),
      ts: Date.now(),
    } as RunEvent);
    const ui = await mount(store, recorder(), { columns: 160 } as { columns: number });
    await ui.waitForFrame('waits for a slot');
    expect(ui.lastFrame()).toContain('○ waits for a slot: 2 at once'); // the card cuts the rest; the log says it whole
    const line = createLogFormatter()({
      type: 'phase_waiting',
      adwId: 'b0b0b0b0',
      ts: 0,
      phase: 'arm_3',
      limit: 2,
      why: 'on this machine (2 per core, at most 5)',
    });
    expect(line).toBe('[b0b0b0b0] arm_3: waits for a slot: 2 at once on this machine (2 per core, at most 5)');
  });

  it('←/→ move the selection, stopping at the last arm', async () => {
    const ui = await mount(storeAt('harvested'));
    await ui.waitForFrame('▸ #1 arm_1');
    await ui.press(KEYS.right);
    await ui.waitForFrame('▸ #3 arm_2');
    expect(ui.lastFrame()).not.toContain('▸ #1');
    await ui.press(KEYS.right);
    await ui.press(KEYS.right);
    await ui.waitForFrame('▸ #2 arm_3');
    await ui.press(KEYS.left);
    await ui.waitForFrame('▸ #3 arm_2');
  });

  it('at 80×24 the graph folds to one line, the key help keeps q and d, and the proposal keeps its command', async () => {
    const running = await mount(storeAt('arm3running'), recorder(), { columns: 80, rows: 24 } as { columns: number });
    await running.waitForFrame('[');
    const strip = running.lines().find((l) => l.includes('→'))!;
    expect(strip).toMatch(/check → .*prime → \[.*arm_1 .*arm_2 .*arm_3\] → .*harvest/);
    const help = running.lines().at(-1)!;
    expect(help).toMatch(/ q quit · d doctor$/);
    for (const line of running.lines()) expect(displayWidth(line)).toBeLessThanOrEqual(80);
    const done = await mount(storeAt('harvested'), recorder(), { columns: 80, rows: 24 } as { columns: number });
    await done.waitForFrame('proposal: factory apply b0b0b0b0');
    expect(done.lines().at(-1)).toMatch(/q\/ctrl-c quit · d doctor$/);
  });

  it('boardLayout keeps to the rows the screen has: narrower cards rather than a board taller than the terminal', () => {
    expect(boardLayout(4, 80)).toEqual({ perRow: 2, rows: 2, width: 40 });
    expect(boardLayout(4, 80, 1)).toEqual({ perRow: 4, rows: 1, width: 20 });
    expect(boardLayout(5, 80, 1)).toEqual({ perRow: 5, rows: 1, width: 16 });
    expect(boardLayout(3, 160, 1)).toEqual({ perRow: 3, rows: 1, width: 53 });
    expect(boardLayout(4, 80, 0)).toEqual({ perRow: 4, rows: 1, width: 20 }); // at least one row
  });

  it('the whole screen keeps within the terminal height: full cards, compact cards, then one line per arm', async () => {
    /** A store at `stage` with arms added live up to `arms` (clones planned before the harvest). */
    const withArms = (stage: Stage, arms: number) => {
      const store = storeAt(stage);
      for (let arm = 4; arm <= arms; arm += 1) {
        store.getState().apply({
          ...ev('phase_planned', 0, {
            phase: { name: `arm_${arm}`, kind: 'agent', attempts: 2, arm },
            before: 'harvest',
          }),
          ts: Date.now(),
        });
      }
      return store;
    };
    const seen = new Set<string>();
    for (const stage of ['arm3running', 'harvested'] as const) {
      for (const arms of [3, 4, 6]) {
        for (const [columns, rows] of [
          [80, 12],
          [80, 16],
          [80, 20],
          [80, 24],
          [120, 18],
          [120, 30],
          [60, 22],
        ]) {
          const ui = await mount(withArms(stage, arms), recorder(), { columns, rows } as { columns: number });
          await ui.waitForFrame('arm_3');
          // The first frames may predate the terminal size reaching the screen: judge the settled one.
          const frameLines = () => ui.lastFrame().replace(/\n+$/, '').split('\n');
          await waitFor(() => frameLines().length <= rows, { timeout: 2000 }).catch(() => undefined);
          const lines = frameLines();
          const where = `${stage}, ${arms} arms, ${columns}×${rows}:\n${ui.lastFrame()}`;
          expect(lines.length, where).toBeLessThanOrEqual(rows);
          expect(lines[0], where).toMatch(/^factory · adw_bon · b0b0b0b0/); // the title, once, on the first line
          expect(
            lines.filter((line) => line.startsWith('factory · adw_bon')),
            where,
          ).toHaveLength(1);
          seen.add(ui.lastFrame().includes('╭') ? (ui.lastFrame().includes('turns ') ? 'cards' : 'compact') : 'lines');
          screens.unmount();
        }
      }
    }
    expect([...seen].sort()).toEqual(['cards', 'compact', 'lines']);
  });

  it('boardFit picks the densest drawing that fits, and the line window keeps the selected arm in view', () => {
    expect(boardFit(4, 80, 13).density).toBe('cards');
    expect(boardFit(4, 80, 12)).toMatchObject({ density: 'compact', height: 8 });
    expect(boardFit(4, 80, 7)).toMatchObject({ density: 'lines', height: 4 });
    expect(boardFit(6, 80, 3)).toMatchObject({ density: 'lines', height: 3 });
    expect(boardFit(4, 80)).toMatchObject({ density: 'cards', height: 26 });
    expect(lineWindow(6, 5, 3)).toEqual({ from: 4, to: 6, hidden: 4 });
    expect(lineWindow(6, 0, 3)).toEqual({ from: 0, to: 2, hidden: 4 });
    expect(lineWindow(3, 2, 3)).toEqual({ from: 0, to: 3, hidden: 0 });
  });

  it('fitHelp: whole when it fits, each help cut to its first word, else the keys alone', () => {
    const items = [
      { keys: 'a', help: 'abort arm' },
      { keys: 'q', help: 'quit (asks first)' },
    ];
    expect(fitHelp(items, undefined)).toEqual(items);
    expect(fitHelp(items, 40)).toEqual(items);
    expect(fitHelp(items, 16)).toEqual([
      { keys: 'a', help: 'abort' },
      { keys: 'q', help: 'quit' },
    ]);
    expect(fitHelp(items, 6)).toEqual([
      { keys: 'a', help: '' },
      { keys: 'q', help: '' },
    ]);
  });

  it("enter shows the selected arm's whole verdict, then its patch coloured; ↑/↓, PgUp/PgDn, g/G scroll; esc goes back", async () => {
    const controller = recorder(samplePatch(40));
    const ui = await mount(storeAt('harvested'), controller, { columns: 100, rows: 27 } as { columns: number });
    await ui.press(KEYS.enter);
    // Four lines of verdict (the arm, its two gates, a blank) above the patch's 47.
    await ui.waitForFrame('arm_1 patch · lines 1–20 of 51');
    expect(controller.calls).toEqual(['readPatch 1']);
    expect(ui.lines().slice(3, 7), ui.lastFrame()).toEqual([
      '# arm_1 on scripted/fast · green · #1 · $0.0021 · 1.1k tokens',
      '# ✓ changed_files',
      '# ✓ npm test',
      '',
    ]);
    const raw = ui.rawFrame();
    expect(raw).toMatch(/\u001B\[1mdiff --git a\/src\/sum\.js b\/src\/sum\.js/);
    expect(raw).toMatch(/\u001B\[36m@@ -1,3 \+1,4 @@/);
    expect(raw).toMatch(/\u001B\[31m-export const sum = \(a, b\) => a - b;/);
    expect(raw).toMatch(/\u001B\[32m\+export const sum = \(a, b\) => a \+ b;/);
    expect(ui.lastFrame()).not.toContain('╭'); // the board gives way to the diff
    expect(ui.lastFrame()).toContain('↑/k/↓/j scroll · PgUp/PgDn page');

    await ui.press(KEYS.down);
    await ui.waitForFrame('lines 2–21 of 51');
    expect(ui.lines()[7]).toBe('index 3b18e51..a8c0f2d 100644');
    await ui.press('\u001B[6~'); // PgDn
    await ui.waitForFrame('lines 21–40 of 51');
    await ui.press('G');
    await ui.waitForFrame('lines 32–51 of 51');
    expect(ui.lastFrame()).toContain(' context 39');
    await ui.press('\u001B[5~'); // PgUp
    await ui.waitForFrame('lines 13–32 of 51');
    await ui.press('g');
    await ui.waitForFrame('lines 1–20 of 51');
    await ui.press(KEYS.up);
    expect(ui.lastFrame()).toContain('lines 1–20 of 51');
    await ui.press(KEYS.escape);
    await ui.waitForFrame('▸ #1 arm_1');
  });

  it("a red arm's verdict whole, wrapped at 80 columns where its card cuts it", async () => {
    const ui = await mount(storeAt('harvested'), recorder(samplePatch(4)), { columns: 80, rows: 24 } as {
      columns: number;
    });
    await ui.press(KEYS.right); // arm_2, red on a long motif
    await ui.press(KEYS.enter);
    await ui.waitForFrame('arm_2 patch');
    const verdict = ui.lines().filter((l) => l.startsWith('#'));
    expect(verdict[0]).toMatch(/^# arm_2 on scripted\/sloppy · red · #3/);
    const text = verdict.join(' ').replace(/#\s+/g, ' ');
    expect(text.replace(/\s+/g, ' ')).toContain(RED_MOTIF.replace(/\s+/g, ' ').slice(0, 60));
    for (const line of verdict) expect(displayWidth(line)).toBeLessThanOrEqual(78);
  });

  it('a asks, then aborts the running arm only; the arm ends aborted and the next arm goes on', async () => {
    const controller = recorder();
    const store = storeAt('arm3running');
    const ui = await mount(store, controller);
    await ui.press(KEYS.left); // the selection does not matter: a aborts the arm that runs
    await ui.press('a');
    await ui.waitForFrame('abort arm_3? y aborts it (the other arms go on), n keeps it running');
    expect(controller.calls).toEqual([]);
    await ui.press('n');
    await ui.waitForFrame('arm_3 keeps running');
    expect(controller.calls).toEqual([]);
    await ui.press('a');
    await ui.waitForFrame('abort arm_3?');
    await ui.press('y');
    await ui.waitForFrame('aborting arm_3… the other arms go on');
    expect(controller.calls).toEqual(['abortArm 3']);
    expect(ui.lastFrame()).toContain('aborting…');
    await ui.press('a');
    expect(controller.calls).toEqual(['abortArm 3']);
    store.getState().apply({
      ...ev('phase_failed', 0, {
        phase: 'arm_3',
        kind: 'agent',
        attempts: 2,
        motif: 'aborted by the user',
        seconds: 4,
        tokens: 1300,
        cost: 0.0027,
      }),
      ts: Date.now(),
    });
    await ui.waitForFrame('✗ aborted');
    expect(ui.lastFrame()).toContain('↳ aborted by the user');
    await ui.press('a');
    await ui.waitForFrame('no arm is running');
    expect(controller.calls).toEqual(['abortArm 3']);
  });

  it('c asks the core for a clone; its phase_planned adds a column; at 5 arms c is refused', async () => {
    const controller = recorder();
    const store = storeAt('arm3running');
    const ui = await mount(store, controller);
    await ui.press('c');
    await ui.waitForFrame('cloning arm_4 from the primer…');
    expect(controller.calls).toEqual(['cloneArm']);
    store.getState().apply({
      ...ev('phase_planned', 0, { phase: { name: 'arm_4', kind: 'agent', attempts: 2, arm: 4 }, before: 'harvest' }),
      ts: Date.now(),
    });
    await waitFor(() => ui.lines().some((line) => cells(line).length === 4 && line.includes('arm_4')), {
      describe: () => ui.lastFrame(),
    });
    expect(cells(lineOf(ui, /arm_1 .*arm_4/))).toEqual(['arm_1', 'arm_2', '▸ arm_3', 'arm_4']);
    expect(cells(lineOf(ui, /✓ green/))[3]).toBe('○ pending');
    expect(lineOf(ui, /└─ ○ arm_4/)).toMatch(/^│ └─ ○ arm_4 +attempt|^│ └─ ○ arm_4$/);

    await ui.press('c');
    store.getState().apply({
      ...ev('phase_planned', 0, { phase: { name: 'arm_5', kind: 'agent', attempts: 2, arm: 5 }, before: 'harvest' }),
      ts: Date.now(),
    });
    // Five arms on 100 columns: two rows, balanced (3 + 2).
    await waitFor(() => ui.lines().some((line) => cells(line).join(' ') === 'arm_4 arm_5'), {
      describe: () => ui.lastFrame(),
    });
    await ui.press('c');
    await ui.waitForFrame('already 5 arms: no more clones');
    expect(controller.calls).toEqual(['cloneArm', 'cloneArm']);
  });

  it('p asks, n cancels, then p and y apply the winning patch by default', async () => {
    const controller = recorder();
    const ui = await mount(storeAt('harvested'), controller);
    await ui.press('p');
    await ui.waitForFrame("apply arm_1's patch? y applies, n cancels");
    expect(ui.lastFrame()).toContain('y apply · n/esc cancel');
    await ui.press('n');
    await ui.waitForFrame('apply cancelled');
    expect(controller.calls).toEqual([]);
    await ui.press('p');
    await ui.press('y');
    await ui.waitForFrame("applying arm_1's patch (verified first)…");
    expect(controller.calls).toEqual(['apply 1']);
  });

  it('p applies the selected arm when one was chosen', async () => {
    const controller = recorder();
    const ui = await mount(storeAt('harvested'), controller);
    await ui.press(KEYS.right);
    await ui.press(KEYS.right);
    await ui.press('p');
    await ui.waitForFrame("apply arm_3's patch?");
    await ui.press('y');
    await waitFor(() => controller.calls.length > 0);
    expect(controller.calls).toEqual(['apply 3']);
  });

  it('q asks first while the run goes, esc stays, q again quits; once finished q quits at once', async () => {
    const running = recorder();
    const ui = await mount(storeAt('arm3running'), running);
    await ui.press('q');
    await ui.waitForFrame(STATUS_CONFIRM_QUIT);
    await ui.press(KEYS.escape);
    await waitFor(() => !ui.lastFrame().includes(STATUS_CONFIRM_QUIT));
    expect(running.calls).toEqual([]);
    await ui.press('q');
    await ui.press('q');
    await ui.waitForFrame('quitting…');
    expect(running.calls).toEqual(['quit']);
    screens.unmount();

    const finished = recorder();
    const done = await mount(storeAt('harvested'), finished);
    await done.press('q');
    await done.waitForFrame('quitting…');
    expect(finished.calls).toEqual(['quit']);
  });

  it('Ctrl-C aborts the running turn, a second one quits', async () => {
    const controller = recorder();
    const ui = await mount(storeAt('arm3running'), controller);
    await ui.press(KEYS.ctrlC);
    await ui.waitForFrame('aborting the running turn');
    await ui.press(KEYS.ctrlC);
    await ui.waitForFrame('quitting…');
    expect(controller.calls).toEqual(['abort', 'quit']);
  });

  it('a narrow terminal wraps the arms onto more rows and truncates every line', async () => {
    const ui = await mount(storeAt('harvested'), recorder(), { columns: 100 });
    ui.resize(50, 60);
    await waitFor(() => ui.lines().every((line) => line.length <= 50), { describe: () => ui.lastFrame() });
    // Two columns per row: arm_1 and arm_2, then arm_3 alone.
    expect(cells(lineOf(ui, /arm_1 .*arm_2/))).toEqual(['▸ #1 arm_1 ★ winner', '#3 arm_2']);
    expect(cells(lineOf(ui, /#2 arm_3/))).toEqual(['#2 arm_3']);
    ui.resize(30, 80);
    await waitFor(() => ui.lines().every((line) => line.length <= 30), { describe: () => ui.lastFrame() });
    expect(cells(lineOf(ui, /^│ ▸ #1 arm_1/))).toEqual(['▸ #1 arm_1 ★ winner']);
    expect(ui.lines().filter((line) => line.startsWith('╭')).length).toBe(3);
  });
});

describe('BonScreen before the arms', () => {
  it('says the arms wait for the primer, and shows the primer live once it runs', async () => {
    const store = createBonStore();
    for (const event of live(eventsThrough('started'))) store.getState().apply(event);
    const ui = await mount(store);
    await ui.waitForFrame('○ ');
    expect(ui.lastFrame()).not.toContain('primer:');
    store.getState().apply({ ...ev('phase_started', 0, { phase: 'prime', kind: 'agent' }), ts: Date.now() });
    store.getState().apply({ ...ev('usage', 0, { phase: 'prime', tokens: 800, cost: 0.002 }), ts: Date.now() });
    await ui.waitForFrame('primer: 800 tokens, $0.0020, paid once');
    expect(T0).toBeGreaterThan(0);
  });
});
