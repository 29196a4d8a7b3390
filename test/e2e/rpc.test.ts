// PiRpc end to end: the real pi 0.85.1 in `--mode rpc`, the factory's real pi node installed in a temp repo,
// the scripted model. Primer + clones, set_model, abort, a refused dialog, a crash, close mid-turn.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/contract/errors.js';
import { Envelope, schema } from '../../src/envelope/envelopes.js';
import type { Activity } from '../../src/contract/events.js';
import { readLedger } from '../../src/trace/ledger.js';
import { bundledPi, compareVersions, factoryRoot, PI_MIN_NODE } from '../../src/pi/resolve.js';
import { PiRpc } from '../../src/pi/rpc.js';
import { call, hang, report, say, slow, type Tapes } from '../../src/scripted/tape.js';
import { processesTagged, promptBench, type PromptBench } from '../helpers/factory.js';

const GOOD = {
  status: 'success',
  summary: 'Implemented the spec.',
  artifacts: ['src/main.js'],
  notes_for_next_agent: '',
};
const TURN = { timeoutMs: 30_000, idleTimeoutMs: 20_000 };

let bench: PromptBench | undefined;
let rpc: PiRpc | undefined;
let tag = '';

afterEach(async () => {
  await rpc?.close();
  rpc = undefined;
  await bench?.cleanup();
  bench = undefined;
});

async function open(tapes: Tapes, model = 'scripted/alpha'): Promise<PiRpc> {
  bench = await promptBench(tapes);
  tag = randomUUID().slice(0, 8);
  rpc = await PiRpc.open({
    pi: bench.rig.pi,
    cwd: bench.repo.dir,
    workspace: bench.paths,
    flags: { sessionId: randomUUID(), sessionDir: bench.paths.sessionsDir, model },
    env: bench.rig.env,
    identity: { adwId: tag, phase: 'prime', role: 'builder' },
    envelopeSchema: { title: 'Envelope', schema: schema(Envelope) },
    runTag: tag,
  });
  return rpc;
}

async function until(what: string, test: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function failure(promise: Promise<unknown>): Promise<HarnessError> {
  return promise.then(
    () => {
      throw new Error('expected a HarnessError, the promise resolved');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(HarnessError);
      return error as HarnessError;
    },
  );
}

function header(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[0]!) as Record<string, unknown>;
}

describe('PiRpc on the real pi', () => {
  it('primes once, then two clones each work in their own session, billed for their own turn only', async () => {
    const pi = await open({
      primer: [say('I have read the spec: add a greeting to src/main.js.')],
      arm1: [call('bash', { command: 'git status --short' }), report(GOOD)],
      arm2: [report({ ...GOOD, summary: 'Second arm.' })],
    });
    const primerId = pi.sessionId;
    const primer = await pi.prompt('[tape:primer] Read the spec and wait.', TURN);
    expect(primer).toMatchObject({ sessionId: primerId, source: 'text', model: 'scripted/alpha' });
    expect(primer.tokens).toBeGreaterThan(0);
    const primerState = await pi.getState();
    const primerStats = await pi.getSessionStats();
    expect(primerStats.tokens.total).toBe(primer.tokens);

    const activity: Activity[] = [];
    const usage: number[] = [];
    const clone1 = await pi.clone({ phase: 'arm_1' });
    const arm1 = await pi.prompt('[tape:arm1] Implement it.', {
      ...TURN,
      onActivity: (a) => activity.push(a),
      onUsage: (u) => usage.push(u.tokens),
    });
    const stats1 = await pi.getSessionStats();

    await pi.switchSession(primerState.sessionFile!);
    expect(pi.sessionId).toBe(primerId);
    const clone2 = await pi.clone({ phase: 'arm_2' });
    const arm2 = await pi.prompt('[tape:arm2] Implement it.', TURN);
    const stats2 = await pi.getSessionStats();

    expect(new Set([primerId, clone1.sessionId, clone2.sessionId]).size).toBe(3);
    expect(arm1).toMatchObject({ sessionId: clone1.sessionId, source: 'gate', payload: GOOD });
    expect(arm2).toMatchObject({ sessionId: clone2.sessionId, source: 'gate', payload: { summary: 'Second arm.' } });
    // pi's stats of a clone include the primer's usage; the turn's figures do not.
    expect(stats1.tokens.total).toBe(primerStats.tokens.total + arm1.tokens);
    expect(stats2.tokens.total).toBe(primerStats.tokens.total + arm2.tokens);
    expect(arm1.tokens).toBeGreaterThan(0);
    expect(usage.at(-1)).toBe(arm1.tokens);
    expect(activity).toContainEqual(expect.objectContaining({ kind: 'tool_start', tool: 'bash' }));
    // Each clone carries the primer's history to the model and names its parent in its header.
    const armRequest = bench!.rig.model.requestsFor('arm2')[0]!;
    expect(JSON.stringify(armRequest.body.messages)).toContain('I have read the spec');
    for (const clone of [clone1, clone2]) {
      expect(header(clone.sessionFile)).toMatchObject({
        type: 'session',
        id: clone.sessionId,
        parentSession: primerState.sessionFile,
      });
    }
    const ledger = readLedger(bench!.paths.ledgerFile);
    expect(ledger.map((l) => [l.session_id, l.phase, l.reason])).toEqual([
      [primerId, 'prime', undefined],
      [clone1.sessionId, 'arm_1', 'clone'],
      [clone2.sessionId, 'arm_2', 'clone'],
    ]);
    expect(ledger.every((l) => l.cwd === bench!.repo.dir && l.adw_id === tag)).toBe(true);
    expect(fs.existsSync(pi.stderrFile)).toBe(true);
    await pi.close();
    expect(pi.alive).toBe(false);
    await until('no tagged process', () => processesTagged(tag).length === 0, 5_000);
  });

  // The pi under test's JS CLI started by the Node running the tests. Skipped, by these two conditions, when the
  // pi under test is a standalone binary (FACTORY_PI not a .js: no script to hand another Node) or when this Node
  // is new enough to load pi (then nothing fails to start).
  const piScript = piCliScript();
  const nodeTooOld = compareVersions(process.versions.node, PI_MIN_NODE) < 0;
  it.runIf(piScript !== undefined && nodeTooOld)(
    'a pi that cannot start (the real pi on the system Node 20) fails open() with the reason, declared and reaped',
    async () => {
      bench = await promptBench({});
      tag = randomUUID().slice(0, 8);
      const sessionId = randomUUID();
      const onNode20 = {
        command: process.execPath,
        prefixArgs: [piScript!],
        source: 'FACTORY_PI' as const,
        display: 'pi on the system Node',
      };
      const error = await failure(
        PiRpc.open({
          pi: onNode20,
          cwd: bench.repo.dir,
          workspace: bench.paths,
          flags: { sessionId, sessionDir: bench.paths.sessionsDir, model: 'scripted/alpha' },
          env: bench.rig.env,
          identity: { adwId: tag, phase: 'prime', role: 'builder' },
          envelopeSchema: { title: 'Envelope', schema: schema(Envelope) },
          runTag: tag,
        }),
      );
      expect(error.evidence.kind).toBe('spawn');
      expect(error.sessionId).toBe(sessionId);
      expect(error.message).toMatch(/did not start in rpc mode.*Node/i);
      expect(readLedger(bench.paths.ledgerFile).map((l) => l.session_id)).toEqual([sessionId]);
      expect(fs.readFileSync(`${bench.paths.sessionsDir}/${sessionId}.stderr.log`, 'utf8')).toMatch(
        /globSync|export named/,
      );
      expect(bench.rig.model.requests).toHaveLength(0);
      await until('no tagged process', () => processesTagged(tag).length === 0, 5_000);
    },
  );

  it('switches model (requests then carry it) and refuses an unknown model, staying usable', async () => {
    const pi = await open({ one: [say('alpha here')], 'model:beta': [say('beta here'), say('beta again')] });
    expect(await pi.prompt('[tape:one] hello', TURN)).toMatchObject({ model: 'scripted/alpha', payload: 'alpha here' });
    await pi.setModel('scripted', 'beta');
    // A second prompt in the same session: no new inventory in its stream, this session's first one holds.
    const second = await pi.prompt('[tape:one] hello again', TURN);
    expect(second).toMatchObject({ model: 'scripted/beta', payload: 'beta here' });
    expect(bench!.rig.model.requests.at(-1)!.body.model).toBe('beta');
    const refused = await failure(pi.setModel('scripted', 'zzz'));
    expect(refused.message).toBe('model not found: scripted/zzz');
    expect(pi.model).toBe('scripted/beta');
    expect((await pi.getState()).model).toBe('scripted/beta');
    expect(await pi.prompt('[tape:one] still there?', TURN)).toMatchObject({
      model: 'scripted/beta',
      payload: 'beta again',
    });
  });

  it('aborts a hanging turn (signal), a streaming one (abort()) and a stalled one (watchdog); the process stays usable', async () => {
    const pi = await open({
      hang: [hang(), hang()],
      slow: [slow('one two three four five six seven eight nine ten eleven twelve', 300)],
      after: [say('still alive')],
    });
    const controller = new AbortController();
    const hung = pi.prompt('[tape:hang] go', { ...TURN, signal: controller.signal });
    await until('the hanging request', () => bench!.rig.model.requestsFor('hang').length === 1);
    controller.abort();
    expect((await failure(hung)).evidence.kind).toBe('aborted');
    expect(pi.busy).toBe(false);

    const streaming = pi.prompt('[tape:slow] go', TURN);
    await until('the slow request', () => bench!.rig.model.requestsFor('slow').length === 1);
    await pi.abort();
    expect((await failure(streaming)).evidence.kind).toBe('aborted');

    const stalled = await failure(pi.prompt('[tape:hang] again', { timeoutMs: 30_000, idleTimeoutMs: 1_500 }));
    expect(stalled.evidence.kind).toBe('stalled');
    expect(stalled.message).toMatch(/no progress/);

    expect(await pi.prompt('[tape:after] ping', TURN)).toMatchObject({ payload: 'still alive' });
    expect(pi.alive).toBe(true);
  });

  it('refuses a damage-control confirm dialog at once and records it', async () => {
    const pi = await open({ reset: [call('bash', { command: 'git reset --hard HEAD' }), say('reset was refused')] });
    const activity: Activity[] = [];
    const result = await pi.prompt('[tape:reset] clean up', { ...TURN, onActivity: (a) => activity.push(a) });
    expect(result.payload).toBe('reset was refused');
    expect(pi.uiRefusals).toHaveLength(1);
    expect(pi.uiRefusals[0]).toMatchObject({ method: 'confirm', title: 'damage-control', sessionId: pi.sessionId });
    expect(pi.uiRefusals[0]!.message).toContain('git reset --hard');
    const end = activity.find((a) => a.kind === 'tool_end' && a.tool === 'bash');
    expect(end).toMatchObject({ isError: true });
    expect(JSON.stringify(end)).toMatch(/Blocked by damage-control/);
    // The model was told why the tool was blocked.
    expect(JSON.stringify(bench!.rig.model.requests.at(-1)!.body.messages)).toMatch(/confirmation refused/);
  });

  it('pi killed mid-turn: the turn rejects as crashed at once, later commands too, and nothing is left', async () => {
    const pi = await open({ hang: [hang()] });
    const turn = pi.prompt('[tape:hang] go', TURN);
    await until('the hanging request', () => bench!.rig.model.requestsFor('hang').length === 1);
    process.kill(pi.pid, 'SIGKILL');
    const crashed = await failure(turn);
    expect(crashed.evidence.kind).toBe('crashed');
    expect(crashed.message).toMatch(/SIGKILL/);
    expect(crashed.sessionId).toBe(pi.sessionId);
    expect(typeof crashed.evidence.stderrTail).toBe('string');
    expect((await failure(pi.getState())).evidence.kind).toBe('crashed');
    await pi.close();
    await until('no tagged process', () => processesTagged(tag).length === 0, 5_000);
  });

  it('close() mid-turn aborts and waits for the turn to settle before ending pi (the turn is kept)', async () => {
    const pi = await open({ slow: [slow('alpha beta gamma delta epsilon zeta eta theta iota kappa', 300)] });
    const turn = failure(pi.prompt('[tape:slow] go', TURN));
    await until('the slow request', () => bench!.rig.model.requestsFor('slow').length === 1);
    await new Promise((r) => setTimeout(r, 400)); // a word or two streamed
    const sessionFile = (await pi.getState()).sessionFile!;
    await pi.close();
    expect((await turn).evidence.kind).toBe('aborted');
    expect(pi.alive).toBe(false);
    // EOF mid-turn would have lost the turn; an abort persists the aborted assistant message.
    const entries = fs
      .readFileSync(sessionFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; message?: { role?: string; stopReason?: string } });
    expect(
      entries.some(
        (e) => e.type === 'message' && e.message?.role === 'assistant' && e.message.stopReason === 'aborted',
      ),
    ).toBe(true);
    await pi.close(); // idempotent
    await until('no tagged process', () => processesTagged(tag).length === 0, 5_000);
  });
});

/** The JS CLI of the pi under test: a `.js` FACTORY_PI, else (no FACTORY_PI) the bundled cli.js; undefined for a binary. */
function piCliScript(): string | undefined {
  const explicit = process.env.FACTORY_PI?.trim();
  if (explicit) return /\.(c|m)?js$/.test(explicit) ? path.resolve(explicit) : undefined;
  return bundledPi(factoryRoot())?.prefixArgs[0];
}
