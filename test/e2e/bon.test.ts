// factory bon end to end: the real pi 0.85.1 in RPC mode, the factory's pi node, the scripted model (one tape
// per model: `model:alpha|beta|gamma`), the demo's payload (a spec, a node:test test, the roster's gate
// `node --test`) in a temp git repo. Prepared by the command's own code (prepareBonRun), run by the runner.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyArgs, applyOutput } from '../../src/commands/apply.js';
import { openWorkspace } from '../../src/commands/workspace.js';
import { bonTapes } from '../../src/commands/demo.js';
import type { RunEvent } from '../../src/contract/events.js';
import { readLedger } from '../../src/trace/ledger.js';
import { call, hang, report } from '../../src/scripted/tape.js';
import { openTraceStore, type TraceStore } from '../../src/trace/store.js';
import { alive, armRefs, bonBench, headOf, runBon, SPEC, treeStatus, until, type BonBench } from '../helpers/bon.js';
import { cmdline } from '../helpers/processes.js';
import { runCli } from '../helpers/cli.js';
import { ofType, processesTagged } from '../helpers/factory.js';
import { git } from '../helpers/repo.js';
import { outside } from '../helpers/traceFixtures.js';

let bench: BonBench | undefined;
let store: TraceStore | undefined;
/** Processes a failing test may leave behind (an orphaned tool), ended here so they do not outlive the test. */
const leftovers: number[] = [];
afterEach(async () => {
  for (const pid of leftovers.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  store?.close();
  store = undefined;
  await bench?.cleanup();
  bench = undefined;
});

const FAREWELL = 'src/farewell.js';
const GOOD = 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n';
const built = (summary: string) => ({
  status: 'success',
  summary,
  artifacts: [],
  notes_for_next_agent: '',
  changed_files: [FAREWELL],
});
/** A project extension: vetoes every clone once `adws/adw_data/veto-clone` exists (pi runs in the repo). */
const VETO_CLONE = [
  "import fs from 'node:fs';",
  'export default function (pi: { on(event: string, handler: () => unknown): void }) {',
  "  pi.on('session_before_fork', () => (fs.existsSync('adws/adw_data/veto-clone') ? { cancel: true } : undefined));",
  '}',
  '',
].join('\n');
const PRIMER = [
  call('read', { path: SPEC }),
  report({ status: 'success', summary: 'Plan: write src/farewell.js.', changed_files: [] }),
];

function phasesStarted(events: RunEvent[]): string[] {
  return ofType(events, 'phase_started').map((e) => e.phase);
}

function failedMotif(events: RunEvent[], phase: string): string | undefined {
  return ofType(events, 'phase_failed').find((e) => e.phase === phase)?.motif;
}

describe('factory bon through the real pi', () => {
  it('best-of-3 with one red arm: ranked, harvested, tree reset after each arm, losers kept as refs, traced', async () => {
    bench = await bonBench(bonTapes(0));
    const head = headOf(bench.dir);
    const afterArm: { arm: number; status: string; head: string; farewell: boolean }[] = [];
    const { exit, events, prepared } = await runBon(bench, {
      inPlace: true,
      onPrepared: (p) => {
        store = openTraceStore(bench!.paths);
        p.run.subscribe((e) => store!.recordEvent(e));
      },
      // arm_patch is emitted once the arm's tree was harvested and reset: look at the tree right then.
      onEvent: (e) => {
        if (e.type === 'arm_patch')
          afterArm.push({
            arm: e.arm,
            status: treeStatus(bench!.dir),
            head: headOf(bench!.dir),
            farewell: fs.existsSync(path.join(bench!.dir, FAREWELL)),
          });
      },
    });
    const { run } = prepared;
    expect(exit, JSON.stringify(ofType(events, 'phase_failed'))).toBe(0);
    expect(phasesStarted(events)).toEqual(['check', 'prime', 'arm_1', 'arm_2', 'arm_3', 'harvest']);
    expect(afterArm).toEqual([1, 2, 3].map((arm) => ({ arm, status: '', head, farewell: false })));

    // arm_1 (alpha) wrote "Bye": red on the gate; beta and gamma green, beta cheaper.
    expect(failedMotif(events, 'arm_1')).toMatch(/^`node --test` exited 1: .*says goodbye by name/);
    const gates = ofType(events, 'gate_result').map((g) => [g.phase, g.gate, g.ok]);
    expect(gates).toEqual([
      ['arm_1', 'changed_files', true],
      ['arm_1', 'node --test', false],
      ['arm_2', 'changed_files', true],
      ['arm_2', 'node --test', true],
      ['arm_3', 'changed_files', true],
      ['arm_3', 'node --test', true],
    ]);
    const harvest = ofType(events, 'harvest')[0]!;
    expect(harvest.ranking.map((a) => [a.arm, a.model, a.green])).toEqual([
      [2, 'scripted/beta', true],
      [3, 'scripted/gamma', true],
      [1, 'scripted/alpha', false],
    ]);
    expect(harvest.winner).toBe(2);
    expect(harvest.ranking[0]!.cost).toBeLessThan(harvest.ranking[1]!.cost);
    const bonDir = path.join(bench.paths.dataDir, 'bon', run.adwId);
    expect(harvest.applyCommand).toBe(`factory apply ${run.adwId}`);
    expect(prepared.output()).toBe(harvest.applyCommand);

    // harvest.json: the same ranking, the primer paid once, the proposal.
    const json = JSON.parse(fs.readFileSync(path.join(bonDir, 'harvest.json'), 'utf8'));
    expect(json).toMatchObject({ adw_id: run.adwId, spec: SPEC, head, winner: 2, apply_command: harvest.applyCommand });
    expect(json.arms.map((a: { rank: number; arm: number; green: boolean }) => [a.rank, a.arm, a.green])).toEqual([
      [1, 2, true],
      [2, 3, true],
      [3, 1, false],
    ]);
    expect(json.primer.tokens).toBe(harvest.primer.tokens);
    expect(json.primer.tokens).toBeGreaterThan(0);
    expect(json.primer.session_id).toBe(run.sessions.prime);

    // Every arm's patch on disk, each touching only src/farewell.js, with its own content.
    const patches = ofType(events, 'arm_patch');
    expect(patches.map((p) => [p.arm, p.files])).toEqual([
      [1, [FAREWELL]],
      [2, [FAREWELL]],
      [3, [FAREWELL]],
    ]);
    for (const p of patches) expect(fs.statSync(p.patchFile).size).toBe(p.bytes);
    expect(fs.readFileSync(patches[0]!.patchFile, 'utf8')).toContain('+  return `Bye, ${name}.`;');
    expect(fs.readFileSync(patches[1]!.patchFile, 'utf8')).toContain('+  return `Goodbye, ${name}!`;');

    // Losing arms kept as refs (their commit holds the arm's file); the winner is the proposal, not a ref.
    expect(armRefs(bench.dir, run.adwId)).toEqual([
      `refs/factory/${run.adwId}/arm-1`,
      `refs/factory/${run.adwId}/arm-3`,
    ]);
    expect(git(bench.dir, 'show', `refs/factory/${run.adwId}/arm-1:${FAREWELL}`)).toContain('Bye, ${name}.');
    expect(git(bench.dir, 'rev-parse', `refs/factory/${run.adwId}/arm-3^`).trim()).toBe(head);
    // The proposed command (factory apply <id>) works as printed, and what it applies passes the payload's test.
    const [, verb, id] = harvest.applyCommand!.split(' ');
    expect([verb, id]).toEqual(['apply', run.adwId]);
    const ws = await openWorkspace({ retries: 2, ui: false, json: false }, { env: bench.env, cwd: bench.dir });
    expect(await applyOutput(ws, applyArgs([id!]))).toMatchObject({ exit: 0 });
    expect(git(bench.dir, 'diff', '--cached', '--name-only').trim()).toBe(FAREWELL);
    expect(fs.readFileSync(path.join(bench.dir, FAREWELL), 'utf8')).toBe(GOOD);

    // One primer, three clones of it, in one process: the ledger declares them in order.
    const ledger = readLedger(bench.paths.ledgerFile);
    expect(ledger.map((l) => [l.phase, l.reason])).toEqual([
      ['prime', undefined],
      ['arm_1', 'clone'],
      ['arm_2', 'clone'],
      ['arm_3', 'clone'],
    ]);
    expect(ledger.map((l) => l.session_id)).toEqual([
      run.sessions.prime,
      run.sessions.arm_1,
      run.sessions.arm_2,
      run.sessions.arm_3,
    ]);
    // Each clone line names that clone's own model (they were one arm behind: the clone was declared before its switch).
    expect(ledger.map((l) => l.model)).toEqual(['scripted/alpha', 'scripted/alpha', 'scripted/beta', 'scripted/gamma']);
    // Each arm's first request carries the primer's reading (it did not read the spec again).
    for (const model of ['beta', 'gamma']) {
      const first = bench.rig.model.requestsFor(`model:${model}`)[0]!;
      expect(JSON.stringify(first.body.messages)).toContain('Plan: add src/farewell.js');
    }
    expect(processesTagged(run.adwId)).toEqual([]);

    // The trace: the SPEC 3.9 query shows the primer once and each arm with their figures; N + 1 sessions.
    expect(store!.syncAll().ok).toBe(true);
    const db = outside(bench.paths);
    try {
      const rows = db
        .prepare(
          "SELECT name, status, tokens, cost_usd FROM phases WHERE adw_id = (SELECT adw_id FROM runs WHERE adw_name = 'adw_bon' ORDER BY started_at DESC LIMIT 1) ORDER BY seq;",
        )
        .all() as { name: string; status: string; tokens: number; cost_usd: number }[];
      expect(rows.map((r) => [r.name, r.status])).toEqual([
        ['check', 'ok'],
        ['prime', 'ok'],
        ['arm_1', 'failed'],
        ['arm_2', 'ok'],
        ['arm_3', 'ok'],
        ['harvest', 'ok'],
      ]);
      for (const r of rows.filter((r) => r.name === 'prime' || r.name.startsWith('arm_'))) {
        expect(r.tokens, r.name).toBeGreaterThan(0);
        expect(r.cost_usd, r.name).toBeGreaterThan(0);
      }
      expect(rows.find((r) => r.name === 'prime')!.tokens).toBe(harvest.primer.tokens);
      expect(rows.reduce((sum, r) => sum + r.tokens, 0)).toBe(run.tokens);
      const sessions = db
        .prepare('SELECT COUNT(DISTINCT session_id) FROM harness_by_phase WHERE adw_id = ?')
        .pluck()
        .get(run.adwId);
      expect(sessions).toBe(3 + 1);
      const perPhase = db
        .prepare(
          'SELECT phase, COUNT(DISTINCT session_id) AS n FROM harness_by_phase WHERE adw_id = ? GROUP BY phase ORDER BY phase',
        )
        .all(run.adwId);
      expect(perPhase).toEqual([
        { phase: 'arm_1', n: 1 },
        { phase: 'arm_2', n: 1 },
        { phase: 'arm_3', n: 1 },
        { phase: 'prime', n: 1 },
      ]);
    } finally {
      db.close();
    }
  });

  it('a clone that fails stops the batch (exit 2); the arm is still harvested, the tree reset, pi closed', async () => {
    // A real project extension of the payload cancels pi's clone once the marker exists (pi's own
    // `session_before_fork` veto): PiRpc.clone then fails, as it would on any refusal of pi.
    bench = await bonBench(
      { 'model:alpha': [...PRIMER, call('write', { path: FAREWELL, content: GOOD }), report(built('done'))] },
      { '.pi/extensions/veto-clone.ts': VETO_CLONE },
    );
    let piPid = 0;
    let piAliveAtFailure = false;
    const { exit, events, prepared } = await runBon(bench, {
      inPlace: true,
      onEvent: (e, session) => {
        if (e.type === 'phase_started' && e.phase === 'arm_2') {
          fs.writeFileSync(path.join(bench!.paths.dataDir, 'veto-clone'), '');
          // Stands for work an arm left in the tree before it failed: the finally must harvest and reset it.
          fs.writeFileSync(path.join(bench!.dir, FAREWELL), 'left by a half-started arm\n');
          piPid = session.rpc!.pid;
        }
        if (e.type === 'phase_failed' && e.phase === 'arm_2') piAliveAtFailure = alive(piPid);
      },
    });
    expect(exit).toBe(2);
    expect(failedMotif(events, 'arm_2')).toBe('clone for arm_2 failed: clone cancelled by an extension');
    expect(phasesStarted(events)).toEqual(['check', 'prime', 'arm_1', 'arm_2']);
    expect(ofType(events, 'run_finished')[0]).toMatchObject({ exit: 2, failedPhase: 'arm_2' });
    // The finally still harvested arm_2's tree and reset it.
    expect(ofType(events, 'arm_patch').map((p) => [p.arm, p.files])).toEqual([
      [1, [FAREWELL]],
      [2, [FAREWELL]],
    ]);
    expect(treeStatus(bench.dir)).toBe('');
    // pi was alive when the batch stopped; the command's close() ended it, and nothing is left.
    expect(piAliveAtFailure).toBe(true);
    expect(alive(piPid)).toBe(false);
    expect(processesTagged(prepared.run.adwId)).toEqual([]);
    expect(bench.rig.model.requestsFor('model:beta')).toHaveLength(0);
  });

  it('abortArm(1) while arm 1 is at the model: arm 1 red "aborted", arm 2 runs in the same pi and wins', async () => {
    bench = await bonBench({
      'model:alpha': [...PRIMER, hang()],
      'model:beta': [call('write', { path: FAREWELL, content: GOOD }), report(built('done'))],
    });
    let aborted: Promise<void> | undefined;
    const { exit, events, prepared } = await runBon(bench, {
      inPlace: true,
      models: ['scripted/alpha', 'scripted/beta'],
      onEvent: (e, session) => {
        if (e.type === 'attempt_started' && e.phase === 'arm_1') {
          // The key `a`: once arm 1's request hangs at the model.
          aborted = until('arm 1 at the model', () => bench!.rig.model.requestsFor('model:alpha').length === 3).then(
            () => session.abortArm(1),
          );
        }
      },
    });
    await aborted;
    expect(exit).toBe(0);
    expect(failedMotif(events, 'arm_1')).toMatch(/^aborted: aborted by the user/);
    expect(phasesStarted(events)).toEqual(['check', 'prime', 'arm_1', 'arm_2', 'harvest']);
    const harvest = ofType(events, 'harvest')[0]!;
    expect(harvest.winner).toBe(2);
    expect(harvest.ranking.map((a) => [a.arm, a.green])).toEqual([
      [2, true],
      [1, false],
    ]);
    // No reopen: the same process cloned arm 2 (the ledger declares one primer).
    expect(readLedger(bench.paths.ledgerFile).map((l) => l.phase)).toEqual(['prime', 'arm_1', 'arm_2']);
    expect(treeStatus(bench.dir)).toBe('');
    expect(processesTagged(prepared.run.adwId)).toEqual([]);
  });

  it('addArm() during the run plans arms 4 and 5 before the harvest; a 6th and any after the harvest are refused', async () => {
    const tapes = bonTapes(0);
    tapes['model:alpha']!.push(call('write', { path: FAREWELL, content: GOOD }), report(built('arm 4')));
    tapes['model:beta']!.push(call('write', { path: FAREWELL, content: GOOD }), report(built('arm 5')));
    bench = await bonBench(tapes);
    const answers: (string | undefined)[] = [];
    const warnings: string[] = [];
    const { exit, events, session, prepared } = await runBon(bench, {
      inPlace: true,
      onPrepared: (p) => {
        store = openTraceStore(bench!.paths, { onWarning: (w) => warnings.push(w) });
        p.run.subscribe((e) => store!.recordEvent(e));
      },
      onEvent: (e, s) => {
        if (e.type === 'phase_started' && e.phase === 'arm_1') answers.push(s.addArm(), s.addArm(), s.addArm());
      },
    });
    expect(exit).toBe(0);
    expect(answers).toEqual([undefined, undefined, 'already 5 arms: the most a batch takes']);
    expect(ofType(events, 'phase_planned').map((e) => [e.phase.name, e.phase.kind, e.before])).toEqual([
      ['arm_4', 'agent', 'harvest'],
      ['arm_5', 'agent', 'harvest'],
    ]);
    expect(phasesStarted(events)).toEqual(['check', 'prime', 'arm_1', 'arm_2', 'arm_3', 'arm_4', 'arm_5', 'harvest']);
    const harvest = ofType(events, 'harvest')[0]!;
    expect(harvest.ranking.map((a) => [a.arm, a.model, a.green]).sort()).toEqual([
      [1, 'scripted/alpha', false],
      [2, 'scripted/beta', true],
      [3, 'scripted/gamma', true],
      [4, 'scripted/alpha', true],
      [5, 'scripted/beta', true],
    ]);
    expect(readLedger(bench.paths.ledgerFile).filter((l) => l.reason === 'clone')).toHaveLength(5);
    expect(session.addArm()).toBe('the harvest is done: no more arms');
    expect(ofType(events, 'phase_planned')).toHaveLength(2);
    // The trace takes the arms added live (a planned phase's event once failed the insert): the run is green,
    // with its seven phases in the order they ran, the added arms before the harvest.
    store!.flush();
    expect(warnings).toEqual([]);
    expect(store!.listRuns().find((r) => r.adwId === prepared.run.adwId)).toMatchObject({
      status: 'green',
      phases: '8/8',
      phasesTotal: 8,
    });
    expect(store!.phaseRows(prepared.run.adwId).map((p) => [p.name, p.status])).toEqual([
      ['check', 'ok'],
      ['prime', 'ok'],
      ['arm_1', 'failed'],
      ['arm_2', 'ok'],
      ['arm_3', 'ok'],
      ['arm_4', 'ok'],
      ['arm_5', 'ok'],
      ['harvest', 'ok'],
    ]);
  });

  it('a dirty tree is refused by check, naming the file, with zero model requests and nothing lost', async () => {
    bench = await bonBench(bonTapes(0));
    fs.appendFileSync(path.join(bench.dir, 'README.md'), 'my unsaved work\n');
    const { exit, events } = await runBon(bench, { inPlace: true });
    expect(exit).toBe(2); // a refused check is bad input
    expect(failedMotif(events, 'check')).toMatch(/^the work tree is not clean: README\.md \(changed\)/);
    expect(phasesStarted(events)).toEqual(['check']);
    expect(bench.rig.model.requests).toHaveLength(0);
    expect(fs.existsSync(bench.paths.ledgerFile)).toBe(false);
    expect(fs.readFileSync(path.join(bench.dir, 'README.md'), 'utf8')).toContain('my unsaved work');
  });

  it('--arms 6 through the built CLI: exit 2, one line, before anything (no session, no request)', async () => {
    bench = await bonBench(bonTapes(0));
    const r = await runCli(['bon', SPEC, '--arms', '6', '--no-ui'], {
      cwd: bench.dir,
      env: { ...bench.env, CI: 'true' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^factory: --arms 6 is too many: at most 5 arms/),
    ]);
    expect(r.stdout).toBe('');
    expect(bench.rig.model.requests).toHaveLength(0);
    expect(fs.existsSync(bench.paths.sessionsDir)).toBe(false);
  });

  it('pi SIGKILLed while an arm runs `sleep 30`: that arm red "crashed", tree reset, no orphan, pi reopened on the primer for the next arm', async () => {
    bench = await bonBench({
      'model:alpha': [
        ...PRIMER,
        call('write', { path: FAREWELL, content: 'half done\n' }),
        call('bash', { command: 'sleep 30' }),
      ],
      'model:beta': [call('write', { path: FAREWELL, content: GOOD }), report(built('done'))],
    });
    let killed: Promise<void> | undefined;
    let sleepPid = 0;
    let firstPi = 0;
    const afterArm: string[] = [];
    const { exit, events, prepared } = await runBon(bench, {
      inPlace: true,
      models: ['scripted/alpha', 'scripted/beta'],
      onEvent: (e, session) => {
        if (
          e.type === 'activity' &&
          e.phase === 'arm_1' &&
          e.activity.kind === 'tool_start' &&
          e.activity.tool === 'bash'
        ) {
          killed = until('the sleep of arm 1', () => (sleepPid = sleepOf(session.run.adwId)) > 0).then(() => {
            leftovers.push(sleepPid);
            firstPi = session.rpc!.pid;
            process.kill(firstPi, 'SIGKILL');
          });
        }
        if (e.type === 'arm_patch') afterArm.push(treeStatus(bench!.dir));
      },
    });
    await killed;
    expect(sleepPid).toBeGreaterThan(0);
    expect(failedMotif(events, 'arm_1')).toMatch(/^crashed: pi died mid-turn \(pi killed by SIGKILL\)/);
    // The half-written file was harvested into arm 1's patch, then the tree reset.
    expect(ofType(events, 'arm_patch')[0]!.files).toEqual([FAREWELL]);
    expect(afterArm).toEqual(['', '']);
    // The next arm ran in a pi reopened on the primer's session, cloned from it, and won.
    expect(exit).toBe(0);
    expect(ofType(events, 'harvest')[0]!.winner).toBe(2);
    const ledger = readLedger(bench.paths.ledgerFile);
    expect(ledger.map((l) => [l.phase, l.reason])).toEqual([
      ['prime', undefined],
      ['arm_1', 'clone'],
      ['prime', undefined],
      ['arm_2', 'clone'],
    ]);
    expect(ledger[2]!.session_id).toBe(prepared.run.sessions.prime);
    expect(JSON.stringify(bench.rig.model.requestsFor('model:beta')[0]!.body.messages)).toContain(
      'Plan: write src/farewell.js.',
    );
    // No orphan: neither the killed pi's `sleep 30` nor anything else of the run. pi's bash tool runs the command
    // in a session of its own, so once pi is SIGKILLed by someone else the sleep is reparented to init; the
    // supervisor finds it by the spawn id it inherited and ends it.
    expect(alive(firstPi)).toBe(false);
    expect(alive(sleepPid)).toBe(false);
    expect(processesTagged(prepared.run.adwId)).toEqual([]);
  });
});

/** pid of the run's `sleep 30` (a tagged process whose command line is exactly that), or 0. */
function sleepOf(adwId: string): number {
  for (const pid of processesTagged(adwId)) if (cmdline(pid) === 'sleep 30') return pid;
  return 0;
}
