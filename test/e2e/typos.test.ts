// Typos are errors, not silent defaults (issue 23, P4), through the built CLI (run `npm run build` first) and the
// real pi under test against the scripted model: a `--model` pi does not offer exits 2 in one line before any model
// request, for prompt, build and bon; a roster role the workflows do not know (`bulider:`) is refused the same way.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bonTapes, createDemoRepo } from '../../src/commands/demo.js';
import { makeAgentDir } from '../../src/scripted/agentDir.js';
import { startScriptedModel, type ScriptedModel } from '../../src/scripted/server.js';
import { runCli } from '../helpers/cli.js';
import { cliChildEnv } from '../helpers/rig.js';

interface Bench {
  model: ScriptedModel;
  repo: string;
  env: Record<string, string>;
  scratch: string;
}

let bench: Bench | undefined;

beforeEach(async () => {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-typos-')));
  const model = await startScriptedModel({ tapes: bonTapes(0) });
  const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
  bench = { model, repo: createDemoRepo(path.join(scratch, 'greet')), env: await cliChildEnv(agent.env), scratch };
});

afterEach(async () => {
  await bench?.model.close();
  if (bench) fs.rmSync(bench.scratch, { recursive: true, force: true });
  bench = undefined;
});

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });

describe('a --model pi does not offer: exit 2, one line, zero model requests', () => {
  const commands: [name: string, args: string[]][] = [
    ['prompt', ['prompt', 'Which files make up this repo?']],
    ['build', ['build', 'specs/farewell.md']],
    ['bon', ['bon', 'specs/farewell.md', '--arms', '2']],
  ];
  for (const [name, args] of commands) {
    it(`factory ${name} --model scripted/nope`, async () => {
      const b = bench!;
      const out = await runCli([...args, '--model', 'scripted/nope', '--no-ui'], {
        cwd: b.repo,
        env: b.env,
        timeoutMs: 60_000,
      });
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr.trim().split('\n')).toEqual([
        'factory: --model: pi does not offer scripted/nope (see pi --list-models)',
      ]);
      expect(b.model.requests).toHaveLength(0);
      expect(git(b.repo, 'status', '--porcelain')).toBe('');
    });
  }

  it('a --model pi offers still runs (the check does not refuse a listed model)', async () => {
    const b = bench!;
    const out = await runCli(
      ['prompt', 'Which files make up this repo?', '--model', 'scripted/alpha', '--retries', '0', '--no-ui'],
      { cwd: b.repo, env: b.env, timeoutMs: 90_000 },
    );
    expect(out.stderr).not.toContain('does not offer');
    expect(b.model.requests.length, out.stderr).toBeGreaterThan(0);
  });
});

describe('a roster role the workflows do not know', () => {
  it('`bulider:` is refused by build with the nearest name and the role the roster lacks, before any request; the doctor names it too', async () => {
    const b = bench!;
    const file = path.join(b.repo, 'adws', 'adw_config', 'factory.config.yaml');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'gateway: ""\nagents:\n  bulider:\n    model: scripted/alpha\n');
    const motif = `factory: unknown role bulider in ${file}: did you mean builder? (the roster has no builder, which factory build and every bon arm runs)`;
    const out = await runCli(['build', 'specs/farewell.md', '--no-ui'], { cwd: b.repo, env: b.env, timeoutMs: 60_000 });
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr.trim().split('\n')).toEqual([motif]);
    expect(b.model.requests).toHaveLength(0);

    const doctor = await runCli(['doctor', '--quick', '--no-ui'], { cwd: b.repo, env: b.env, timeoutMs: 60_000 });
    expect(doctor.code).not.toBe(0);
    expect(doctor.stdout + doctor.stderr).toContain('unknown role bulider');
    expect(doctor.stdout + doctor.stderr).toContain('did you mean builder?');
  });
});
