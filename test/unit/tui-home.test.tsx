import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import React from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { EMPTY_HINT, HomeScreen, REPLAY_NOTE } from '../../components/HomeScreen.js';
import stringWidth from 'string-width';
import { windowStart } from '../../components/RunsTable.js';
import { screenColumns } from '../../src/contract/runsTable.js';
import { formatAge } from '../../src/contract/format.js';
import { fitCell } from '../../src/contract/text.js';
import type { HomeController, RunRow } from '../../state/controller.js';
import { createHomeStore } from '../../state/home/store.js';
import type { RunEvent } from '../../src/contract/events.js';
import { workspacePaths } from '../../src/config/paths.js';
import { execute, Run, type Phase } from '../../src/engine/runner.js';
import { openTraceStore } from '../../src/trace/store.js';
import { KEYS, renderInk, waitFor, type InkHarness } from '../helpers/ink.js';
import { PhaseFailure } from '../../src/contract/errors.js';
import { BON_ADW, eventsThrough, samplePatch } from '../helpers/bonEvents.js';

const NOW = Date.now();
const MIN = 60_000;

const ROWS: RunRow[] = [
  {
    adwId: 'aaaa0001',
    adwName: 'adw_prompt',
    status: 'green',
    phases: '2/2',
    tokens: 1634,
    cost: 0.004278,
    startedAt: NOW - 3 * MIN,
    finishedAt: NOW - 3 * MIN + 4600,
  },
  {
    adwId: 'bbbb0002',
    adwName: 'adw_build',
    status: 'failed',
    phases: '2/3',
    tokens: 12_400,
    cost: 0.0412,
    startedAt: NOW - 2 * 3600_000,
    finishedAt: NOW - 2 * 3600_000 + 30_000,
  },
  {
    adwId: 'cccc0003',
    adwName: 'adw_prompt',
    status: 'interrupted',
    phases: '0/2',
    tokens: 300,
    cost: 0.0009,
    startedAt: NOW - 3 * 86_400_000,
  },
];

/** The failed build of row 2: check ok, build ok in 2 attempts, gates red for good. */
function buildEvents(): RunEvent[] {
  const at = (ms: number) => ROWS[1].startedAt + ms;
  const id = 'bbbb0002';
  return [
    {
      type: 'run_started',
      adwId: id,
      ts: at(0),
      adwName: 'adw_build',
      cwd: '/home/dev/payload',
      phases: [
        { name: 'check', kind: 'code', attempts: 1 },
        { name: 'build', kind: 'agent', attempts: 3 },
        { name: 'gates', kind: 'code', attempts: 1 },
      ],
    },
    { type: 'phase_started', adwId: id, ts: at(1), phase: 'check', kind: 'code' },
    {
      type: 'phase_ok',
      adwId: id,
      ts: at(2),
      phase: 'check',
      kind: 'code',
      attempt: 1,
      attempts: 1,
      seconds: 0.1,
      tokens: 0,
      cost: 0,
    },
    { type: 'phase_started', adwId: id, ts: at(3), phase: 'build', kind: 'agent' },
    { type: 'attempt_started', adwId: id, ts: at(3), phase: 'build', attempt: 1, attempts: 3, sessionId: 's-b' },
    {
      type: 'activity',
      adwId: id,
      ts: at(10),
      phase: 'build',
      activity: { kind: 'tool_start', tool: 'write', detail: 'src/sum.js' },
    },
    {
      type: 'attempt_failed',
      adwId: id,
      ts: at(20),
      phase: 'build',
      attempt: 1,
      attempts: 3,
      motif: 'changed_files: array expected',
      willRetry: true,
    },
    { type: 'attempt_started', adwId: id, ts: at(21), phase: 'build', attempt: 2, attempts: 3, sessionId: 's-b' },
    {
      type: 'phase_ok',
      adwId: id,
      ts: at(25_000),
      phase: 'build',
      kind: 'agent',
      attempt: 2,
      attempts: 3,
      seconds: 25,
      tokens: 12_400,
      cost: 0.0412,
      sessionId: 's-b',
    },
    { type: 'phase_started', adwId: id, ts: at(25_001), phase: 'gates', kind: 'code' },
    { type: 'gate_result', adwId: id, ts: at(25_002), phase: 'gates', gate: 'changed_files', ok: true, seconds: 0.01 },
    {
      type: 'gate_result',
      adwId: id,
      ts: at(29_000),
      phase: 'gates',
      gate: 'npm test',
      ok: false,
      motif: 'exited 1: 1 failing',
      seconds: 4,
    },
    {
      type: 'phase_failed',
      adwId: id,
      ts: at(29_000),
      phase: 'gates',
      kind: 'code',
      attempts: 1,
      motif: 'npm test exited 1: 1 failing',
      seconds: 4,
      tokens: 0,
      cost: 0,
    },
    {
      type: 'run_finished',
      adwId: id,
      ts: at(29_001),
      exit: 1,
      seconds: 29,
      tokens: 12_400,
      cost: 0.0412,
      failedPhase: 'gates',
    },
  ];
}

function recorder(rows: RunRow[] = ROWS): HomeController & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    // Asynchronous like a store read: the screen must wait for it.
    listRuns: async () => (calls.push('listRuns'), rows),
    runEvents: async (adwId) => (calls.push(`runEvents ${adwId}`), adwId === 'bbbb0002' ? buildEvents() : []),
    resume: (adwId) => calls.push(`resume ${adwId}`),
    quit: () => calls.push('quit'),
  };
}

let mounted: InkHarness | undefined;
afterEach(() => {
  mounted?.unmount();
  mounted = undefined;
});

async function mount(controller: HomeController, size?: { columns?: number; rows?: number }) {
  mounted = await renderInk(<HomeScreen store={createHomeStore()} controller={controller} />, size);
  return mounted;
}

function lineOf(ui: InkHarness, pattern: RegExp): string {
  const line = ui.lines().find((l) => pattern.test(l));
  if (line === undefined) throw new Error(`no line matches ${pattern} in:\n${ui.lastFrame()}`);
  return line;
}

/** The adw id on the highlighted row. */
function highlighted(ui: InkHarness): string | undefined {
  return ui
    .lines()
    .find((l) => l.startsWith('› '))
    ?.slice(2, 10);
}

describe('HomeScreen: the runs list', () => {
  it('renders one row per run with id, ADW, status, phases, tokens, cost and age', async () => {
    const ui = await mount(recorder());
    await ui.waitForFrame('aaaa0001');
    expect(lineOf(ui, /^\s+id\s+ADW/)).toMatch(/^ {2}id {8}ADW\s+status\s+phases\s+tokens\s+cost\s+age$/);
    expect(lineOf(ui, /aaaa0001/)).toMatch(
      /^› aaaa0001 {2}adw_prompt\s+✓ green\s+2\/2\s+1\.6k\s+\$0\.0043 {2}3 min ago$/,
    );
    expect(lineOf(ui, /bbbb0002/)).toMatch(
      /^ {2}bbbb0002 {2}adw_build\s+✗ failed\s+2\/3\s+12k\s+\$0\.0412 {2}2 h ago$/,
    );
    expect(lineOf(ui, /cccc0003/)).toMatch(/■ interrupted\s+0\/2\s+300\s+\$0\.0009 {2}3 d ago$/);
    expect(ui.lastFrame()).toContain('↑/k up · ↓/j down · enter open · r resume · q/ctrl-c quit');
  });

  it('arrows and j/k move the highlight, within bounds', async () => {
    const ui = await mount(recorder());
    await ui.waitForFrame('aaaa0001');
    expect(highlighted(ui)).toBe('aaaa0001');
    await ui.press(KEYS.down);
    await waitFor(() => highlighted(ui) === 'bbbb0002', { describe: () => ui.lastFrame() });
    await ui.press('j');
    await waitFor(() => highlighted(ui) === 'cccc0003', { describe: () => ui.lastFrame() });
    await ui.press(KEYS.down);
    await ui.press(KEYS.up);
    await waitFor(() => highlighted(ui) === 'bbbb0002', { describe: () => ui.lastFrame() });
    await ui.press('k');
    await ui.press('k');
    await waitFor(() => highlighted(ui) === 'aaaa0001', { describe: () => ui.lastFrame() });
    expect(ui.lines().filter((l) => l.startsWith('› '))).toHaveLength(1);
  });

  it('an empty list says how to start a run', async () => {
    const ui = await mount(recorder([]));
    await ui.waitForFrame(EMPTY_HINT);
    expect(ui.lastFrame()).toContain('factory demo');
    expect(ui.lastFrame()).toContain('q/ctrl-c quit');
    expect(ui.lastFrame()).not.toContain('enter open');
  });

  it('a list that can not be read says why in one line', async () => {
    const controller: HomeController = {
      ...recorder(),
      listRuns: () => Promise.reject(new Error('database disk image is malformed')),
    };
    const ui = await mount(controller);
    await ui.waitForFrame('could not read the runs: database disk image is malformed');
  });

  it('q quits', async () => {
    const controller = recorder();
    const ui = await mount(controller);
    await ui.waitForFrame('aaaa0001');
    await ui.press('q');
    await waitFor(() => controller.calls.includes('quit'));
  });

  it('keeps the columns aligned, by display width, when a name has CJK characters or emoji', async () => {
    const wide: RunRow[] = [
      ...ROWS,
      {
        adwId: 'dddd0004',
        adwName: '構築ワークフロー日本語',
        status: 'failed',
        phases: '1/3',
        tokens: 2_000,
        cost: 0.01,
        startedAt: NOW - 5 * MIN,
      },
      {
        adwId: 'eeee0005',
        adwName: '🚀 launch 🚀🚀🚀🚀🚀',
        status: 'running',
        phases: '0/2',
        tokens: 0,
        cost: 0,
        startedAt: NOW - 40_000,
      },
      {
        adwId: 'ffff0006',
        adwName: '構築',
        status: 'green',
        phases: '2/2',
        tokens: 900,
        cost: 0.002,
        startedAt: NOW - 2 * MIN,
      },
    ];
    for (const columns of [100, 60, 40]) {
      const ui = await mount(recorder(wide), { columns });
      await ui.waitForFrame('ffff0006');
      expect(
        ui.lines().every((line) => stringWidth(line) <= columns),
        ui.lastFrame(),
      ).toBe(true);
      const header = lineOf(ui, /^\s+id\s+ADW/);
      const rows = ui.lines().filter((l) => /[a-f]{4}000\d/.test(l));
      expect(rows).toHaveLength(6);
      // Each status starts in the header's status column, whatever the width of the name before it.
      const statusAt = stringWidth(header.slice(0, header.indexOf('status')));
      expect(
        rows.map((l) => stringWidth(l.slice(0, l.search(/[●✓✗■!] /)))),
        ui.lastFrame(),
      ).toEqual(rows.map(() => statusAt));
      if (header.includes('age')) {
        const ageAt = stringWidth(header.slice(0, header.indexOf('age')));
        expect(
          rows.map((l) => stringWidth(l.slice(0, l.search(/\d+ (s|min|h|d) ago$/)))),
          ui.lastFrame(),
        ).toEqual(rows.map(() => ageAt));
      }
      mounted?.unmount();
      mounted = undefined;
    }
    expect(fitCell('構築ワークフロー日本語', 20)).toBe('構築ワークフロー日… '); // a tenth character would not fit: one blank pads it
  });

  it('drops columns on a narrow terminal instead of wrapping rows', async () => {
    const ui = await mount(recorder(), { columns: 50 });
    await ui.waitForFrame('bbbb0002');
    expect(ui.lines().every((line) => [...line].length <= 50)).toBe(true);
    expect(lineOf(ui, /bbbb0002/)).toMatch(/^ {2}bbbb0002 {2}adw_build\s+✗ failed/);
    expect(lineOf(ui, /^\s+id/)).not.toContain('tokens');
    expect(ui.lines().filter((l) => /[a-d]{4}000\d/.test(l))).toHaveLength(3);
  });
});

/** The finished best-of-N run the replay tests open. */
const BON_ROW: RunRow = {
  adwId: BON_ADW,
  adwName: 'adw_bon',
  status: 'green',
  phases: '6/6',
  tokens: 5700,
  cost: 0.0123,
  startedAt: NOW - 5 * MIN,
  finishedAt: NOW - 5 * MIN + 19_000,
};

describe('HomeScreen: replay and resume', () => {
  it('enter replays the selected run: statuses, attempts, figures and gate chips; esc goes back', async () => {
    const controller = recorder();
    const ui = await mount(controller);
    await ui.waitForFrame('bbbb0002');
    await ui.press(KEYS.down);
    await waitFor(() => highlighted(ui) === 'bbbb0002');
    await ui.press(KEYS.enter);
    await ui.waitForFrame(REPLAY_NOTE);
    expect(controller.calls).toContain('runEvents bbbb0002');
    expect(ui.lastFrame()).toContain('factory · adw_build · bbbb0002 · /home/dev/payload');
    expect(lineOf(ui, /code {2}check/)).toBe('✓ code  check  0.1s');
    expect(lineOf(ui, /agent build/)).toBe('✓ agent build  attempt 2/3  25.0s  12k tok  $0.0412');
    expect(ui.lastFrame()).toContain('↳ attempt 1/3 failed: changed_files: array expected');
    expect(lineOf(ui, /code {2}gates/)).toBe('✗ code  gates  4.0s');
    expect(ui.lastFrame()).toContain('    ✓ changed_files  ✗ npm test 4.0s');
    expect(ui.lastFrame()).toContain('    ↳ npm test: exited 1: 1 failing');
    expect(lineOf(ui, /^cost/)).toBe('cost $0.0412 · tokens 12k · elapsed 29.0s  FAILED at gates (exit 1)');
    expect(ui.lastFrame()).toContain('esc/q back to runs · r resume · ctrl-c quit');
    // The replay is read-only: Ctrl-C is no abort, and nothing was resumed.
    expect(controller.calls.filter((c) => c.startsWith('resume'))).toEqual([]);

    await ui.press(KEYS.escape);
    await ui.waitForFrame('enter open');
    expect(highlighted(ui)).toBe('bbbb0002');
    expect(ui.lastFrame()).not.toContain(REPLAY_NOTE);
    // Going back reads the list again.
    expect(controller.calls.filter((c) => c === 'listRuns')).toHaveLength(2);

    await ui.press(KEYS.enter);
    await ui.waitForFrame(REPLAY_NOTE);
    await ui.press('q');
    await ui.waitForFrame('enter open');
    expect(controller.calls).not.toContain('quit');
  });

  it('a best-of-N run replays as its arms board: ranked cards and why #1, read-only', async () => {
    const controller = { ...recorder([BON_ROW]), runEvents: async () => eventsThrough('harvested') };
    const ui = await mount(controller, { columns: 120, rows: 40 });
    await ui.waitForFrame(BON_ADW);
    await ui.press(KEYS.enter);
    await ui.waitForFrame('why #1');
    expect(ui.lastFrame()).toMatch(/#1 arm_1 ★ winner/);
    expect(ui.lastFrame()).toContain('why #1: arm_1 (scripted/fast) is green and cheapest');
    expect(ui.lastFrame()).toContain(REPLAY_NOTE);
    expect(ui.lastFrame()).toContain('esc/q back to runs');
    await ui.press(KEYS.escape);
    await ui.waitForFrame('enter open');
  });

  it("a replayed board reads like the live one: ←/→ select, enter an arm's verdict and patch, o and s compare; nothing acts", async () => {
    const reads: string[] = [];
    const controller = {
      ...recorder([BON_ROW]),
      runEvents: async () => eventsThrough('harvested'),
      readPatch: (file: string) => {
        reads.push(path.basename(file));
        return samplePatch(40).replace(/sum/g, path.basename(file, '.patch').replace('-', ''));
      },
    };
    const ui = await mount(controller, { columns: 120, rows: 30 });
    await ui.waitForFrame(BON_ADW);
    await ui.press(KEYS.enter);
    await ui.waitForFrame('why #1');
    expect(ui.lastFrame()).toContain('enter diff');
    expect(ui.lastFrame()).not.toMatch(/\bp apply|\ba abort|\bc clone/);
    // The second card, then its diff: its verdict above its patch, read from the file its run sealed.
    await ui.press(KEYS.right);
    await ui.press(KEYS.enter);
    await ui.waitForFrame(/arm_\d patch · lines 1–/);
    expect(reads).toHaveLength(1);
    expect(ui.lastFrame()).toMatch(/# arm_\d on scripted\//);
    expect(ui.lastFrame()).toContain(`diff --git a/src/${reads[0]!.replace('.patch', '').replace('-', '')}.js`);
    await ui.press(KEYS.down);
    await ui.waitForFrame('lines 2–');
    // esc closes the diff, not the replay; a second esc goes back to the runs.
    await ui.press(KEYS.escape);
    await ui.waitForFrame('why #1');
    await ui.press('o');
    await ui.waitForFrame(/overlap|shared/);
    expect(reads.length).toBeGreaterThan(1);
    await ui.press(KEYS.escape);
    await ui.waitForFrame('why #1');
    await ui.press('s');
    await waitFor(() => !ui.lastFrame().includes('why #1') && ui.lastFrame().includes('tab next arm'), {
      describe: () => ui.lastFrame(),
    });
    await ui.press(KEYS.escape);
    await ui.waitForFrame('why #1');
    await ui.press('p');
    await ui.press('a');
    await ui.press('c');
    expect(controller.calls.filter((c) => !c.startsWith('listRuns') && !c.startsWith('runEvents'))).toEqual([]);
    await ui.press(KEYS.escape);
    await ui.waitForFrame('enter open');
  });

  it('a run with no recorded events stays on the list and says so', async () => {
    const ui = await mount(recorder());
    await ui.waitForFrame('aaaa0001');
    await ui.press(KEYS.enter);
    await ui.waitForFrame('no events recorded for aaaa0001');
    expect(highlighted(ui)).toBe('aaaa0001');
  });

  it('r resumes a failed run, and refuses a green one', async () => {
    const controller = recorder();
    const ui = await mount(controller);
    await ui.waitForFrame('aaaa0001');
    await ui.press('r');
    await ui.waitForFrame('aaaa0001 is green: only a failed or interrupted run can be resumed');
    expect(controller.calls.filter((c) => c.startsWith('resume'))).toEqual([]);
    await ui.press(KEYS.down);
    await ui.press('r');
    await waitFor(() => controller.calls.includes('resume bbbb0002'), { describe: () => controller.calls.join(', ') });
    await ui.waitForFrame('resuming bbbb0002…');
    expect(controller.calls.filter((c) => c.startsWith('resume'))).toEqual(['resume bbbb0002']);
  });

  it('r from a replayed failed run resumes it', async () => {
    const controller = recorder();
    const ui = await mount(controller);
    await ui.waitForFrame('bbbb0002');
    await ui.press('j');
    await ui.press(KEYS.enter);
    await ui.waitForFrame(REPLAY_NOTE);
    await ui.press('r');
    await waitFor(() => controller.calls.includes('resume bbbb0002'));
  });
});

describe('runs table pieces', () => {
  it('ages read in the largest whole unit', () => {
    expect([0, 40_000, 3 * MIN, 59 * MIN, 5 * 3600_000, 3 * 86_400_000, -5000].map(formatAge)).toEqual([
      '0 s ago',
      '40 s ago',
      '3 min ago',
      '59 min ago',
      '5 h ago',
      '3 d ago',
      '0 s ago',
    ]);
  });

  it('columns drop figures first; id and status always stay; ADW takes the room left', () => {
    expect(screenColumns(120).map((c) => c.key)).toEqual(['id', 'adw', 'status', 'phases', 'tokens', 'cost', 'age']);
    expect(screenColumns(120).find((c) => c.key === 'adw')?.width).toBe(20);
    expect(screenColumns(70).map((c) => c.key)).toEqual(['id', 'adw', 'status', 'phases', 'cost', 'age']);
    expect(screenColumns(30).map((c) => c.key)).toEqual(['id', 'status']);
  });

  it('cells are cut with an ellipsis and padded to their alignment', () => {
    expect(fitCell('adw_something_long', 9)).toBe('adw_some…');
    expect(fitCell('12k', 6, 'right')).toBe('   12k');
    expect(fitCell('2/3', 6)).toBe('2/3   ');
  });

  it('the drawn window keeps the selection in view', () => {
    expect(windowStart(5, 4, 10)).toBe(0);
    expect(windowStart(100, 0, 10)).toBe(0);
    expect(windowStart(100, 50, 10)).toBe(45);
    expect(windowStart(100, 99, 10)).toBe(90);
  });
});

describe('HomeScreen on the real trace store', () => {
  it('lists a run recorded from the real runner and replays its send-back with the gate chips', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-home-'));
    const store = openTraceStore(workspacePaths(root));
    try {
      // A real runner run (in-test phases: the build stands for an agent, no pi here), red gates once.
      const run = new Run('adw_build', root);
      run.subscribe((event) => store.recordEvent(event));
      let gatesRuns = 0;
      const phases: Phase[] = [
        {
          name: 'build',
          kind: 'agent',
          retries: 2,
          action: (r, ctx) => (
            r.attemptStarted('build', ctx.attempt + 1, ctx.attempts, { sessionId: 's-b' }),
            r.charge('build', 700, 0.002),
            {}
          ),
        },
        {
          name: 'gates',
          kind: 'code',
          judges: 'build',
          action: (r) => {
            const ok = ++gatesRuns > 1;
            r.emit({
              type: 'gate_result',
              adwId: r.adwId,
              ts: Date.now(),
              phase: 'gates',
              gate: 'changed_files',
              ok: true,
              seconds: 0.001,
            });
            r.emit({
              type: 'gate_result',
              adwId: r.adwId,
              ts: Date.now(),
              phase: 'gates',
              gate: 'npm test',
              ok,
              ...(ok ? {} : { motif: '`npm test` exited 1' }),
              seconds: 0.002,
            });
            if (!ok) throw new PhaseFailure('`npm test` exited 1');
            return [];
          },
        },
      ];
      expect(await execute(run, phases)).toBe(0);
      store.flush();

      const calls: string[] = [];
      const controller: HomeController = {
        listRuns: () => store.listRuns(),
        runEvents: (adwId) => store.runEvents(adwId),
        resume: (adwId) => calls.push(`resume ${adwId}`),
        quit: () => calls.push('quit'),
      };
      const ui = await mount(controller);
      await ui.waitForFrame(run.adwId);
      expect(lineOf(ui, new RegExp(run.adwId))).toMatch(/adw_build\s+✓ green\s+2\/2\s+1\.4k/);
      await ui.press(KEYS.enter);
      await ui.waitForFrame(REPLAY_NOTE);
      expect(lineOf(ui, /agent build/)).toMatch(/^✓ agent build {2}attempt 2\/3 .* 1\.4k tok {2}\$0\.0040$/);
      expect(lineOf(ui, /code {2}gates/)).toMatch(/^✓ code {2}gates/);
      expect(lineOf(ui, /changed_files/)).toBe('    ✓ changed_files  ✓ npm test');
      await ui.press('r');
      await ui.waitForFrame('is green: only a failed or interrupted run can be resumed');
      expect(calls).toEqual([]);
    } finally {
      store.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
