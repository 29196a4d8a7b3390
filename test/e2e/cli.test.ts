// The built CLI, headless, through the real pi and the scripted model: log lines, --json, exit codes, and
// bad input refused in one line with nothing written.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, contentText, report, say } from '../../src/scripted/tape.js';
import { FACTORY_BIN, runCli, runToEnd } from '../helpers/cli.js';
import { processesTagged, promptBench, type PromptBench } from '../helpers/factory.js';
import { cliChildEnv } from '../helpers/rig.js';

const GOOD = { status: 'success', summary: 'Three files.', artifacts: [], notes_for_next_agent: '' };

let bench: PromptBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

function cliEnv(b: PromptBench, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...b.rig.env, CI: 'true', ...extra };
}

describe('factory prompt, headless', () => {
  it('prints the SPEC log lines on stderr and the envelope on stdout', async () => {
    bench = await promptBench({ default: [report(GOOD)] });
    const r = await runCli(
      ['prompt', 'Which files make up this repo?', '--model', 'scripted/alpha', '--cwd', bench.repo.dir],
      { env: cliEnv(bench) },
    );
    expect(r.code).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(/^\[[0-9a-f]{8}\] prompt \(agent, attempt 1\/3\): OK in \d+\.\d s$/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^\[[0-9a-f]{8}\] dispose \(code, attempt 1\/1\): OK in \d+\.\d s$/),
    );
    expect(lines.at(-1)).toMatch(/^\[[0-9a-f]{8}\] run green — total cost ~\$0\.\d{4}$/);
    expect(JSON.parse(r.stdout)).toMatchObject(GOOD);
  });

  it('reads the ask from a pipe (no words) and from `-`', async () => {
    bench = await promptBench({ default: [report(GOOD), report(GOOD)] });
    const env = cliEnv(bench);
    for (const words of ['', ' -']) {
      const command = `printf 'Which files, piped?' | "${process.execPath}" "${FACTORY_BIN}" prompt${words} --model scripted/alpha --cwd "${bench.repo.dir}"`;
      const r = await runToEnd('sh', ['-c', command], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject(GOOD);
      const asked = (bench.rig.model.requests.at(-1)!.body.messages ?? [])
        .filter((m) => m.role === 'user')
        .map((m) => contentText(m.content));
      expect(asked.some((text) => text.startsWith('Which files, piped?'))).toBe(true);
    }
  });

  it('streams one JSON event per line with --json and ends with the envelope', async () => {
    bench = await promptBench({ default: [report(GOOD)] });
    const r = await runCli(['prompt', 'Which files?', '--json', '--model', 'scripted/alpha', '--cwd', bench.repo.dir], {
      env: cliEnv(bench),
    });
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; exit?: number; envelope?: unknown });
    expect(events[0]!.type).toBe('run_started');
    expect(events.map((e) => e.type)).toContain('phase_ok');
    expect(events.at(-2)).toMatchObject({ type: 'run_finished', exit: 0 });
    expect(events.at(-1)).toMatchObject({ type: 'envelope', envelope: GOOD });
    expect(r.stderr).toBe('');
  });

  it('exits 1 when the agent never delivers a valid envelope', async () => {
    bench = await promptBench({ default: [say('no JSON here'), say('still none')] });
    const r = await runCli(
      ['prompt', 'Which files?', '--retries', '1', '--model', 'scripted/alpha', '--cwd', bench.repo.dir],
      { env: cliEnv(bench) },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/prompt \(agent, attempt 1\/2\): failed — envelope refused: no JSON object/);
    expect(r.stderr).toMatch(/prompt \(agent, attempt 2\/2\): failed — /);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/FAILED at phase prompt — run stopped$/);
    expect(r.stdout).toBe('');
  });
});

describe('interrupting a headless run', () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${signal} aborts the running turn: exit 130, the run stopped, no process left`, async () => {
      bench = await promptBench({ default: [call('bash', { command: 'sleep 600' })] });
      let sent = false;
      const r = await runCli(['prompt', 'Which files?', '--model', 'scripted/alpha', '--cwd', bench.repo.dir], {
        env: cliEnv(bench),
        onStderr: (child, stderr) => {
          // pi has started the tool once the session line is out and a model request was served.
          if (sent || !stderr.includes('session ')) return;
          sent = true;
          const poll = setInterval(() => {
            if (bench!.rig.model.requests.length === 0) return;
            clearInterval(poll);
            setTimeout(() => child.kill(signal), 300);
          }, 50);
        },
      });
      expect(sent).toBe(true);
      expect(bench.rig.model.requests).toHaveLength(1);
      expect(r.code).toBe(130);
      if (signal === 'SIGINT') expect(r.stderr).toMatch(/interrupt: aborting the running turn/);
      const adwId = /^\[([0-9a-f]{8})\]/.exec(r.stderr)![1]!;
      expect(r.stderr).toMatch(/interrupted at phase prompt — run stopped/);
      expect(processesTagged(adwId)).toEqual([]);
    });
  }
});

describe('bad input: one line, exit 2, nothing written', () => {
  const cases: [string, (repo: string) => string[], (repo: string) => void][] = [
    ['an unknown flag', (repo) => ['prompt', 'hi', '--frobnicate', '--cwd', repo], () => {}],
    ['an empty ask', (repo) => ['prompt', '   ', '--cwd', repo], () => {}],
    [
      'an unreadable roster',
      (repo) => ['prompt', 'hi', '--config', path.join(repo, 'missing.yaml'), '--cwd', repo],
      () => {},
    ],
    [
      'a roster that is not YAML',
      (repo) => ['prompt', 'hi', '--cwd', repo],
      (repo) => {
        fs.mkdirSync(path.join(repo, 'adws', 'adw_config'), { recursive: true });
        fs.writeFileSync(path.join(repo, 'adws', 'adw_config', 'factory.config.yaml'), 'agents: [unclosed\n');
      },
    ],
    [
      'a data folder that cannot hold schemas',
      (repo) => ['prompt', 'hi', '--cwd', repo],
      (repo) => {
        fs.mkdirSync(path.join(repo, 'adws'), { recursive: true });
        fs.writeFileSync(path.join(repo, 'adws', 'adw_data'), 'a file where a folder belongs\n');
      },
    ],
    ['a model that is not provider/id', (repo) => ['prompt', 'hi', '--model', 'gpt', '--cwd', repo], () => {}],
    ['an unknown harness', (repo) => ['prompt', 'hi', '--harness', 'nope', '--cwd', repo], () => {}],
    ['an unknown command', () => ['frobnicate'], () => {}],
    // pi would skip a broken project settings file and run without it, saying nothing: refused before any token.
    ...(['prompt', 'build', 'bon'] as const).map(
      (verb): [string, (repo: string) => string[], (repo: string) => void] => [
        `${verb} on a .pi/settings.json that is not JSON`,
        (repo) => [verb, verb === 'prompt' ? 'hi' : 'specs/x.md', '--cwd', repo],
        (repo) => {
          fs.mkdirSync(path.join(repo, '.pi'), { recursive: true });
          fs.writeFileSync(path.join(repo, '.pi', 'settings.json'), '{ "packages": [ }\n');
          fs.mkdirSync(path.join(repo, 'specs'), { recursive: true });
          fs.writeFileSync(path.join(repo, 'specs', 'x.md'), '# x\n\nAdd x.\n');
        },
      ],
    ),
  ];
  for (const [name, args, arrange] of cases) {
    it(`refuses ${name}`, async () => {
      bench = await promptBench({ default: [report(GOOD)] });
      arrange(bench.repo.dir);
      const r = await runCli(args(bench.repo.dir), { env: cliEnv(bench) });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^factory: /);
      if (name.includes('settings.json'))
        expect(r.stderr).toMatch(
          /settings\.json is not valid JSON .*pi would skip it and run without the project's settings — correct it/,
        );
      expect(r.stdout).toBe('');
      expect(fs.existsSync(path.join(bench.repo.dir, 'adws', 'adw_data', 'sessions'))).toBe(false);
      expect(bench.rig.model.requests).toHaveLength(0);
    });
  }

  it('names the fix when pi cannot be found', async () => {
    bench = await promptBench({ default: [report(GOOD)] });
    const r = await runCli(['prompt', 'hi', '--cwd', bench.repo.dir], {
      env: cliEnv(bench, { FACTORY_PI: path.join(os.tmpdir(), 'no-such-pi') }),
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/pi not found: FACTORY_PI=.* — point FACTORY_PI at a pi executable or unset it/);
    expect(fs.existsSync(path.join(bench.repo.dir, 'adws', 'adw_data', 'sessions'))).toBe(false);
  });
});

describe('factory demo', () => {
  it('runs an offline best-of-3 through the real pi: one red arm, two green, the cheaper wins; --dir keeps the repo', async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-demo-test-')), 'demo');
    try {
      const r = await runCli(['demo', '--dir', dir, '--no-ui'], {
        env: { ...process.env, ...(await cliChildEnv()), CI: 'true' },
      });
      expect(r.code, r.stderr).toBe(0);
      const adwId = /^\[([0-9a-f]{8})\]/.exec(r.stderr)![1]!;
      expect(r.stdout.trim()).toBe(`factory apply ${adwId}`);
      // In node:test's own words: TAP's `not ok 1 - …` on Node 20, the spec reporter's `✖ …` from Node 23 on.
      expect(r.stderr).toMatch(
        /arm_1 \(agent, attempt 1\/1\): failed — `node --test` exited 1: (not ok 1 - |✖ )says goodbye by name/,
      );
      expect(r.stderr).toMatch(/#1 arm 2 scripted\/beta — green/);
      expect(r.stderr).toMatch(/#2 arm 3 scripted\/gamma — green/);
      expect(r.stderr).toMatch(/#3 arm 1 scripted\/alpha — red/);
      expect(r.stderr).toMatch(/primer: [\d.]+k? tokens, \$0\.\d{4}, paid once — cold it would have been paid 3 times/);
      expect(r.stderr).toMatch(/run green — total cost ~\$0\.\d{4}/);
      // The tree is back to HEAD after the arms; the patches and the harvest stay.
      expect(fs.existsSync(path.join(dir, 'src', 'farewell.js'))).toBe(false);
      const harvest = JSON.parse(
        fs.readFileSync(path.join(dir, 'adws', 'adw_data', 'bon', adwId, 'harvest.json'), 'utf8'),
      );
      expect(harvest.winner).toBe(2);
      expect(harvest.arms.map((a: { arm: number; green: boolean }) => [a.arm, a.green])).toEqual([
        [2, true],
        [3, true],
        [1, false],
      ]);
      // A second demo into the same folder is allowed (it is a previous demo), a foreign folder is not.
      const again = await runCli(['demo', 'prompt', '--dir', dir, '--no-ui'], {
        env: { ...process.env, ...(await cliChildEnv()), CI: 'true' },
      });
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ status: 'success' });
      const foreign = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-foreign-'));
      fs.writeFileSync(path.join(foreign, 'precious.txt'), 'keep me');
      // Its own temp folder (TMPDIR), so what a refused demo leaves there is seen: nothing.
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-demo-tmp-'));
      try {
        const refused = await runCli(['demo', '--dir', foreign, '--no-ui'], {
          env: { ...process.env, ...(await cliChildEnv()), CI: 'true', TMPDIR: tmp },
        });
        expect(refused.code).toBe(2);
        expect(fs.readFileSync(path.join(foreign, 'precious.txt'), 'utf8')).toBe('keep me');
        expect(fs.readdirSync(tmp)).toEqual([]);
      } finally {
        fs.rmSync(foreign, { recursive: true, force: true });
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    } finally {
      fs.rmSync(path.dirname(dir), { recursive: true, force: true });
    }
  });
});
