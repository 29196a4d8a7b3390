// The arms board's spend keys and views through a real store and real Ink: the forecast that asks y/n, an arm paused
// at its cap raised with +, a message typed into a running arm (m … enter), the overlap (o) and two arms side by
// side (s, tab for the next), the diff size on each card and the baseline's line.
import React from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { BonScreen } from '../../components/BonScreen.js';
import type { BonController } from '../../state/controller.js';
import { createBonStore, type BonStore } from '../../state/bon/store.js';
import type { RunEvent } from '../../src/contract/events.js';
import { ev, eventsThrough, type Stage } from '../helpers/bonEvents.js';
import { KEYS, renderInk, waitFor, type InkHarness } from '../helpers/ink.js';
import { recordingBonController, type RecordingBonController } from '../helpers/bonController.js';

function storeWith(stage: Stage, more: RunEvent[] = []): BonStore {
  const store = createBonStore();
  const events = [...eventsThrough(stage), ...more];
  const shift = Date.now() - Math.max(...events.map((e) => e.ts));
  for (const event of events) store.getState().apply({ ...event, ts: event.ts + shift });
  return store;
}

const PATCHES: Record<number, string> = {
  1: 'diff --git a/src/sum.js b/src/sum.js\n--- a/src/sum.js\n+++ b/src/sum.js\n@@ -1 +1 @@\n-export const sum = (a, b) => a - b;\n+export const sum = (a, b) => a + b;\n',
  2: 'diff --git a/src/sum.js b/src/sum.js\n--- a/src/sum.js\n+++ b/src/sum.js\n@@ -1 +1 @@\n-export const sum = (a, b) => a - b;\n+export const sum = (a, b) => a + b;\ndiff --git a/test/sum.test.js b/test/sum.test.js\n--- a/test/sum.test.js\n+++ b/test/sum.test.js\n@@ -3 +3,2 @@\n test("sums");\n+test("negatives \u001b[2J");\n',
  3: 'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n # sum\n+Sums two numbers.\n',
};

function recorder(): RecordingBonController {
  return recordingBonController((k) => Promise.resolve(PATCHES[k] ?? ''));
}

let mounted: InkHarness | undefined;
afterEach(() => {
  mounted?.unmount();
  mounted = undefined;
});

async function mount(store: BonStore, controller: BonController, size = { columns: 110, rows: 40 }) {
  mounted = await renderInk(<BonScreen store={store} controller={controller} />, size);
  return mounted;
}

const FORECAST = ev('forecast', 3350, {
  forecast: {
    arms: 3,
    perArm: [1, 2, 3].map((arm) => ({ arm, low: 0.001, mid: 0.002, high: 0.004 })),
    total: { low: 0.008, mid: 0.011, high: 0.017 },
    primer: 0.005,
    basis: 'x',
  },
  threshold: 0.01,
  confirm: true,
});

describe('the arms board: spend, messages, comparisons', () => {
  it('a forecast above the threshold asks y / n on the board; y goes to the core once', async () => {
    const controller = recorder();
    const ui = await mount(storeWith('primed', [FORECAST]), controller);
    await ui.waitForFrame('fan out? y / n');
    expect(ui.lastFrame()).toMatch(
      /fan out\? y \/ n — above bon.confirm_above \$[\d.]+ · forecast: 3 arm\(s\) ~\$0\.0060 \(\$0\.0030–\$0\.0120\)/,
    );
    expect(ui.lines().at(-1)).toMatch(/^y fan out · n no arm/);
    await ui.press('y');
    await ui.press('y');
    expect(controller.calls).toEqual(['confirmFanOut true']);
    await ui.waitForFrame('fanning out…');
  });

  it('an arm paused at its cap says so on its card; + raises the selected one', async () => {
    const controller = recorder();
    const store = storeWith('arm3running', [
      ev('spend', 16600, { phase: 'arm_3', arm: 3, kind: 'wrap_up', spent: 0.0024, cap: 0.003, scope: 'arm' }),
      ev('spend', 16700, {
        phase: 'arm_3',
        arm: 3,
        kind: 'capped',
        spent: 0.0031,
        cap: 0.003,
        scope: 'arm',
        motif: 'budget: x',
      }),
      ev('spend', 16800, { phase: 'arm_3', arm: 3, kind: 'paused', spent: 0.0031, cap: 0.003, scope: 'arm' }),
    ]);
    const ui = await mount(store, controller);
    await ui.waitForFrame('⏸ paused at its cap: + more');
    expect(ui.lastFrame()).toContain('cost $0.0027 / $0.0030 cap');
    await ui.press('+');
    expect(controller.calls).toEqual(['raiseArm 3']);
  });

  it('m types a message for the running arm (a paste and control bytes included); enter sends it, esc drops it', async () => {
    const controller = recorder();
    const ui = await mount(storeWith('arm3running'), controller);
    await ui.waitForFrame('▸ arm_3');
    await ui.press('m');
    await ui.waitForFrame('message to arm_3 › ▌');
    // Keys bound on the board (q, a, d) are text here.
    await ui.press('use ');
    await ui.press('q');
    await ui.press('a\u0007d');
    await ui.waitForFrame('message to arm_3 › use qa');
    expect(ui.lines().at(-1)).toMatch(/^enter send · backspace\/delete erase · esc cancel/);
    await ui.press(KEYS.enter);
    await waitFor(() => controller.calls.length > 0);
    expect(controller.calls).toEqual(['steerArm 3 use qa d']);
    await ui.press('m');
    await ui.press('never mind');
    await ui.press(KEYS.escape);
    await ui.waitForFrame('message not sent');
    expect(controller.calls).toHaveLength(1);
  });

  it('m on an arm that is not running says so and opens nothing', async () => {
    const controller = recorder();
    const ui = await mount(storeWith('harvested'), controller);
    await ui.waitForFrame('proposal:');
    await ui.press('o');
    await ui.press(KEYS.escape);
    await ui.press('m');
    await waitFor(() => !ui.lastFrame().includes('message to'));
    expect(controller.calls.filter((c) => c.startsWith('steer'))).toEqual([]);
  });

  it('o reads every patched arm and shows what they share and what is theirs alone; esc goes back', async () => {
    const controller = recorder();
    const ui = await mount(storeWith('harvested'), controller);
    await ui.waitForFrame('proposal:');
    await ui.press('o');
    await ui.waitForFrame('── overlap of arms 1, 2, 3');
    expect(controller.calls).toEqual(['readPatch 1', 'readPatch 2', 'readPatch 3']);
    const frame = ui.lastFrame();
    expect(frame).toMatch(/arms 1\+2/);
    expect(frame).toMatch(/only arm 3/);
    await ui.press(KEYS.escape);
    await ui.waitForFrame('why #1');
  });

  it('s puts the selected arm beside the next; tab moves on; a hostile byte in a patch never reaches the terminal', async () => {
    const controller = recorder();
    const ui = await mount(storeWith('harvested'), controller);
    await ui.waitForFrame('proposal:');
    await ui.press('s');
    await ui.waitForFrame(/arm 1 ⟷ arm 2/);
    expect(ui.rawFrame()).not.toContain('\u001b[2J');
    await ui.press('\t');
    await ui.waitForFrame(/arm 1 ⟷ arm 3/);
  });

  it("each card shows its patch's size in lines; the baseline's red gate has its line", async () => {
    const store = storeWith('arm1', [
      ev('baseline', 3340, { gates: [{ gate: 'npm test', ok: false }], seconds: 1.2 }),
      ev('arm_patch', 7460, {
        phase: 'arm_1',
        arm: 1,
        patchFile: 'x/arm-1.patch',
        bytes: 1536,
        files: ['src/sum.js'],
        added: 12,
        removed: 3,
      }),
    ]);
    const ui = await mount(store, recorder());
    await ui.waitForFrame('patch 1.5 KB · +12 −3 · 1 file');
    expect(ui.lastFrame()).toContain(
      'baseline on HEAD: ✗ npm test — red on HEAD without any arm: npm test — an arm that makes it green fixed it',
    );
  });
});
