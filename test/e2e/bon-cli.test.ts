// `factory bon` headless, through the built CLI (run `npm run build` first): the real pi under test in RPC mode, the
// scripted model answering each arm on its own model's tape, the demo payload (its gate is `node --test`).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bonTapes, createDemoRepo, DEMO_MODELS } from '../../src/commands/demo.js';
import type { RunEvent } from '../../src/contract/events.js';
import { makeAgentDir } from '../../src/scripted/agentDir.js';
import { startScriptedModel, type ScriptedModel } from '../../src/scripted/server.js';
import { call, report, type Tapes } from '../../src/scripted/tape.js';
import { requestsLog } from '../helpers/bon.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { cliChildEnv } from '../helpers/rig.js';

const MODELS_FLAG = DEMO_MODELS.join(',');
const BETA_FILE = 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n';

interface Bench {
  model: ScriptedModel;
  repo: string;
  env: Record<string, string>;
  scratch: string;
}

let bench: Bench | undefined;

async function startBench(tapes: Tapes): Promise<Bench> {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-bon-cli-')));
  const model = await startScriptedModel({ tapes });
  const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
  const env = await cliChildEnv(agent.env);
  return { model, repo: createDemoRepo(path.join(scratch, 'greet')), env, scratch };
}

function bon(b: Bench, extra: string[] = []): Promise<CliRun> {
  return runCli(['bon', 'specs/farewell.md', '--models', MODELS_FLAG, '--no-ui', ...extra], {
    cwd: b.repo,
    env: b.env,
    timeoutMs: 90_000,
  });
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });

afterEach(async () => {
  await bench?.model.close();
  if (bench) fs.rmSync(bench.scratch, { recursive: true, force: true });
  bench = undefined;
});

describe('factory bon, headless, on the demo payload', () => {
  beforeEach(async () => {
    bench = await startBench(bonTapes(0));
  });

  it('prints each arm, the ranked table and the primer line, proposes the winner on stdout and exits 0', async () => {
    const b = bench!;
    const out = await bon(b);
    expect(out.code, out.stderr).toBe(0);
    const id = /^\[([0-9a-f]{8})\] adw_bon in /m.exec(out.stderr)?.[1];
    expect(id).toBeDefined();
    // The primer reads on the first of --models, and its line says why.
    expect(out.stderr).toMatch(/prime: session \S+ on scripted\/alpha \(the first of --models\)$/m);
    // Per arm: its clone on its own model, its gates, its patch.
    expect(out.stderr).toMatch(/arm_1: session \S+ on scripted\/alpha/);
    expect(out.stderr).toMatch(/arm_2: session \S+ on scripted\/beta/);
    expect(out.stderr).toMatch(/arm_3: session \S+ on scripted\/gamma/);
    expect(out.stderr).toMatch(/arm_1: ✗ node --test .*Bye, Ada\./);
    expect(out.stderr).toMatch(/arm_2: ✓ node --test/);
    expect(out.stderr).toMatch(/arm_3: ✓ node --test/);
    for (const k of [1, 2, 3])
      expect(out.stderr).toMatch(new RegExp(`arm_${k}: patch \\d+ bytes, 1 file\\(s\\) — .*arm-${k}\\.patch`));
    // The ranked table: green first, then cheapest (beta is the cheaper model), the red arm last.
    const table = out.stderr.split('\n').filter((l) => /^\[\w+\]\s+#\d arm \d/.test(l));
    expect(table).toHaveLength(3);
    // node --test is red on HEAD (the spec's test cannot load farewell.js): beta and gamma get the credit.
    expect(table[0], `${out.stderr}\n${requestsLog(b.model)}`).toMatch(
      /#1 arm 2 scripted\/beta — green \(and made green what was red on HEAD: node --test\) — \d+ tokens, .* patch \d+ bytes \(\+3 −0, 1 file\(s\)\)$/,
    );
    expect(out.stderr).toMatch(
      /baseline on HEAD \([\d.]+ s\): ✗ node --test — red on HEAD without any arm: `node --test` exited 1: .* — an arm that makes it green fixed it; one that fails it the same way is excused, not verified$/m,
    );
    expect(table[1]).toMatch(/#2 arm 3 scripted\/gamma — green/);
    expect(table[2]).toMatch(/#3 arm 1 scripted\/alpha — red: `node --test` exited 1/);
    expect(out.stderr).toMatch(/primer: [\d.]+k? tokens, \$[\d.]+, paid once/);
    expect(out.stderr).toMatch(/run green/);
    // The proposal, alone on stdout: factory apply, the sealed and verified way; the patch holds beta's file.
    expect(out.stdout).toBe(`factory apply ${id}\n`);
    expect(fs.readFileSync(path.join(b.repo, `adws/adw_data/bon/${id}/arm-2.patch`), 'utf8')).toContain(
      '+  return `Goodbye, ${name}!`;',
    );
    const harvest = JSON.parse(fs.readFileSync(path.join(b.repo, `adws/adw_data/bon/${id}/harvest.json`), 'utf8')) as {
      arms: { arm: number; patch_sha256: string }[];
    };
    for (const arm of harvest.arms) expect(arm.patch_sha256).toMatch(/^[0-9a-f]{64}$/);
    // Nothing applied, the tree back at HEAD; one primer and three arms asked the model (alpha: primer + arm 1).
    expect(git(b.repo, 'status', '--porcelain')).toBe('');
    expect(b.model.requestsFor('model:alpha')).toHaveLength(4);
    expect(b.model.requestsFor('model:beta')).toHaveLength(2);
    expect(b.model.requestsFor('model:gamma')).toHaveLength(3);
  });

  it('--models naming a model pi does not offer: exit 2, one line, before the primer (zero requests)', async () => {
    const b = bench!;
    const out = await runCli(['bon', 'specs/farewell.md', '--models', 'scripted/alpha,scripted/nope', '--no-ui'], {
      cwd: b.repo,
      env: b.env,
      timeoutMs: 60_000,
    });
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr.trim().split('\n')).toEqual([
      'factory: --models: pi does not offer scripted/nope (see pi --list-models)',
    ]);
    expect(b.model.requests).toHaveLength(0);
    expect(git(b.repo, 'status', '--porcelain')).toBe('');
  });

  it('--json: one event per stdout line, ending with the proposal', async () => {
    const b = bench!;
    const out = await bon(b, ['--json']);
    expect(out.code, out.stderr).toBe(0);
    const lines = out.stdout.trim().split('\n');
    const parsed = lines.map((line) => JSON.parse(line) as { type: string } & Record<string, unknown>);
    const last = parsed.at(-1)!;
    expect(last.type).toBe('proposal');
    const events = parsed.slice(0, -1) as unknown as RunEvent[];
    expect(events[0]!.type).toBe('run_started');
    const harvest = events.find((e): e is Extract<RunEvent, { type: 'harvest' }> => e.type === 'harvest');
    expect(harvest?.winner).toBe(2);
    expect(harvest?.ranking.map((r) => [r.arm, r.green])).toEqual([
      [2, true],
      [3, true],
      [1, false],
    ]);
    expect(
      events
        .filter((e) => e.type === 'arm_patch')
        .map((e) => (e as { arm: number }).arm)
        .sort(),
    ).toEqual([1, 2, 3]); // arms at once: in the order they end
    const finished = events.at(-1) as Extract<RunEvent, { type: 'run_finished' }>;
    expect(finished.type).toBe('run_finished');
    expect(finished.exit).toBe(0);
    expect(last.adwId).toBe(finished.adwId);
    expect(last.command).toBe(harvest?.applyCommand);
    expect(last.command).toBe(`factory apply ${finished.adwId}`);
    // Every line names the event schema it follows.
    for (const event of parsed) expect(event.schemaVersion).toBe(1);
  });

  it.each([
    [['--max-cost', '-1'], '--max-cost takes a positive amount of dollars, e.g. --max-cost 0.50 (got "-1")'],
    [['--max-cost', 'lots'], '--max-cost takes a positive amount of dollars, e.g. --max-cost 0.50 (got "lots")'],
    [['--max-cost', '0'], '--max-cost takes a positive amount of dollars, e.g. --max-cost 0.50 (got "0")'],
    [['--stop-after-green', '0'], '--stop-after-green takes a whole number of arms from 1 to 3 (got 0)'],
    [['--stop-after-green', 'two'], '--stop-after-green takes a whole number of arms from 1 to 3 (got not a number)'],
    [['--stop-after-green', '4'], '--stop-after-green takes a whole number of arms from 1 to 3 (got 4)'],
    [['--deadline', 'soon'], '--deadline takes a duration such as 90s, 20m or 1h30m (got "soon")'],
    [['--deadline', '-5m'], '--deadline takes a duration such as 90s, 20m or 1h30m (got "-5m")'],
    [['--report', 'xml'], '--report takes md, junit or both (got "xml")'],
    [['--report-dir', '/tmp/x'], '--report-dir needs --report md, junit or md,junit'],
  ])('bad input %j: one line, exit 2, zero tokens, nothing written', async (flags, line) => {
    const b = bench!;
    const out = await bon(b, flags);
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr.trim().split('\n')).toEqual([`factory: ${line}`]);
    expect(b.model.requests).toHaveLength(0);
    expect(git(b.repo, 'status', '--porcelain', '--ignored')).toBe('');
  });

  it('--max-cost: the run cap stops the batch, the log says BUDGET, exit 3; --report writes both files', async () => {
    const b = bench!;
    const reports = path.join(b.scratch, 'reports');
    // The primer alone costs about a cent: a cap just above it leaves room for beta's two calls only.
    // The forecast is above that cap: said before the fan-out, and --yes fans out all the same.
    const out = await bon(b, ['--max-cost', '0.0135', '--yes', '--report', 'md,junit', '--report-dir', reports]);
    expect(out.code, out.stderr).toBe(3);
    expect(out.stderr).toMatch(
      /forecast: 3 arm\(s\) ~\$[\d.]+ \(\$[\d.]+–\$[\d.]+\) after the primer's \$[\d.]+, run ~\$[\d.]+( · [^—]+)? — above the run's cap \$0\.0135 \(--max-cost\): --yes fans out all the same/,
    );
    expect(out.stderr).toMatch(
      /budget: the run reached its cap of \$0\.0135 \(--max-cost\) — the batch stopped: the arms still at work stop/,
    );
    // One figure: the cap line (once the calls in flight are in) and the final line say the same total.
    const capLine = /the run: budget: the run spent (\$[\d.]+), its cap is \$0\.0135 \(--max-cost\)$/m.exec(out.stderr);
    expect(capLine, out.stderr).not.toBeNull();
    expect(out.stderr).toMatch(
      new RegExp(
        `BUDGET — budget: the run spent \\${capLine![1]}, its cap is \\$0\\.0135 \\(--max-cost\\) \\(cost ~\\${capLine![1]}\\); exit 3$`,
        'm',
      ),
    );
    const md = fs.readFileSync(path.join(reports, 'report.md'), 'utf8');
    expect(md).toMatch(/budget/i);
    const junit = fs.readFileSync(path.join(reports, 'junit.xml'), 'utf8');
    expect(junit).toMatch(/^<\?xml /);
    expect(junit).toMatch(/<testsuite name="arms"/);
    expect(out.stderr).toContain(`report: ${path.join(reports, 'report.md')}, ${path.join(reports, 'junit.xml')}`);
  });

  it('--json: one usage event per assistant message of each arm (what the board counts as turns)', async () => {
    const b = bench!;
    const out = await bon(b, ['--json']);
    expect(out.code, out.stderr).toBe(0);
    const events = out.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; phase?: string; tokens?: number });
    const usages = (phase: string) => events.filter((e) => e.type === 'usage' && e.phase === phase);
    // Model requests per phase: alpha serves the primer (2) then arm_1 (2); beta arm_2 (2); gamma arm_3 (3).
    expect(b.model.requestsFor('model:alpha')).toHaveLength(4);
    const expected: Record<string, number> = {
      prime: 2,
      arm_1: 2,
      arm_2: 2,
      arm_3: b.model.requestsFor('model:gamma').length,
    };
    for (const [phase, requests] of Object.entries(expected)) {
      expect({ phase, usages: usages(phase).length }).toEqual({ phase, usages: requests });
      // Each usage carries figures that moved: a turn that used nothing is no turn.
      for (const usage of usages(phase)) expect(usage.tokens).toBeGreaterThan(0);
    }
  });

  it('--apply: verifies the winner, applies it to the index and exits 0', async () => {
    const b = bench!;
    const out = await bon(b, ['--apply']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toMatch(/applied arm 2 \(.*arm-2\.patch\) with git apply --index/);
    expect(git(b.repo, 'diff', '--cached', '--name-only')).toBe('src/farewell.js\n');
    expect(fs.readFileSync(path.join(b.repo, 'src/farewell.js'), 'utf8')).toBe(BETA_FILE);
    // The index and the work tree agree: nothing but the applied file differs from HEAD.
    expect(git(b.repo, 'status', '--porcelain')).toBe('A  src/farewell.js\n');
  });

  it('factory apply <adw_id>: the proposal applies the sealed winner; a rewritten patch is refused and nothing moves', async () => {
    const b = bench!;
    const out = await bon(b);
    expect(out.code, out.stderr).toBe(0);
    const id = out.stdout.trim().split(' ')[2]!;
    const patch = path.join(b.repo, `adws/adw_data/bon/${id}/arm-2.patch`);
    const sealed = fs.readFileSync(patch, 'utf8');
    // Tampered after the harvest (as a later arm or any process could): refused by the seal, exit 1.
    fs.writeFileSync(
      patch,
      `${sealed}diff --git a/evil.txt b/evil.txt\nnew file mode 100644\n--- /dev/null\n+++ b/evil.txt\n@@ -0,0 +1 @@\n+pwned\n`,
    );
    const refused = await runCli(['apply', id], { cwd: path.join(b.repo, 'src'), env: b.env, timeoutMs: 60_000 });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stdout).toMatch(/^arm 2 not applied: patch refused: .*arm-2\.patch changed since it was harvested/);
    expect(git(b.repo, 'status', '--porcelain')).toBe('');
    // The sealed bytes back: applied from a subfolder (factory finds the root), staged, recorded in the run.
    fs.writeFileSync(patch, sealed);
    const applied = await runCli(['apply', id], { cwd: path.join(b.repo, 'src'), env: b.env, timeoutMs: 60_000 });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/^applied arm 2 \(.*arm-2\.patch\) with git apply --index/);
    expect(git(b.repo, 'status', '--porcelain')).toBe('A  src/farewell.js\n');
    const shown = await runCli(['show', id], { cwd: b.repo, env: b.env, timeoutMs: 30_000 });
    expect(shown.stdout).toMatch(/arm 2 not applied: patch refused/);
    expect(shown.stdout).toMatch(/applied arm 2/);
    // Bad input: one line, exit 2, nothing written.
    for (const args of [['apply'], ['apply', '../etc'], ['apply', id, 'x'], ['apply', 'ffffffff']]) {
      const bad = await runCli(args, { cwd: b.repo, env: b.env, timeoutMs: 30_000 });
      expect({ args, code: bad.code }).toEqual({ args, code: 2 });
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(git(b.repo, 'status', '--porcelain')).toBe('A  src/farewell.js\n');
  });
});

/** Every arm writes the buggy file: the gates make all three red. */
function allRedTapes(): Tapes {
  const buggy = {
    path: 'src/farewell.js',
    content: 'export function farewell(name) {\n  return `Bye, ${name}.`;\n}\n',
  };
  const built = {
    status: 'success',
    summary: 'farewell added',
    artifacts: [],
    notes_for_next_agent: '',
    changed_files: ['src/farewell.js'],
  };
  return {
    'model:alpha': [
      call('read', { path: 'specs/farewell.md' }),
      report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] }),
      call('write', buggy),
      report(built),
    ],
    'model:beta': [call('write', buggy), report(built)],
    'model:gamma': [call('write', buggy), report(built)],
  };
}

describe('factory bon, headless, when no arm is green', () => {
  it('exits 1, names the harvest file, proposes nothing and leaves the tree clean', async () => {
    bench = await startBench(allRedTapes());
    const b = bench;
    const out = await bon(b);
    expect(out.code, out.stderr).toBe(1);
    expect(out.stderr.match(/arm_\d: ✗ node --test/g)).toHaveLength(3);
    const harvestPath = /no green arm — see (\S+harvest\.json)/.exec(out.stderr)?.[1];
    expect(harvestPath, out.stderr).toBeDefined();
    const harvest = JSON.parse(fs.readFileSync(path.resolve(b.repo, harvestPath!), 'utf8')) as {
      winner: number | null;
      apply_command: string | null;
      arms: { arm: number; green: boolean; motif: string | null; patch_bytes: number }[];
    };
    expect(harvest.winner).toBeNull();
    expect(harvest.apply_command).toBeNull();
    expect(harvest.arms.map((a) => a.green)).toEqual([false, false, false]);
    for (const arm of harvest.arms) {
      expect(arm.motif).toMatch(/`node --test` exited 1/);
      expect(arm.patch_bytes).toBeGreaterThan(0);
    }
    expect(out.stderr).toMatch(/FAILED at phase harvest/);
    expect(out.stdout).toBe('');
    expect(git(b.repo, 'status', '--porcelain')).toBe('');
  });
});
