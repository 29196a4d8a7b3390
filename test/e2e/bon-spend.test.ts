// Spend control and race policies of best-of-N through the real pi and the scripted model: the forecast before the
// fan-out, an arm's cap (a wrap-up steer at 80 %, then RPC abort: verdict budget, the others go on), the run's cap
// (the batch stops, the harvest ranks what exists, exit 3), a pause at the cap raised from the board, a forecast
// above the roster's threshold, --stop-after-green and --deadline. Every figure checked against what the scripted
// model billed, request by request.
import { afterEach, describe, expect, it } from 'vitest';
import { bonTapes } from '../../src/commands/demo.js';
import type { RunEvent } from '../../src/contract/events.js';
import { DEFAULT_SCRIPTED_MODELS } from '../../src/scripted/agentDir.js';
import type { RecordedRequest } from '../../src/scripted/server.js';
import { call, contentText, countPromptTokens, type Step, type Tapes } from '../../src/scripted/tape.js';
import { bonBench, requestsLog, runBon, treeStatus, until, type BonBench } from '../helpers/bon.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { attachTrace, type AttachedTrace } from '../../src/cli/attachTrace.js';
import { runsOutput, showOutput } from '../../src/commands/runs.js';
import { formatCost } from '../../src/contract/format.js';

const ROSTER = 'adws/adw_config/factory.config.yaml';
const DEMO_ROSTER =
  'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node --test\n      timeout: 60\n';

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

/** What one request cost at the scripted model's prices (dollars). */
function billedUsd(request: RecordedRequest, model: string): number {
  const prices = DEFAULT_SCRIPTED_MODELS.find((m) => m.id === model)!.cost;
  const b = request.billed!;
  return (
    ((b.prompt - b.cached) * prices.input +
      b.cached * (prices.cacheRead ?? prices.input) +
      b.completion * prices.output) /
    1e6
  );
}

/** `n` cheap tool calls before the tape's own steps: an arm that keeps working (and spending); `sleep` s each. */
function busy(n: number, then: Step[], sleep = 0): Step[] {
  const command = (i: number) => (sleep > 0 ? `sleep ${sleep}; echo step ${i + 1}` : `echo step ${i + 1}`);
  return [...Array.from({ length: n }, (_, i) => call('bash', { command: command(i) })), ...then];
}

const ranks = (events: RunEvent[]) =>
  (events.find((e) => e.type === 'harvest') as Extract<RunEvent, { type: 'harvest' }> | undefined)?.ranking ?? [];
const armOf = (events: RunEvent[], arm: number) => ranks(events).find((r) => r.arm === arm);

describe('bon spend control (real pi, scripted model)', () => {
  it('forecasts the fan-out before any arm starts; with no past run its range holds what the arms then spend', async () => {
    bench = await bonBench(bonTapes(0));
    const out = await runBon(bench);
    expect(out.exit).toBe(0);
    const at = out.events.findIndex((e) => e.type === 'forecast');
    const firstArm = out.events.findIndex((e) => e.type === 'attempt_started' && e.phase.startsWith('arm_'));
    expect(at).toBeGreaterThan(-1);
    expect(at).toBeLessThan(firstArm);
    const { forecast } = out.events[at] as Extract<RunEvent, { type: 'forecast' }>;
    expect(forecast.perArm.map((a) => a.model)).toEqual(['scripted/alpha', 'scripted/beta', 'scripted/gamma']);
    const spent = ranks(out.events).reduce((sum, r) => sum + r.cost, 0);
    // The demo's arms make two or three calls, at the low end of a first run's range (an arm on a real library makes
    // more: the range is built for that); a second run goes by the first's arms (test/e2e/bon-forecast.test.ts).
    expect(forecast.pastArms).toBe(0);
    expect(forecast.total.low - forecast.primer).toBeLessThanOrEqual(spent);
    expect(forecast.total.high - forecast.primer).toBeGreaterThanOrEqual(spent);
    for (const a of forecast.perArm)
      expect(a.low).toBeLessThanOrEqual(a.mid), expect(a.mid).toBeLessThanOrEqual(a.high);
  });

  it('an arm at its cap is told to wrap up at 80 %, then aborted: verdict budget, overshoot under one call, the others go on', async () => {
    const demo = bonTapes(0);
    bench = await bonBench(
      { ...demo, 'model:alpha': [...demo['model:alpha']!.slice(0, 2), ...busy(14, demo['model:alpha']!.slice(2))] },
      { [ROSTER]: `${DEMO_ROSTER}bon:\n  arm_max_cost: 0.02\n` },
    );
    const out = await runBon(bench);
    const alpha = armOf(out.events, 1)!;
    expect(alpha.green).toBe(false);
    expect(alpha.failure).toBe('budget');
    expect(alpha.motif).toMatch(/^budget: the arm spent \$[\d.]+, its cap is \$0\.02/);
    // The arm's requests after the primer's: the wrap-up word reached its live session before the cap.
    const requests = bench.rig.model
      .requestsFor('model:alpha')
      .filter((r) => r.session !== undefined && r.session !== out.session.primer.sessionId);
    const steered = requests.findIndex((r) =>
      (r.body.messages ?? []).some(
        (m) => m.role === 'user' && contentText(m.content).includes('Budget notice from the factory'),
      ),
    );
    expect(steered).toBeGreaterThan(0);
    const usd = requests.map((r) => billedUsd(r, 'alpha'));
    // The call that crossed the cap: the first whose running sum reaches it.
    let sum = 0;
    const crossing = usd.findIndex((u) => (sum += u) >= 0.02);
    expect(crossing).toBeGreaterThan(0);
    const counted = usd.slice(0, crossing + 1).reduce((a, b) => a + b, 0);
    expect(alpha.cost).toBeCloseTo(counted, 6);
    // At most one call after it: the one pi had already sent when the abort came (its answer cut short, its usage
    // never reported by pi — the overshoot the README names).
    expect(usd.length - (crossing + 1)).toBeLessThanOrEqual(1);
    const notes = out.events
      .filter((e): e is Extract<RunEvent, { type: 'spend' }> => e.type === 'spend' && e.arm === 1)
      .map((e) => e.kind);
    expect(notes).toEqual(['wrap_up', 'capped']);
    // The other arms were never held: beta green (the winner), gamma green.
    const others = `${JSON.stringify([armOf(out.events, 2), armOf(out.events, 3)])}\n${requestsLog(bench.rig.model)}`;
    expect(armOf(out.events, 2)?.green, others).toBe(true);
    expect(armOf(out.events, 3)?.green, others).toBe(true);
    expect(out.exit).toBe(0);
  });

  it('the run cap stops the batch: the arms at work end budget, the harvest ranks what exists, exit 3', async () => {
    const demo = bonTapes(0);
    // alpha and gamma keep working (a few tenths of a second per step): beta's two calls and its gate end first.
    bench = await bonBench({
      ...demo,
      'model:gamma': busy(30, demo['model:gamma']!, 0.3),
      'model:alpha': [...demo['model:alpha']!.slice(0, 2), ...busy(30, demo['model:alpha']!.slice(2), 0.3)],
    });
    const out = await runBon(bench, { args: { maxCost: 0.04, yes: true } });
    expect(out.exit).toBe(3);
    const stop = out.events.find((e) => e.type === 'race_stop') as Extract<RunEvent, { type: 'race_stop' }>;
    expect(stop.kind).toBe('budget');
    expect(stop.motif).toBe('budget: the run reached its cap of $0.04 (--max-cost) — the batch stopped');
    expect(ranks(out.events)).toHaveLength(3);
    expect(armOf(out.events, 1)?.failure).toBe('budget');
    expect(armOf(out.events, 3)?.failure).toBe('budget');
    // beta's two calls fit under the cap: its green work is ranked and proposed.
    expect(armOf(out.events, 2)?.green).toBe(true);
    const finished = out.events.at(-1) as Extract<RunEvent, { type: 'run_finished' }>;
    expect(finished.type).toBe('run_finished');
    expect(finished.budget).toBe(`budget: the run spent ${formatCost(finished.cost)}, its cap is $0.04 (--max-cost)`);
  });

  it("the run's cap shared by three arms at once is passed by one model call at most; every place gives the same total", async () => {
    const demo = bonTapes(0);
    // Slow answers (each call takes 0.4 s at the model): the three arms have calls in flight together all along.
    const slowly = (steps: Step[]) => steps.map((step) => (step.kind === 'tools' ? { ...step, thinkMs: 400 } : step));
    bench = await bonBench({
      'model:alpha': [...demo['model:alpha']!.slice(0, 2), ...slowly(busy(40, demo['model:alpha']!.slice(2)))],
      'model:beta': slowly(busy(40, demo['model:beta']!)),
      'model:gamma': slowly(busy(40, demo['model:gamma']!)),
    });
    let trace: AttachedTrace | undefined;
    const cap = 0.05;
    const out = await runBon(bench, {
      args: { maxCost: cap, yes: true },
      onPrepared: (prepared) => (trace = attachTrace(prepared.run, prepared.workspace.paths, () => undefined)),
    });
    await trace!.close();
    expect(out.exit).toBe(3);
    // What the model billed, request by request: the truth every figure is held to. A request cut mid-answer is
    // billed its prompt by a real provider (the scripted model bills only what it finished): counted so here.
    const modelOf = (r: RecordedRequest) => DEFAULT_SCRIPTED_MODELS.find((m) => m.id === r.tape.replace('model:', ''))!;
    const billed = bench.rig.model.requests.filter((r) => r.billed).map((r) => billedUsd(r, modelOf(r).id));
    const cut = bench.rig.model.requests
      .filter((r) => !r.billed)
      .map((r) => (countPromptTokens(r.body) * modelOf(r).cost.input) / 1e6);
    const truth = [...billed, ...cut].reduce((a, b) => a + b, 0);
    expect(truth).toBeGreaterThanOrEqual(cap);
    expect(truth).toBeLessThanOrEqual(cap + Math.max(...billed) + 1e-9);
    // No call was cut: a budget stop lets the calls it already paid for come in, and none starts after it.
    expect(cut).toEqual([]);
    const finished = out.events.at(-1) as Extract<RunEvent, { type: 'run_finished' }>;
    expect(finished.cost).toBeCloseTo(truth, 6);
    const total = formatCost(finished.cost);
    // The cap line, the final line, harvest.json, `runs --json` and `show` give that one total.
    const capped = out.events.filter(
      (e): e is Extract<RunEvent, { type: 'spend' }> => e.type === 'spend' && e.kind === 'capped' && e.scope === 'run',
    );
    expect(capped.map((e) => formatCost(e.spent))).toEqual([total]);
    expect(finished.budget).toBe(`budget: the run spent ${total}, its cap is $0.05 (--max-cost)`);
    const harvest = out.events.find((e) => e.type === 'harvest') as Extract<RunEvent, { type: 'harvest' }>;
    const json = JSON.parse(fs.readFileSync(harvest.harvestFile, 'utf8')) as { run: { cost_usd: number }; why: string };
    expect(json.run.cost_usd).toBeCloseTo(finished.cost, 9);
    expect(harvest.why).toBe(json.why); // one ranking: the event and the file say the same why
    const paths = out.prepared.workspace.paths;
    const runs = JSON.parse(await runsOutput(paths, true)) as Array<{ adwId: string; status: string; cost: number }>;
    expect(runs.find((r) => r.adwId === out.session.run.adwId)).toMatchObject({ status: 'budget' });
    expect(runs.find((r) => r.adwId === out.session.run.adwId)!.cost).toBeCloseTo(finished.cost, 9);
    const show = JSON.parse(await showOutput(paths, out.session.run.adwId, true)) as {
      run: { status: string; cost: number };
    };
    expect(show.run.status).toBe('budget');
    expect(show.run.cost).toBeCloseTo(finished.cost, 9);
    expect(await showOutput(paths, out.session.run.adwId, false)).toMatch(
      new RegExp(`^${out.session.run.adwId} · adw_bon · budget( at \\w+)? · .* · \\${total} · `),
    );
  });

  /** Arm `arm`'s tree under the run's worktree base, once it exists. */
  function armTree(b: BonBench, arm: number): string | undefined {
    const base = b.env.FACTORY_WORKTREES!;
    const list = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);
    for (const repo of list(base))
      for (const run of list(path.join(base, repo))) {
        const dir = path.join(base, repo, run, `arm_${arm}`);
        if (fs.existsSync(dir)) return dir;
      }
    return undefined;
  }

  /** Whether arm 2's gate has started: the file it writes in its tree. */
  function gateStarted(b: BonBench): boolean {
    const tree = armTree(b, 2);
    return tree !== undefined && fs.existsSync(path.join(tree, 'gate-started'));
  }

  it("an arm whose turn ended before the run's cap is gated and ranked on its work, not red: budget", async () => {
    const demo = bonTapes(0);
    const signals = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-spend-gate-'));
    const go = path.join(signals, 'go');
    try {
      // Arm 2's gate says it started (in its own tree: the sandbox lets it write nowhere else), then waits for the
      // word (a file it can read): the cap is crossed while it runs, by events.
      const waiter = `const fs = require('node:fs'); if (process.env.FACTORY_ARM === '2') { fs.writeFileSync('gate-started', ''); const t = setInterval(() => fs.existsSync(${JSON.stringify(go)}) && clearInterval(t), 20); }\n`;
      // Arm 1 first waits in a tool of its own until arm 2 is in its gate (the test writes `go-1` beside `go`, by its
      // absolute path: an arm's shell may be shown at the primer's folder, not its own tree),
      // then makes a dear call (5000 output tokens at $15/M: $0.075): alone it crosses the cap. It waits in a tool,
      // not in a model call held at the server: a held call keeps its room reserved, and on a busy machine arm 2's
      // own calls then waited for that room, behind the call that waited for arm 2 — until arm 1 read `stalled`.
      const goOne = path.join(signals, 'go-1');
      const wait = call('bash', { command: `while [ ! -e ${JSON.stringify(goOne)} ]; do sleep 0.05; done` });
      const dear = call('bash', { command: 'echo dear' }, { usage: { completion: 5000 } });
      bench = await bonBench(
        {
          ...demo,
          'model:gamma': busy(4, demo['model:gamma']!, 15),
          'model:alpha': [...demo['model:alpha']!.slice(0, 2), wait, dear, ...demo['model:alpha']!.slice(2)],
        },
        {
          'gate-wait.cjs': waiter,
          [ROSTER]:
            'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node gate-wait.cjs && node --test\n      timeout: 120\n',
        },
      );
      const out = await runBon(bench, {
        args: { maxCost: 0.05, yes: true },
        onEvent: (e) => {
          if (e.type === 'phase_ok' && e.phase === 'prime')
            void until('arm 2 in its gate', () => gateStarted(bench!), 240_000).then(() => fs.writeFileSync(goOne, ''));
          if (e.type === 'race_stop') fs.writeFileSync(go, '');
        },
      });
      expect(fs.existsSync(go)).toBe(true);
      const beta = armOf(out.events, 2)!;
      expect(beta.green, beta.motif).toBe(true);
      expect(armOf(out.events, 1)?.failure).toBe('budget');
      expect(out.events.find((e) => e.type === 'harvest')).toMatchObject({ winner: 2 });
      expect(out.exit).toBe(3);
    } finally {
      fs.rmSync(signals, { recursive: true, force: true });
    }
  });

  it('watched, an arm at its cap pauses; + raises it and it goes on in its session to green', async () => {
    const demo = bonTapes(0);
    const beta = demo['model:beta']!;
    bench = await bonBench(
      { ...demo, 'model:beta': busy(8, beta) },
      { [ROSTER]: `${DEMO_ROSTER}bon:\n  arm_max_cost: 0.004\n` },
    );
    const out = await runBon(bench, {
      watched: true,
      onEvent: (e, session) => {
        if (e.type === 'spend' && e.kind === 'paused') expect(session.raiseArm(e.arm!)).toBeUndefined();
      },
    });
    const kinds = out.events
      .filter((e): e is Extract<RunEvent, { type: 'spend' }> => e.type === 'spend' && e.arm === 2)
      .map((e) => e.kind);
    expect(kinds.slice(0, 4)).toEqual(['wrap_up', 'capped', 'paused', 'raised']);
    const beta2 = armOf(out.events, 2)!;
    expect(beta2.green, beta2.motif).toBe(true);
    // The raise went on in the same session: one conversation, the go-on ask in it.
    const requests = bench.rig.model.requestsFor('model:beta');
    expect(new Set(requests.map((r) => r.session)).size).toBe(1);
    expect(
      requests.some((r) =>
        (r.body.messages ?? []).some(
          (m) => m.role === 'user' && contentText(m.content).startsWith('Your budget was raised'),
        ),
      ),
    ).toBe(true);
    // Every call counted, but for at most the one in flight when the cap's abort came (pi reports no usage for it).
    const usd = requests.map((r) => billedUsd(r, 'beta'));
    const total = usd.reduce((a, b) => a + b, 0);
    expect(beta2.cost).toBeLessThanOrEqual(total + 1e-9);
    expect(total - beta2.cost).toBeLessThanOrEqual(Math.max(...usd) + 1e-9);
  });

  it('a forecast above bon.confirm_above stops headless before any arm (exit 3, no arm token); --yes goes on', async () => {
    bench = await bonBench(bonTapes(0), { [ROSTER]: `${DEMO_ROSTER}bon:\n  confirm_above: 0.001\n` });
    const refused = await runBon(bench);
    expect(refused.exit).toBe(3);
    const forecast = refused.events.find((e) => e.type === 'forecast') as Extract<RunEvent, { type: 'forecast' }>;
    expect(forecast.confirm).toBe(true);
    expect(refused.events.some((e) => e.type === 'attempt_started' && e.phase.startsWith('arm_'))).toBe(false);
    expect(bench.rig.model.requestsFor('model:beta')).toHaveLength(0);
    const failed = refused.events.find((e) => e.type === 'phase_failed' && e.phase === 'prime') as Extract<
      RunEvent,
      { type: 'phase_failed' }
    >;
    expect(failed.motif).toMatch(/^forecast ~\$[\d.]+ is above bon\.confirm_above \$0\.001: pass --yes to fan out/);
    await bench.cleanup();
    // A fresh model: the refused run's primer took the alpha tape's first steps.
    bench = await bonBench(bonTapes(0), { [ROSTER]: `${DEMO_ROSTER}bon:\n  confirm_above: 0.001\n` });
    const yes = await runBon(bench, { args: { yes: true } });
    expect(yes.exit).toBe(0);
  });
});

describe('bon: a forecast above the run cap (real pi, scripted model)', () => {
  it('is said before the fan-out: headless, no arm starts without --yes (exit 3); the line names the cap', async () => {
    bench = await bonBench(bonTapes(0));
    // Above the primer's own cost (~$0.011), below what the fan-out is forecast to add to it.
    const refused = await runBon(bench, { args: { maxCost: 0.02 } });
    expect(refused.exit).toBe(3);
    const forecast = refused.events.find((e) => e.type === 'forecast') as Extract<RunEvent, { type: 'forecast' }>;
    expect([forecast.confirm, forecast.cap]).toEqual([true, 0.02]);
    expect(forecast.forecast.total.mid).toBeGreaterThan(0.02);
    expect(refused.events.some((e) => e.type === 'attempt_started' && e.phase.startsWith('arm_'))).toBe(false);
    expect(bench.rig.model.requestsFor('model:beta')).toHaveLength(0);
    const failed = refused.events.find((e) => e.type === 'phase_failed' && e.phase === 'prime') as Extract<
      RunEvent,
      { type: 'phase_failed' }
    >;
    expect(failed.motif).toMatch(
      /^forecast ~\$[\d.]+ is above the run's cap \$0\.02 \(--max-cost\): pass --yes to fan out/,
    );
  });
});

describe('bon: a message from the board into a running arm (real pi, scripted model)', () => {
  it("steerArm puts the user's words into the arm's live session before its next model call; an arm that ended takes none", async () => {
    const demo = bonTapes(0);
    // Gamma's first tool waits until pi has taken the words (the arm's "you:" line): no race with a sleep's length.
    const flag = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'steer-')), 'taken');
    try {
      bench = await bonBench({
        ...demo,
        'model:gamma': [call('bash', { command: `until [ -f ${flag} ]; do sleep 0.1; done` }), ...demo['model:gamma']!],
      });
      // What each steer answered: arm 3's at its first bash, arm 2's once it ended (in whichever order they come: the
      // arms' pi start one after another, and arm 2 may well end before arm 3's first tool).
      const said: { 2?: string; 3?: string } = {};
      let steered = false;
      const out = await runBon(bench, {
        onEvent: (e, session) => {
          if (
            e.type === 'activity' &&
            e.phase === 'arm_3' &&
            e.activity.kind === 'tool_start' &&
            e.activity.tool === 'bash' &&
            !steered
          ) {
            steered = true;
            said[3] = session.steerArm(3, 'Keep the doc comment short, please.');
          }
          if (
            e.type === 'activity' &&
            e.phase === 'arm_3' &&
            e.activity.kind === 'note' &&
            e.activity.text.startsWith('you: ')
          )
            fs.writeFileSync(flag, '');
          if (e.type === 'phase_ok' && e.phase === 'arm_2') said[2] = session.steerArm(2, 'too late');
        },
      });
      expect(out.exit).toBe(0);
      // Each arm's verdict first: a red arm says why, not only that its end was never seen.
      const phasesFailed = out.events.filter((e) => e.type === 'phase_failed').map((e) => JSON.stringify(e));
      const notes = out.events
        .filter((e) => e.type === 'activity' && e.phase === 'arm_3')
        .map((e) => JSON.stringify(e.type === 'activity' ? e.activity : e));
      for (const arm of [2, 3])
        expect(
          armOf(out.events, arm)?.green,
          `arm ${arm}: ${JSON.stringify(armOf(out.events, arm))} ${phasesFailed.join(' ')} said=${JSON.stringify(said)} arm_3: ${notes.join(' ')}`,
        ).toBe(true);
      expect(said).toEqual({ 2: 'arm 2 has no turn running: nothing to steer', 3: undefined });
      expect(steered).toBe(true);
      const gamma = bench.rig.model.requestsFor('model:gamma');
      const carrying = gamma.filter((r) =>
        (r.body.messages ?? []).some(
          (m) => m.role === 'user' && contentText(m.content).includes('Keep the doc comment short, please.'),
        ),
      );
      // Every request after the wait carries it, the first (before it) does not.
      expect(carrying.length).toBe(gamma.length - 1);
      expect(
        out.events.some(
          (e) =>
            e.type === 'activity' &&
            e.phase === 'arm_3' &&
            e.activity.kind === 'note' &&
            e.activity.text === 'you: Keep the doc comment short, please.',
        ),
      ).toBe(true);
    } finally {
      fs.rmSync(path.dirname(flag), { recursive: true, force: true });
    }
  });
});

describe('bon race policies (real pi, scripted model)', () => {
  const slowGamma = (demo: Tapes): Tapes => ({
    ...demo,
    'model:gamma': [call('bash', { command: 'sleep 20' }), ...demo['model:gamma']!],
  });

  it('--stop-after-green 1: once beta is green, gamma is stopped and says why; the harvest ranks what exists', async () => {
    bench = await bonBench(slowGamma(bonTapes(0)));
    const out = await runBon(bench, { args: { stopAfterGreen: 1 } });
    expect(out.exit).toBe(0);
    const gamma = armOf(out.events, 3)!;
    expect(gamma.failure).toBe('race');
    expect(gamma.motif).toBe('stopped: 1 arm already green (--stop-after-green 1)');
    const harvest = out.events.find((e) => e.type === 'harvest') as Extract<RunEvent, { type: 'harvest' }>;
    expect(harvest.winner).toBe(2);
    // Stopped mid-sleep: gamma never reached its write, its patch is empty.
    expect(gamma.patchBytes).toBe(0);
  });

  it('--in-place --stop-after-green 1: arm 2 green ends the race before arm 3 starts (no token, no patch), the tree is clean', async () => {
    bench = await bonBench(bonTapes(0));
    const out = await runBon(bench, { inPlace: true, args: { stopAfterGreen: 1 } });
    expect(out.exit).toBe(0);
    const gamma = armOf(out.events, 3)!;
    expect([gamma.failure, gamma.motif, gamma.tokens]).toEqual([
      'race',
      'stopped: 1 arm already green (--stop-after-green 1)',
      0,
    ]);
    expect(out.events.some((e) => e.type === 'attempt_started' && e.phase === 'arm_3')).toBe(false);
    expect(bench.rig.model.requestsFor('model:gamma')).toHaveLength(0);
    expect(treeStatus(bench.dir)).toBe('');
  });

  it('--deadline: the arms still at work when it passes are stopped (race), the others keep their verdicts', async () => {
    // No wall time: the deadline's clock is the test's. Arm 3's first request is held at the model; once arms 1
    // and 2 have their verdicts and that request is there, the deadline passes.
    bench = await bonBench(bonTapes(0));
    let fire: (() => void) | undefined;
    const held = bench.rig.model.hold('model:gamma');
    const settled = new Set<string>();
    let gammaWaits = false;
    const maybeFire = () => {
      if (settled.has('arm_1') && settled.has('arm_2') && gammaWaits) fire?.();
    };
    void held.arrived.then(() => {
      gammaWaits = true;
      maybeFire();
    });
    try {
      const out = await runBon(bench, {
        args: { deadlineMs: 20 * 60_000 },
        onPrepared: (prepared) => {
          prepared.session.spend.clock = (ms, go) => {
            expect(ms).toBe(20 * 60_000);
            fire = go;
            return () => (fire = undefined);
          };
        },
        onEvent: (e) => {
          if ((e.type === 'phase_ok' || e.type === 'phase_failed') && (e.phase === 'arm_1' || e.phase === 'arm_2')) {
            settled.add(e.phase);
            maybeFire();
          }
        },
      });
      const gamma = armOf(out.events, 3)!;
      expect(gamma.failure).toBe('race');
      expect(gamma.motif).toBe("stopped: the run's deadline (20m) passed");
      // The arms that ended before it keep their verdicts: beta green (the winner), alpha as it was judged.
      expect(armOf(out.events, 2)?.green).toBe(true);
      expect(armOf(out.events, 1)?.failure).not.toBe('race');
      expect(out.events.find((e) => e.type === 'harvest')).toMatchObject({ winner: 2 });
      // Stopped before its first answer: gamma billed nothing and wrote nothing.
      expect(bench.rig.model.requestsFor('model:gamma').filter((r) => r.billed)).toEqual([]);
      expect(gamma.patchBytes).toBe(0);
      expect(out.exit).toBe(0);
    } finally {
      held.release();
    }
  });
});
