// The doctor screen through ink-testing-library: rows go from ○ to a spinner to their mark as the store is
// fed out of order, details and fix hints show, the summary follows, keys reach the controller.
import React from 'react';
import { describe, expect, it } from 'vitest';
import stringWidth from 'string-width';
import { DoctorScreen, idColumnWidth } from '../../components/DoctorScreen.js';
import { HomeScreen } from '../../components/HomeScreen.js';
import { SPINNER_FRAMES } from '../../components/theme.js';
import type { DoctorResult } from '../../src/doctor/types.js';
import type { HomeController } from '../../state/controller.js';
import {
  createDoctorStore,
  initialDoctorState,
  PLANNED_MARK,
  type DoctorCheckInfo,
  type DoctorController,
  type DoctorStore,
} from '../../state/doctor/store.js';
import { createHomeStore } from '../../state/home/store.js';
import { KEYS, screenTests, waitFor, type InkHarness } from '../helpers/ink.js';

const GIT: DoctorCheckInfo = { id: 'tools.git', category: 'tools', severity: 'required', title: 'git' };
const CLAUDE: DoctorCheckInfo = { id: 'tools.claude', category: 'tools', severity: 'optional', title: 'claude CLI' };
const PI: DoctorCheckInfo = { id: 'pi.version', category: 'pi', severity: 'required', title: 'pi binary version' };
const BATTERY: DoctorCheckInfo = {
  id: 'tests.battery',
  category: 'tests',
  severity: 'required',
  title: 'node battery',
};
const PLAN = [GIT, CLAUDE, PI, BATTERY];

function result(check: DoctorCheckInfo, status: DoctorResult['status'], detail: string, fix?: string): DoctorResult {
  return { ...check, status, detail, ms: 1, ...(fix !== undefined ? { fix } : {}) };
}

function recorder(): DoctorController & { calls: string[] } {
  const calls: string[] = [];
  return { calls, rerun: () => calls.push('rerun'), close: () => calls.push('close') };
}

const screens = screenTests();

async function mount(store: DoctorStore, controller: DoctorController, size?: { columns?: number; rows?: number }) {
  return screens.mount(<DoctorScreen store={store} controller={controller} />, size);
}

function lineOf(ui: InkHarness, pattern: RegExp): string {
  const line = ui.lines().find((l) => pattern.test(l));
  if (line === undefined) throw new Error(`no line matches ${pattern} in:\n${ui.lastFrame()}`);
  return line;
}

const SPIN = `[${SPINNER_FRAMES.join('')}]`;

function feedPlan(store: DoctorStore): void {
  const { dispatch } = store.getState();
  dispatch({ type: 'begin', generation: 1 });
  dispatch({ type: 'planned', generation: 1, checks: PLAN });
}

describe('DoctorScreen', () => {
  it('resolves live from planned to spinner to marks, grouped, with details, fix hints and the summary', async () => {
    const store = createDoctorStore();
    const controller = recorder();
    const ui = await mount(store, controller);
    feedPlan(store);
    await ui.waitForFrame('tools.git');
    expect(lineOf(ui, /tools\.git/)).toMatch(new RegExp(`^ {2}${PLANNED_MARK} tools\\.git\\s+git · waiting$`));
    expect(ui.lines().filter((l) => /^(tools|pi|tests)$/.test(l))).toEqual(['tools', 'pi', 'tests']);

    const { dispatch } = store.getState();
    for (const check of [BATTERY, PI, GIT, CLAUDE]) dispatch({ type: 'started', generation: 1, check });
    await waitFor(() => ui.lines().filter((l) => new RegExp(`^ {2}${SPIN} `).test(l)).length === 4, {
      describe: () => ui.lastFrame(),
    });
    expect(lineOf(ui, /pi\.version/)).toContain('pi binary version…');
    expect(ui.lastFrame()).not.toContain('r re-run');

    // Out of order: the last planned check resolves first.
    dispatch({ type: 'resolved', generation: 1, result: result(BATTERY, 'skipped', 'skipped by --quick') });
    dispatch({
      type: 'resolved',
      generation: 1,
      result: result(PI, 'fail', 'pi 0.80.0 is older than 0.85.1', 'npm i -g @earendil-works/pi-coding-agent@0.85.1'),
    });
    await ui.waitForFrame('pi 0.80.0 is older');
    expect(lineOf(ui, /tests\.battery/)).toMatch(/^ {2}– tests\.battery\s+skipped by --quick$/);
    expect(lineOf(ui, /pi\.version/)).toMatch(/^ {2}✗ pi\.version\s+pi 0\.80\.0 is older than 0\.85\.1$/);
    expect(lineOf(ui, /fix: npm i -g/)).toMatch(/^\s{10,}fix: npm i -g @earendil-works\/pi-coding-agent@0\.85\.1$/);
    expect(lineOf(ui, /tools\.git/)).toMatch(new RegExp(`^ {2}${SPIN} tools\\.git`));
    expect(ui.lastFrame()).toContain('0 ok, 0 warnings, 1 failed, 1 skipped · 2 running');

    dispatch({
      type: 'resolved',
      generation: 1,
      result: result(CLAUDE, 'warn', 'claude not on PATH', 'npm i -g @anthropic-ai/claude-code'),
    });
    dispatch({ type: 'resolved', generation: 1, result: result(GIT, 'ok', 'git 2.43.0') });
    dispatch({
      type: 'finished',
      generation: 1,
      results: store.getState().rows.flatMap((r) => (r.result ? [r.result] : [])),
    });
    await ui.waitForFrame('1 ok, 1 warning, 1 failed, 1 skipped');
    expect(lineOf(ui, /tools\.git/)).toMatch(/^ {2}✓ tools\.git\s+git 2\.43\.0$/);
    expect(lineOf(ui, /tools\.claude/)).toMatch(/^ {2}! tools\.claude\s+claude not on PATH \(optional\)$/);
    expect(ui.lines().filter((l) => l.includes('fix:'))).toHaveLength(2);
    expect(ui.lastFrame()).not.toMatch(new RegExp(SPIN));
    // The fix hint is dimmed (SGR 2), the failed mark red (SGR 31).
    expect(ui.rawFrame()).toMatch(/\u001B\[2m[^\n]*fix: npm i -g @earendil/);
    expect(ui.rawFrame()).toMatch(/\u001B\[31m✗/);
    expect(ui.lastFrame()).toContain('r re-run · q/esc/ctrl-c quit');
  });

  it('r re-runs a finished pass and q closes, through the controller', async () => {
    const store = createDoctorStore();
    const controller = recorder();
    const ui = await mount(store, controller);
    feedPlan(store);
    await ui.waitForFrame('tools.git');
    await ui.press('r'); // not bound while checks run
    expect(controller.calls).toEqual([]);
    store
      .getState()
      .dispatch({ type: 'finished', generation: 1, results: PLAN.map((c) => result(c, 'ok', `${c.id} fine`)) });
    await ui.waitForFrame('4 ok, 0 warnings, 0 failed, 0 skipped');
    await ui.press('r');
    await waitFor(() => controller.calls.includes('rerun'));
    // The rows are planned again at once, before the core starts the new pass.
    await waitFor(() => ui.lines().filter((l) => l.includes(PLANNED_MARK)).length === 4, {
      describe: () => ui.lastFrame(),
    });
    await ui.press('q');
    await waitFor(() => controller.calls.includes('close'));
    expect(controller.calls).toEqual(['rerun', 'close']);
  });

  it('opened from the home screen, esc goes back to the runs', async () => {
    const store = createDoctorStore(initialDoctorState('home'));
    const controller = recorder();
    const ui = await mount(store, controller);
    feedPlan(store);
    await ui.waitForFrame('q/esc back to runs · ctrl-c quit');
    await ui.press(KEYS.escape);
    await waitFor(() => controller.calls.includes('close'), { describe: () => ui.lastFrame() });
  });

  it('opened over the arms board (or a run), every way out says and goes back to it', async () => {
    for (const [via, words] of [
      ['board', 'back to the board'],
      ['run', 'back to the run'],
    ] as const) {
      const store = createDoctorStore(initialDoctorState(via));
      const controller = recorder();
      const ui = await mount(store, controller);
      feedPlan(store);
      await ui.waitForFrame(`q/esc/ctrl-c ${words}`);
      expect(ui.lastFrame()).not.toContain('back to runs');
      await ui.press('q');
      await waitFor(() => controller.calls.includes('close'), { describe: () => ui.lastFrame() });
      ui.unmount();
    }
  });

  it('sizes the id column by display width, so wide ids line up their details', async () => {
    expect(idColumnWidth(['tools.git', '構築.チェック'], 120)).toBe(13);
    expect(idColumnWidth(['構築.チェック'], 30)).toBe(10);
    const WIDE: DoctorCheckInfo = { id: '構築.チェック', category: 'tools', severity: 'required', title: 'wide' };
    const EMOJI: DoctorCheckInfo = {
      id: 'tools.🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀',
      category: 'tools',
      severity: 'required',
      title: 'emoji',
    };
    const store = createDoctorStore();
    const ui = await mount(store, recorder(), { columns: 80 });
    const { dispatch } = store.getState();
    dispatch({ type: 'begin', generation: 1 });
    dispatch({ type: 'planned', generation: 1, checks: [GIT, WIDE, EMOJI] });
    dispatch({
      type: 'finished',
      generation: 1,
      results: [GIT, WIDE, EMOJI].map((c) => result(c, 'ok', 'detail here')),
    });
    await ui.waitForFrame('detail here');
    expect(ui.lines().every((line) => stringWidth(line) <= 80)).toBe(true);
    const rows = ui.lines().filter((l) => l.endsWith('detail here'));
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((l) => stringWidth(l.slice(0, l.indexOf('detail here')))))).toEqual(new Set([4 + 26 + 2]));
    expect(rows.some((l) => l.includes('…'))).toBe(true);
  });

  it('truncates every line on a narrow terminal instead of wrapping', async () => {
    const store = createDoctorStore();
    const ui = await mount(store, recorder(), { columns: 40 });
    feedPlan(store);
    store.getState().dispatch({
      type: 'finished',
      generation: 1,
      results: [
        result(
          GIT,
          'fail',
          'git was not found on PATH nor in any usual install location',
          'sudo apt-get install --yes git-core-and-friends',
        ),
        ...PLAN.slice(1).map((c) => result(c, 'ok', 'fine')),
      ],
    });
    await ui.waitForFrame('1 failed');
    expect(ui.lines().every((line) => [...line].length <= 40)).toBe(true);
    expect(lineOf(ui, /tools\.git/)).toMatch(/^ {2}✗ tools\.git\s+git was not found.*…$/);
    expect(ui.lines().filter((l) => /tools\.git/.test(l))).toHaveLength(1);
  });
});

/** A full pass the size of `factory doctor --quick` in a fresh repo: 22 checks, the only problem (a warning with its fix) near the top. */
function fullPass(): DoctorResult[] {
  const check = (category: DoctorCheckInfo['category'], name: string): DoctorCheckInfo => ({
    id: `${category}.${name}`,
    category,
    severity: 'required',
    title: name,
  });
  const ok = (info: DoctorCheckInfo) => result(info, 'ok', `${info.id} fine`);
  return [
    ...['git', 'node', 'tmux', 'npm', 'claude'].map((n) => ok(check('tools', n))),
    ok(check('pi', 'version')),
    result(check('pi', 'models'), 'warn', 'no model answers: pi has no provider key', 'factory init'),
    ok(check('pi', 'binary')),
    ...['settings', 'rules', 'ext.a', 'ext.b', 'ext.c', 'ext.d', 'ext.e', 'ext.f'].map((n) => ok(check('node', n))),
    ok(check('repo', 'gates')),
    ok(check('repo', 'brief')),
    ok(check('models', 'routes')),
    ...['battery', 'lens', 'spot'].map((n) => ok(check('tests', n))),
  ];
}

const PAGE_UP = '\u001B[5~';
const PAGE_DOWN = '\u001B[6~';

describe('DoctorScreen at 80×24', () => {
  async function finishedAt80x24(): Promise<{ ui: InkHarness; store: DoctorStore }> {
    const store = createDoctorStore();
    const ui = await mount(store, recorder(), { columns: 80, rows: 24 });
    const results = fullPass();
    const { dispatch } = store.getState();
    dispatch({ type: 'begin', generation: 1 });
    dispatch({ type: 'planned', generation: 1, checks: results });
    dispatch({ type: 'finished', generation: 1, results });
    await ui.waitForFrame('21 ok, 1 warning');
    return { ui, store };
  }
  const body = (ui: InkHarness) => ui.lines().slice(2, ui.lines().findIndex((l) => l.startsWith('21 ok')) - 1);

  it('fits the terminal and opens on the first warning', async () => {
    const { ui } = await finishedAt80x24();
    // 22 rows, 6 headings and one fix line: 29 lines of checklist do not fit 24 rows with the chrome.
    expect(ui.lines().length).toBeLessThan(24);
    expect(body(ui)[0]).toMatch(/^ {2}! pi\.models\s+no model answers/);
    expect(body(ui)[1]).toMatch(/fix: factory init$/);
    expect(ui.lines()[0]).toBe('factory · doctor · lines 9–26 of 29');
    expect(ui.lastFrame()).not.toContain('tools.git');
    expect(ui.lastFrame()).not.toContain('tests.spot');
    expect(ui.lastFrame()).toContain('↑/k/↓/j scroll · PgUp/PgDn page · g top · G end · r re-run · q/esc/ctrl-c quit');
  });

  it('scrolls with g, G, k, j, the arrows, PgUp and PgDn', async () => {
    const { ui } = await finishedAt80x24();
    const page = body(ui).length;
    expect(page).toBe(24 - 6);
    await ui.press('g');
    await waitFor(() => body(ui)[0] === 'tools', { describe: () => ui.lastFrame() });
    expect(body(ui)[1]).toMatch(/tools\.git/);
    expect(ui.lastFrame()).not.toContain('tests.battery');
    await ui.press('j');
    await waitFor(() => /tools\.git/.test(body(ui)[0] ?? ''), { describe: () => ui.lastFrame() });
    await ui.press(KEYS.down);
    await waitFor(() => /tools\.node/.test(body(ui)[0] ?? ''), { describe: () => ui.lastFrame() });
    await ui.press(KEYS.up);
    await ui.press('k');
    await waitFor(() => body(ui)[0] === 'tools', { describe: () => ui.lastFrame() });
    await ui.press('k'); // already at the top
    expect(body(ui)[0]).toBe('tools');
    await ui.press(PAGE_DOWN);
    // A page down from the top would start at the last line of the first page; the end comes sooner.
    await waitFor(() => ui.lines()[0] === `factory · doctor · lines ${29 - page + 1}–29 of 29`, {
      describe: () => ui.lastFrame(),
    });
    await ui.press(PAGE_UP);
    await waitFor(() => body(ui)[0] === 'tools', { describe: () => ui.lastFrame() });
    await ui.press('G');
    await waitFor(() => /tests\.spot/.test(body(ui).at(-1) ?? ''), { describe: () => ui.lastFrame() });
    expect(ui.lines()[0]).toBe(`factory · doctor · lines ${29 - page + 1}–29 of 29`);
    await ui.press('j'); // already at the end
    expect(ui.lines()[0]).toBe(`factory · doctor · lines ${29 - page + 1}–29 of 29`);
  });

  it('a fix longer than its line wraps under its row, whole (none ends mid-sentence), and G reaches its last line', async () => {
    const store = createDoctorStore();
    const ui = await mount(store, recorder(), { columns: 80, rows: 24 });
    const long =
      "cd '/home/dev/.nvm/versions/node/v22.23.5/lib/node_modules/factory-cockpit' && PATH='/home/dev/.nvm/versions/node/v22.23.5/bin':$PATH npm rebuild better-sqlite3 (rebuilds it for Node 22.23.5; or run the cockpit on the Node it was installed with)";
    const results = fullPass().map((r) =>
      r.id === 'tests.spot' ? { ...r, status: 'fail' as const, detail: 'broken', fix: long } : r,
    );
    const { dispatch } = store.getState();
    dispatch({ type: 'begin', generation: 1 });
    dispatch({ type: 'planned', generation: 1, checks: results });
    dispatch({ type: 'finished', generation: 1, results });
    await ui.waitForFrame('1 failed');
    await ui.press('G');
    await waitFor(() => ui.lastFrame().includes('installed with)'), { describe: () => ui.lastFrame() });
    const fix = ui
      .lines()
      .slice(ui.lines().findIndex((l) => /fix: cd /.test(l)))
      .filter((l) => /^\s{10,}\S/.test(l));
    expect(fix.length).toBeGreaterThan(2);
    expect(
      fix
        .map((l) => l.trim().replace(/^fix: /, ''))
        .join('')
        .replace(/\s+/g, ''),
    ).toBe(long.replace(/\s+/g, ''));
    for (const line of ui.lines()) expect([...line].length).toBeLessThanOrEqual(80);
  });

  it('a window the user moved during the pass stays where they put it; a re-run opens on the problem again', async () => {
    const store = createDoctorStore();
    const controller = recorder();
    const ui = await mount(store, controller, { columns: 80, rows: 24 });
    const results = fullPass();
    const { dispatch } = store.getState();
    dispatch({ type: 'begin', generation: 1 });
    dispatch({ type: 'planned', generation: 1, checks: results });
    await ui.waitForFrame('tools.git');
    await ui.press('j');
    await ui.press('j');
    dispatch({ type: 'finished', generation: 1, results });
    await ui.waitForFrame('21 ok, 1 warning');
    expect(body(ui)[0]).toMatch(/tools\.node/);
    await ui.press('r');
    await waitFor(() => controller.calls.includes('rerun'));
    dispatch({ type: 'begin', generation: 2 });
    dispatch({ type: 'finished', generation: 2, results });
    await waitFor(() => /pi\.models/.test(body(ui)[0] ?? ''), { describe: () => ui.lastFrame() });
  });

  it('a pass that fits the terminal shows every line and no window note', async () => {
    const store = createDoctorStore();
    const ui = await mount(store, recorder(), { columns: 80, rows: 24 });
    const { dispatch } = store.getState();
    dispatch({ type: 'begin', generation: 1 });
    dispatch({ type: 'finished', generation: 1, results: PLAN.map((c) => result(c, 'warn', 'meh', 'fix it')) });
    await ui.waitForFrame('0 ok, 4 warnings');
    expect(ui.lines()[0]).toBe('factory · doctor');
    expect(body(ui)[0]).toBe('tools');
    await ui.press('G');
    expect(body(ui)[0]).toBe('tools');
  });
});

describe('HomeScreen: d opens the doctor', () => {
  it('calls the controller', async () => {
    const calls: string[] = [];
    const controller: HomeController = {
      listRuns: async () => [],
      runEvents: async () => [],
      resume: () => {},
      quit: () => {},
      doctor: () => calls.push('doctor'),
    };
    const home = await screens.mount(<HomeScreen store={createHomeStore()} controller={controller} />);
    await home.waitForFrame('d doctor');
    await home.press('d');
    await waitFor(() => calls.includes('doctor'));
  });
});
