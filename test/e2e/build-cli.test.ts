// `factory build <spec>` through the BUILT CLI, headless (CI=true), as a user runs it: the real pi 0.85.1, the
// factory's pi node, the scripted model and a temp git repo holding a small payload whose roster names the
// payload's node:test command as the gate. Run `npm run build` first (runCli spawns bin/factory.js → dist/).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, report } from '../../src/scripted/tape.js';
import { buildFixture, payloadFiles } from '../helpers/build.js';
import { runCli } from '../helpers/cli.js';
import { processesTagged, promptBench, type PromptBench } from '../helpers/factory.js';

const NODE_TEST = 'node --test --test-reporter=spec test/add.test.js';

/** A roster for the temp repo: no gateway (so scripted/alpha is a pi route as is), the node test as the gate. */
const BUILD_ROSTER = [
  "gateway: ''",
  'payload:',
  '  dir: .',
  '  commands:',
  `    - run: ${NODE_TEST}`,
  '      timeout: 60',
  'agents:',
  '  builder:',
  '    model: scripted/alpha',
  '',
].join('\n');

const built = (summary: string) => ({ status: 'success', summary, changed_files: ['src/add.js'] });

let bench: PromptBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

async function buildBench(tape: Parameters<typeof promptBench>[0]['default']): Promise<PromptBench> {
  return promptBench(
    { default: tape },
    { ...payloadFiles('add'), 'adws/adw_config/factory.config.yaml': BUILD_ROSTER },
  );
}

function cliEnv(b: PromptBench): NodeJS.ProcessEnv {
  return { ...b.rig.env, CI: 'true' };
}

describe('factory build, headless through the CLI', () => {
  it('prints the red gate in the attempt_failed line, sends it back, and goes green on attempt 2 (exit 0)', async () => {
    bench = await buildBench([
      call('write', { path: 'src/add.js', content: buildFixture('add.buggy.js') }),
      report(built('add written')),
      call('write', { path: 'src/add.js', content: buildFixture('add.fixed.js') }),
      report(built('add fixed')),
    ]);
    const r = await runCli(['build', 'specs/add.md', '--no-ui', '--model', 'scripted/alpha'], {
      cwd: bench.repo.dir,
      env: cliEnv(bench),
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trim().split('\n');
    const adwId = /^\[([0-9a-f]{8})\]/.exec(lines[0]!)![1]!;
    expect(lines[0]).toBe(`[${adwId}] adw_build in ${bench.repo.dir} — phases: check → build → gates`);
    // The gates' motif (the failing command and what it printed) is in the attempt_failed line.
    const redGate = lines.filter((l) => /^\[[0-9a-f]{8}\] gates \(code, attempt 1\/\d+\): failed — /.test(l));
    expect(redGate).toHaveLength(1);
    expect(redGate[0]).toContain(`\`${NODE_TEST}\` exited 1: `);
    expect(redGate[0]).toMatch(/✖ add sums two numbers .*actual: -1, \| expected: 5/);
    // One ✗ then one ✓ for the payload command.
    expect(lines.filter((l) => l.includes(`✗ ${NODE_TEST}`))).toHaveLength(1);
    expect(lines.filter((l) => l.includes(`✓ ${NODE_TEST}`))).toHaveLength(1);
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^\\[${adwId}\\] build \\(agent, attempt 1/3\\): OK in \\d+\\.\\d s$`)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^\\[${adwId}\\] build \\(agent, attempt 2/3\\): OK in \\d+\\.\\d s$`)),
    );
    expect(lines.at(-1)).toMatch(new RegExp(`^\\[${adwId}\\] run green — total cost ~\\$0\\.\\d{4}$`));
    // One session for both attempts: the session line is printed once.
    expect(lines.filter((l) => / build: session /.test(l))).toHaveLength(1);
    expect(bench.rig.model.requests).toHaveLength(4);
    expect(fs.readFileSync(path.join(bench.repo.dir, 'src/add.js'), 'utf8')).toBe(buildFixture('add.fixed.js'));
    // The envelope the builder disposed is on stdout.
    expect(JSON.parse(r.stdout)).toMatchObject(built('add fixed'));
    // factory show: the one session once, and each build attempt with the gates that judged it under it.
    const shown = (await runCli(['show', adwId], { cwd: bench.repo.dir, env: cliEnv(bench) })).stdout.split('\n');
    const sessionRows = shown
      .slice(shown.indexOf('sessions (ledger):') + 1)
      .filter((l) => l.startsWith('  ') && l.trim() !== '');
    expect(sessionRows).toHaveLength(1);
    const attempts = shown.slice(shown.indexOf('attempts:') + 1, shown.indexOf('sessions (ledger):') - 1);
    expect(
      attempts.map((l) =>
        l
          .replace(/\(session \S+\)/, '(session …)')
          .replace(/\(\d+\.\d s\)/, '(… s)')
          .replace(/ — .*/, ' — …'),
      ),
    ).toEqual([
      '  build attempt 1/3 on scripted/alpha (session …)',
      '    ✓ changed_files (… s)',
      `    ✗ ${NODE_TEST} (… s) — …`,
      '  build attempt 2/3 on scripted/alpha (session …)',
      '    ✓ changed_files (… s)',
      `    ✓ ${NODE_TEST} (… s)`,
    ]);
  });

  it('a missing spec fails at check: exit 2 (bad input), the check motif, zero model requests', async () => {
    bench = await buildBench([report(built('never'))]);
    const r = await runCli(['build', 'specs/nope.md', '--no-ui', '--model', 'scripted/alpha'], {
      cwd: bench.repo.dir,
      env: cliEnv(bench),
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `check (code, attempt 1/1): failed — spec not found: specs/nope.md (looked for ${path.join(bench.repo.dir, 'specs/nope.md')})`,
    );
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/FAILED at phase check — run stopped$/);
    expect(r.stdout).toBe('');
    expect(bench.rig.model.requests).toHaveLength(0);
    expect(fs.existsSync(path.join(bench.repo.dir, 'adws/adw_data/sessions/ledger.jsonl'))).toBe(false);
  });

  it('`factory build` without a spec: exit 2, one line, nothing written', async () => {
    bench = await buildBench([report(built('never'))]);
    const r = await runCli(['build', '--no-ui'], { cwd: bench.repo.dir, env: cliEnv(bench) });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^factory: missing spec/);
    expect(r.stdout).toBe('');
    expect(fs.existsSync(path.join(bench.repo.dir, 'adws/adw_data'))).toBe(false);
    expect(bench.rig.model.requests).toHaveLength(0);
  });

  it('Ctrl-C while the builder runs `sleep 600`: exit 130, no process carrying the run tag', async () => {
    bench = await buildBench([call('bash', { command: 'sleep 600' }), report(built('never reached'))]);
    let adwId: string | undefined;
    let sent = false;
    const r = await runCli(['build', 'specs/add.md', '--no-ui', '--model', 'scripted/alpha'], {
      cwd: bench.repo.dir,
      env: cliEnv(bench),
      timeoutMs: 120_000,
      onStderr: (child, stderr) => {
        adwId ??= /^\[([0-9a-f]{8})\]/.exec(stderr)?.[1];
        if (sent || !adwId || !stderr.includes('build: session ')) return;
        sent = true;
        // The tool is running once a `sleep 600` carrying the run tag is alive.
        const tag = adwId;
        const poll = setInterval(() => {
          const sleeping = processesTagged(tag).some((pid) => {
            try {
              return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim() === 'sleep 600';
            } catch {
              return false;
            }
          });
          if (!sleeping) return;
          clearInterval(poll);
          child.kill('SIGINT');
        }, 50);
      },
    });
    expect(sent).toBe(true);
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toMatch(/interrupt: aborting the running turn/);
    expect(r.stderr).toMatch(/interrupted at phase build — run stopped/);
    expect(processesTagged(adwId!)).toEqual([]);
    expect(bench.rig.model.requests).toHaveLength(1);
  });
});
