// A gate that cannot run is never green, through the BUILT CLI (run `npm run build` first), the real pi under test and
// the scripted model: a typo'd gate (`pythn -m pytest`) stops bon and build before any token, exit 2, one line that
// names the command and the fix; a gate whose program is found but whose script runs a missing one is caught by the
// baseline on HEAD and stops the run before the fan-out (no arm starts), exit 2, in worktree and in-place modes; and
// `factory apply` on a machine that cannot run the gate says so, exit 2, not the red of a refused patch.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bonTapes, createDemoRepo, DEMO_MODELS } from '../../src/commands/demo.js';
import type { RunEvent } from '../../src/contract/events.js';
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
async function startBench(thinkMs: number): Promise<Bench> {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-gate-setup-')));
  const model = await startScriptedModel({ tapes: bonTapes(thinkMs) });
  const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
  return { model, repo: createDemoRepo(path.join(scratch, 'greet')), env: await cliChildEnv(agent.env), scratch };
}
async function stopBench(): Promise<void> {
  await bench?.model.close();
  if (bench) fs.rmSync(bench.scratch, { recursive: true, force: true });
  bench = undefined;
}
beforeEach(async () => {
  bench = await startBench(0);
});
afterEach(stopBench);

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });

/** The demo repo with `gate` as its only payload command, committed (bon refuses a dirty tree). */
function withGate(b: Bench, gate: string): void {
  const roster = `gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: ${JSON.stringify(gate)}\n      timeout: 60\n`;
  fs.writeFileSync(path.join(b.repo, 'adws/adw_config/factory.config.yaml'), roster);
  git(b.repo, 'commit', '-qam', 'the gate');
}

const TYPO =
  /gate `pythn -m pytest` cannot run: pythn not found on PATH — (python\S* is on PATH: use `python\S* -m pytest`|install pythn .*) in payload\.commands\[0\] in adws\/adw_config\/factory\.config\.yaml/;

function events(stdout: string): RunEvent[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RunEvent);
}

describe('a gate that cannot run (real pi, scripted model, built CLI)', () => {
  it("bon with a typo'd gate: exit 2 before any token, one line naming the command and the fix", async () => {
    const b = bench!;
    withGate(b, 'pythn -m pytest');
    const out = await runCli(['bon', 'specs/farewell.md', '--models', DEMO_MODELS.join(','), '--no-ui'], {
      cwd: b.repo,
      env: b.env,
      timeoutMs: 90_000,
    });
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toMatch(new RegExp(`check \\(code, attempt 1/1\\): failed — ${TYPO.source}`));
    expect(b.model.requests).toHaveLength(0);
    expect(git(b.repo, 'status', '--porcelain')).toBe('');
  });

  it("build with a typo'd gate: exit 2 before any token, the same line", async () => {
    const b = bench!;
    withGate(b, 'pythn -m pytest');
    const out = await runCli(['build', 'specs/farewell.md', '--no-ui', '--model', 'scripted/alpha'], {
      cwd: b.repo,
      env: { ...b.env, CI: 'true' },
      timeoutMs: 90_000,
    });
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toMatch(TYPO);
    expect(b.model.requests).toHaveLength(0);
  });

  it('build whose gate runs a missing program further in: the builder is not sent back, exit 2 with the command and the fix', async () => {
    const b = bench!;
    withGate(b, "bash -c 'pythn -m pytest'");
    const out = await runCli(['build', 'specs/farewell.md', '--no-ui', '--model', 'scripted/beta', '--json'], {
      cwd: b.repo,
      env: { ...b.env, CI: 'true' },
      timeoutMs: 90_000,
    });
    expect(out.code, out.stderr).toBe(2);
    const evs = events(out.stdout);
    const failed = evs.find((e): e is Extract<RunEvent, { type: 'phase_failed' }> => e.type === 'phase_failed')!;
    expect(failed.phase).toBe('gates');
    expect(failed.motif).toMatch(
      /^`bash -c 'pythn -m pytest'` cannot run: pythn: command not found — \S+ is on PATH: use `bash -c '\S+ -m pytest'`/,
    );
    // One build attempt: a machine that cannot run the gate is not the builder's to mend.
    expect(evs.filter((e) => e.type === 'attempt_started' && e.phase === 'build')).toHaveLength(1);
    expect(b.model.requestsFor('model:beta')).toHaveLength(2);
  });

  it('in worktrees the baseline stops a primer still at its first request: it sends no second one', async () => {
    await stopBench();
    // Each model answer takes a minute: the baseline's verdict comes long before the primer's first answer.
    bench = await startBench(60_000);
    const b = bench;
    withGate(b, "bash -c 'pythn -m pytest'");
    const out = await runCli(['bon', 'specs/farewell.md', '--models', DEMO_MODELS.join(','), '--no-ui', '--json'], {
      cwd: b.repo,
      env: b.env,
      timeoutMs: 110_000,
    });
    expect(out.code, out.stderr).toBe(2);
    expect(b.model.requestsFor('model:alpha').length).toBeLessThanOrEqual(1);
    const failed = events(out.stdout).find(
      (e): e is Extract<RunEvent, { type: 'phase_failed' }> => e.type === 'phase_failed',
    )!;
    expect([failed.phase, failed.motif]).toEqual([
      'prime',
      expect.stringMatching(/^`bash -c 'pythn -m pytest'` cannot run: pythn: command not found/),
    ]);
  });

  it('factory apply on a machine whose gate cannot run: exit 2, the command and the fix, the tree untouched', async () => {
    const b = bench!;
    const out = await runCli(['bon', 'specs/farewell.md', '--models', DEMO_MODELS.join(','), '--no-ui'], {
      cwd: b.repo,
      env: b.env,
      timeoutMs: 120_000,
    });
    expect(out.code, out.stderr).toBe(0);
    const id = /factory apply (\S+)/.exec(out.stderr + out.stdout)?.[1];
    expect(id).toBeDefined();
    // The arms were verified; the machine the patch is applied on has lost the gate's program since.
    withGate(b, "bash -c 'pythn -m pytest'");
    const applied = await runCli(['apply', id!], { cwd: b.repo, env: b.env, timeoutMs: 90_000 });
    expect(applied.code, applied.stdout + applied.stderr).toBe(2);
    expect(applied.stdout).toMatch(
      /^arm \d not applied: a gate cannot run on this machine: `bash -c 'pythn -m pytest'` cannot run: pythn: command not found — /,
    );
    expect(git(b.repo, 'status', '--porcelain')).toBe('');
  });

  for (const inPlace of [false, true]) {
    it(`a script that runs a missing program: the baseline on HEAD says it cannot run, no arm starts, exit 2${inPlace ? ' (in place: before any token)' : ''}`, async () => {
      // In worktrees the baseline runs beside the primer: a primer that reads for a while (as a real one does) is
      // still at work when it says so (bon-baseline's tests stop arms already out).
      if (!inPlace) {
        await stopBench();
        bench = await startBench(1500);
      }
      const b = bench!;
      // bash is on PATH, so no pre-flight can tell; the program it runs is not.
      withGate(b, "bash -c 'pythn -m pytest'");
      const out = await runCli(
        [
          'bon',
          'specs/farewell.md',
          '--models',
          DEMO_MODELS.join(','),
          '--no-ui',
          '--json',
          ...(inPlace ? ['--in-place'] : []),
        ],
        { cwd: b.repo, env: b.env, timeoutMs: 120_000 },
      );
      expect(out.code, out.stderr).toBe(2);
      const evs = events(out.stdout);
      const baseline = evs.find((e): e is Extract<RunEvent, { type: 'baseline' }> => e.type === 'baseline')!;
      expect(baseline.gates).toEqual([expect.objectContaining({ ok: false, setup: true })]);
      expect(baseline.gates[0]!.motif).toMatch(/^`bash -c 'pythn -m pytest'` cannot run: pythn: command not found — /);
      expect(baseline.gates[0]!.signature).toBeUndefined();
      const failed = evs.find((e): e is Extract<RunEvent, { type: 'phase_failed' }> => e.type === 'phase_failed')!;
      expect(failed.phase).toBe('prime');
      expect(failed.motif).toBe(baseline.gates[0]!.motif);
      expect(evs.some((e) => e.type === 'phase_started' && e.phase.startsWith('arm_'))).toBe(false);
      expect(evs.find((e) => e.type === 'run_finished')).toMatchObject({ exit: 2 });
      if (inPlace) expect(b.model.requests).toHaveLength(0);
      expect(git(b.repo, 'status', '--porcelain')).toBe('');
    });
  }
});
