// The rig against the real pi under test (the bundled floor, or FACTORY_PI: CI's ceiling leg): the scripted
// model must be a provider pi accepts as it is, with the usage, cost, tool calls, retries and failures pi
// really produces; and every child the tests start must run that same pi.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PiUnavailableError,
  bundledPi,
  checkPi,
  compareVersions,
  factoryRoot,
  resolvePi,
} from '../../src/pi/resolve.js';
import { call, countCompletionTokens, countPromptTokens, fail, say } from '../../src/scripted/tape.js';
import { runCli } from '../helpers/cli.js';
import { makeTempRepo, type TempRepo } from '../helpers/repo.js';
import { assistantMessages, lastAssistant, runPiJson, startRig, textOf, type Rig } from '../helpers/rig.js';

let rig: Rig;
let repo: TempRepo;

beforeAll(async () => {
  rig = await startRig({
    tapes: {
      priced: [say('Hello from the tape.', { prompt: 996, completion: 6 })],
      counted: [say('Counted by the server.')],
      write: [call('write', { path: 'notes/hello.txt', content: 'written by the tape\n' }), say('File written.')],
      flaky: [fail(503), say('Recovered after one retry.')],
      denied: [fail(401, { times: Infinity })],
      session: [say('First answer.'), say('Corrected answer.')],
    },
  });
  repo = makeTempRepo({ files: { 'README.md': '# sample\n' } });
});

afterAll(async () => {
  await rig?.cleanup();
  repo?.cleanup();
});

describe('real pi on the scripted model', () => {
  it('a text turn arrives with the exact usage and the cost pi derives from the prices', async () => {
    const run = await runPiJson(rig, { cwd: repo.dir, prompt: '[tape:priced] say hello' });
    expect(run.exitCode).toBe(0);
    const message = lastAssistant(run.events)!;
    expect(textOf(message)).toBe('Hello from the tape.');
    expect(message).toMatchObject({ provider: 'scripted', model: 'alpha', stopReason: 'stop' });
    expect(message.usage).toMatchObject({ input: 996, output: 6, totalTokens: 1002 });
    // scripted/alpha costs $3 in and $15 out per million tokens.
    expect(message.usage!.cost.total).toBeCloseTo((996 * 3 + 6 * 15) / 1e6, 12);
    expect(rig.model.requestsFor('priced')).toHaveLength(1);
  });

  it('the default usage pi reports is the server count of the request it sent', async () => {
    const run = await runPiJson(rig, { cwd: repo.dir, prompt: '[tape:counted] count me', model: 'scripted/beta' });
    const [request] = rig.model.requestsFor('counted');
    const message = lastAssistant(run.events)!;
    expect(message.model).toBe('beta');
    const prompt = countPromptTokens(request!.body);
    const completion = countCompletionTokens('Counted by the server.');
    // pi's real request (system prompt + tools) is large: the count is not a small constant.
    expect(prompt).toBeGreaterThan(200);
    expect(message.usage).toMatchObject({ input: prompt, output: completion });
    expect(message.usage!.cost.total).toBeCloseTo((prompt * 1 + completion * 5) / 1e6, 12);
  });

  it('a write tool call creates the file, then a text step ends the run', async () => {
    const run = await runPiJson(rig, { cwd: repo.dir, prompt: '[tape:write] write the note' });
    expect(run.exitCode).toBe(0);
    expect(readFileSync(join(repo.dir, 'notes/hello.txt'), 'utf8')).toBe('written by the tape\n');
    const toolEnd = run.events.find((e) => e.type === 'tool_execution_end' && e.toolName === 'write');
    expect(toolEnd?.isError).toBe(false);
    const messages = assistantMessages(run.events);
    expect(messages.map((m) => m.stopReason)).toEqual(['toolUse', 'stop']);
    expect(textOf(messages[1])).toBe('File written.');
    // The second request re-sends the history plus the tool call and its result.
    const requests = rig.model.requestsFor('write');
    expect(requests.map((r) => r.step)).toEqual([0, 1]);
    expect(requests[1]!.messages).toBe(requests[0]!.messages + 2);
  });

  it('a 503 that clears after one try succeeds through pi’s own retry', async () => {
    const run = await runPiJson(rig, { cwd: repo.dir, prompt: '[tape:flaky] try' });
    expect(run.exitCode).toBe(0);
    expect(run.events.some((e) => e.type === 'auto_retry_start')).toBe(true);
    expect(run.events.find((e) => e.type === 'auto_retry_end')).toMatchObject({ success: true });
    const message = lastAssistant(run.events)!;
    expect([message.stopReason, textOf(message)]).toEqual(['stop', 'Recovered after one retry.']);
    expect(rig.model.requestsFor('flaky').map((r) => r.kind)).toEqual(['error', 'text']);
  });

  it('a 401 that never clears ends the stream in stopReason "error", and pi still exits 0', async () => {
    const run = await runPiJson(rig, { cwd: repo.dir, prompt: '[tape:denied] try' });
    expect(run.exitCode).toBe(0);
    const message = lastAssistant(run.events)!;
    expect(message.stopReason).toBe('error');
    expect(message.errorMessage).toMatch(/^401: /);
    expect(message.usage?.cost.total).toBe(0);
    // Not a retryable failure: exactly one request.
    expect(rig.model.requestsFor('denied')).toHaveLength(1);
  });

  it('a correction turn in the same session (new process) stays on its tape', async () => {
    const first = await runPiJson(rig, { cwd: repo.dir, prompt: '[tape:session] first', sessionId: 'rig-session-1' });
    const second = await runPiJson(rig, { cwd: repo.dir, prompt: 'correct it, please', sessionId: 'rig-session-1' });
    expect(textOf(lastAssistant(first.events))).toBe('First answer.');
    expect(textOf(lastAssistant(second.events))).toBe('Corrected answer.');
    const requests = rig.model.requestsFor('session');
    // The history was re-sent by the second process: user, assistant, new user (+ system).
    expect(requests[1]!.messages).toBe(requests[0]!.messages + 2);
    expect(rig.model.requestsFor('default')).toHaveLength(0);
  });
});

describe('pi resolution against real runtimes', () => {
  it('FACTORY_PI=/nonexistent gives a one-line error naming the fix', async () => {
    const error = await resolvePi({
      env: { FACTORY_PI: '/nonexistent', PATH: process.env.PATH },
      factoryRoot: factoryRoot(),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PiUnavailableError);
    const message = (error as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(
      /^pi not found: FACTORY_PI=\/nonexistent does not exist — point FACTORY_PI at a pi executable or unset it$/,
    );
  });

  it('checkPi reads the version of the bundled pi: the one package.json pins as the floor', async () => {
    const bundled = bundledPi(factoryRoot());
    expect(bundled).toBeDefined();
    // Whichever dependency section pins it (the exact version: the floor is a pin, not a range).
    const manifest = JSON.parse(readFileSync(join(factoryRoot(), 'package.json'), 'utf8')) as Record<string, unknown>;
    const sections = ['dependencies', 'optionalDependencies', 'devDependencies'].map(
      (k) => (manifest[k] ?? {}) as Record<string, string>,
    );
    const pinned = sections.map((deps) => deps['@earendil-works/pi-coding-agent']).find((v) => v !== undefined);
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(await checkPi(bundled!, { env: rig.env })).toEqual({ version: pinned });
  });

  it('checkPi reads the version of the pi under test, and the rig reports that version', async () => {
    const { version } = await checkPi(rig.pi, { env: rig.env });
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(rig.piVersion).toBe(version);
    if (process.env.FACTORY_PI) expect(rig.pi.source).toBe('FACTORY_PI');
    else expect(rig.pi.source).toBe('bundled');
  });

  it('a CLI child given rig.env runs the pi under test (FACTORY_PI is always set), never one found on PATH', async () => {
    expect(rig.env.FACTORY_PI).toBeDefined();
    const r = await runCli(['doctor', '--json', 'tools.pi', '--cwd', repo.dir], {
      cwd: repo.dir,
      env: { ...rig.env, CI: 'true' },
    });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { checks: { id: string; status: string; detail: string }[] };
    const check = report.checks.find((c) => c.id === 'tools.pi');
    expect(check).toMatchObject({ status: 'ok' });
    expect(check!.detail.startsWith(`pi ${rig.piVersion} (`)).toBe(true);
    // The same CLI file (a .js pi is run by whichever Node of the child can load it).
    expect(check!.detail).toContain(rig.env.FACTORY_PI!);
    expect(rig.pi.display).toContain(rig.env.FACTORY_PI!);
  });

  // `npx vitest` puts node_modules/.bin (the bundled Node 22) first on PATH: look for the system's older Node.
  const oldNode = findOldNode();
  it.runIf(oldNode !== undefined)('checkPi on an old Node says pi needs Node ≥ 22.19, in one line', async () => {
    const cli = join(factoryRoot(), 'node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js');
    expect(existsSync(cli)).toBe(true);
    const { path, version } = oldNode!;
    const error = await checkPi(
      { command: path, prefixArgs: [cli], source: 'FACTORY_PI', display: 'old-node pi' },
      { env: rig.env },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PiUnavailableError);
    expect((error as PiUnavailableError).reason).toBe('node_too_old');
    expect((error as Error).message).toBe(
      `pi needs Node ≥ 22.19.0 (found ${version}): install Node 22 for pi or set FACTORY_PI to a pi that runs on it`,
    );
  });
});

function findOldNode(): { path: string; version: string } | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const path = join(dir, 'node');
    if (!dir || !existsSync(path)) continue;
    try {
      const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
      if (compareVersions(version, '22.19.0') < 0) return { path, version };
    } catch {
      // not a runnable node: try the next one
    }
  }
  return undefined;
}
