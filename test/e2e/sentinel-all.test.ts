// One redactor for everything the factory writes or shows (issue 10 point 5). Three distinct sentinels: a `.env` key
// given to the agent through its auth profile, a `.env` value the closed vault denies it, and a credential that only
// the cockpit's real environment holds. `factory prompt`, `factory build` and `factory bon` run through the BUILT
// CLI (headless, CI=true) on the real pi, the factory's node and the scripted model, whose agent reads `.env`,
// prints its environment, echoes the values in a tool input and hands them back in its envelope (and, in bon, in a
// failed arm's motif and a provider's 401). Then every file under adws/adw_data is read byte for byte, except pi's
// own session files (pi writes them; the README and the doctor say so), factory.db is queried table by table, and
// the CLI's stdout/stderr and `factory show/runs --json` are searched. Run `npm run build` first.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bonTapes, createDemoRepo, DEMO_MODELS } from '../../src/commands/demo.js';
import { workspacePaths, type WorkspacePaths } from '../../src/config/paths.js';
import { call, calls, contentText, fail, report, type Step, type Tapes } from '../../src/scripted/tape.js';
import { buildFixture, payloadFiles } from '../helpers/build.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { promptBench, SAMPLE_FILES } from '../helpers/factory.js';
import { startRig, type Rig } from '../helpers/rig.js';
import { outside } from '../helpers/traceFixtures.js';

/** 24 random characters from [A-Za-z0-9]: the part of a sentinel no mask can contain. */
function random24(): string {
  return randomBytes(48)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 24);
}

const GIVEN = `sk-given-${random24()}`; // .env, in the agent's auth profile: pi has it
const DENIED = `denied-${random24()}`; // .env, not in the profile: the closed vault keeps it from pi
const TOKEN = `tok-${random24()}`; // only in the cockpit's real environment, never given to pi
const SENTINELS = { SENTINEL_API_KEY: GIVEN, DENIED_SECRET: DENIED, SENTINEL_TOKEN: TOKEN };
const ALL = `${GIVEN} ${DENIED} ${TOKEN}`;
const DOT_ENV = `SENTINEL_API_KEY=${GIVEN}\nDENIED_SECRET="${DENIED}"\n`;
const PROFILE = '    auth: { keys: [SENTINEL_API_KEY] }';

/** What a careless agent does: read `.env`, print its environment, then echo everything it found. */
const PROBES = calls([
  { name: 'bash', args: { command: 'cat .env' } },
  { name: 'bash', args: { command: 'printenv' } },
  { name: 'bash', args: { command: 'echo "token=$SENTINEL_TOKEN"' } },
]);
const ECHO = call('bash', { command: `echo leaked ${ALL}` });

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function cliEnv(rig: Pick<Rig, 'env'>): NodeJS.ProcessEnv {
  return { ...rig.env, CI: 'true', SENTINEL_TOKEN: TOKEN };
}

/** Every file under a folder, recursively. */
function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** pi's own session files (`sessions/<time>_<uuid>.jsonl`): pi writes them, the factory does not mask them. */
const PI_SESSION = /_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/;

function expectClean(what: string, text: string | Buffer): void {
  for (const [name, value] of Object.entries(SENTINELS))
    expect(text.includes(value), `${what} holds ${name}`).toBe(false);
}

/** The probes' tool results, as pi sent them back to the model: the vault was closed, and the agent read `.env`. */
function expectProbesSeen(rig: Rig, tape?: string): void {
  const requests = tape ? rig.model.requestsFor(tape) : rig.model.requests;
  const seen = requests
    .map((r) =>
      (r.body.messages ?? [])
        .filter((m) => m.role === 'tool')
        .map((m) => contentText(m.content))
        .join('\n'),
    )
    .join('\n');
  expect(seen).toContain(`DENIED_SECRET="${DENIED}"`); // cat .env
  expect(seen).toContain(`SENTINEL_API_KEY=${GIVEN}`); // printenv: the profile key reached pi…
  expect(seen).not.toMatch(new RegExp(`^DENIED_SECRET=${DENIED}$`, 'm')); // …the denied one did not
  expect(seen).toMatch(/^token=$/m); // and the cockpit's credential never did
  expect(seen).not.toMatch(/^SENTINEL_TOKEN=/m);
  expect(seen).toContain(`leaked ${ALL}`); // the echo ran
}

/**
 * Every artefact of the workspace: each file under adws/adw_data (pi's session files excepted, by name), every row
 * of every table and view of factory.db, and what `factory show <id> [--json]` and `factory runs --json` print.
 * Returns the files read, so the caller can check that each kind was there.
 */
async function expectWorkspaceClean(paths: WorkspacePaths, adwId: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const written = walk(paths.dataDir).filter((f) => !(path.dirname(f) === paths.sessionsDir && PI_SESSION.test(f)));
  for (const file of written) expectClean(path.relative(paths.dataDir, file), fs.readFileSync(file));
  const db = outside(paths);
  try {
    const relations = db
      .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
    expect(relations).toContain('harness_events');
    for (const name of relations)
      expectClean(`table ${name}`, JSON.stringify(db.prepare(`SELECT * FROM "${name}"`).all()));
    // Not vacuous: the harness trace was indexed, and it met the cockpit-only credential (masked at the close).
    const harness = db.prepare('SELECT payload FROM harness_events').pluck().all().join('\n');
    expect(harness).toContain('«redacted:SENTINEL_TOKEN»');
  } finally {
    db.close();
  }
  for (const args of [
    ['show', adwId, '--json'],
    ['show', adwId],
    ['runs', '--json'],
  ]) {
    const out = await runCli(args, { cwd: paths.root, env, timeoutMs: 30_000 });
    expect(out.code, out.stderr).toBe(0);
    expectClean(`factory ${args.join(' ')}`, out.stdout + out.stderr);
  }
  const rel = written.map((f) => path.relative(paths.dataDir, f));
  expect(rel).toContain(path.join('sessions', 'ledger.jsonl'));
  expect(rel).toContain('factory.db');
  const runLog = fs.readFileSync(path.join(paths.dataDir, 'traces', 'runs', `${adwId}.jsonl`), 'utf8');
  // Met and masked, by name, not merely absent: the envelope went through the run log.
  for (const name of Object.keys(SENTINELS)) expect(runLog).toContain(`«redacted:${name}»`);
  const harnessFiles = rel.filter((f) => f.startsWith(path.join('traces', 'harness')));
  expect(harnessFiles.length).toBeGreaterThan(0);
  const traces = harnessFiles.map((f) => fs.readFileSync(path.join(paths.dataDir, f), 'utf8')).join('\n');
  // The node masked what it could know (its key, the .env it read); the cockpit rewrote the rest at the close.
  for (const name of Object.keys(SENTINELS)) expect(traces).toContain(`«redacted:${name}»`);
  return rel;
}

function adwIdOf(run: CliRun): string {
  const id = /^\[([0-9a-f]{8})\]/m.exec(run.stderr)?.[1];
  expect(id, run.stderr).toBeDefined();
  return id!;
}

describe('no sentinel in any artefact of prompt, build or bon (closed vault, .env and real environment)', () => {
  it('factory prompt', async () => {
    const leak = {
      status: 'success',
      summary: `Done. Keys: ${ALL}.`,
      artifacts: [],
      notes_for_next_agent: `token=${TOKEN}`,
    };
    const roster = ["gateway: ''", 'agents:', '  prompter:', '    model: scripted/alpha', PROFILE, ''].join('\n');
    const bench = await promptBench(
      { default: [PROBES, ECHO, report(leak), PROBES, ECHO, report(leak)] },
      {
        ...SAMPLE_FILES,
        '.gitignore': 'adws/adw_data/\n.env\n',
        '.env': DOT_ENV,
        'adws/adw_config/factory.config.yaml': roster,
      },
    );
    cleanups.push(() => bench.cleanup());
    const env = cliEnv(bench.rig);
    const r = await runCli(['prompt', 'Which files make up this repo?', '--no-ui', '--model', 'scripted/alpha'], {
      cwd: bench.repo.dir,
      env,
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expectProbesSeen(bench.rig);
    expect(JSON.parse(r.stdout)).toMatchObject({
      summary: 'Done. Keys: «redacted:SENTINEL_API_KEY» «redacted:DENIED_SECRET» «redacted:SENTINEL_TOKEN».',
    });
    expectClean('stdout/stderr', r.stdout + r.stderr);
    const json = await runCli(['prompt', 'again', '--json', '--model', 'scripted/alpha'], {
      cwd: bench.repo.dir,
      env,
      timeoutMs: 60_000,
    });
    expect(json.code, json.stderr).toBe(0);
    expectClean('--json stdout/stderr', json.stdout + json.stderr);
    await expectWorkspaceClean(bench.paths, adwIdOf(r), env);
  });

  it('factory build', async () => {
    const roster = [
      "gateway: ''",
      'payload:',
      '  dir: .',
      '  commands:',
      '    - run: node --test test/add.test.js',
      '      timeout: 60',
      'agents:',
      '  builder:',
      '    model: scripted/alpha',
      PROFILE,
      '',
    ].join('\n');
    const tape: Step[] = [
      PROBES,
      ECHO,
      call('write', { path: 'src/add.js', content: buildFixture('add.fixed.js') }),
      report({ status: 'success', summary: `add written; found ${ALL}`, changed_files: ['src/add.js'] }),
    ];
    const bench = await promptBench(
      { default: tape },
      {
        ...payloadFiles('add'),
        '.gitignore': 'adws/adw_data/\n.env\n',
        '.env': DOT_ENV,
        'adws/adw_config/factory.config.yaml': roster,
      },
    );
    cleanups.push(() => bench.cleanup());
    const env = cliEnv(bench.rig);
    const r = await runCli(['build', 'specs/add.md', '--no-ui', '--model', 'scripted/alpha'], {
      cwd: bench.repo.dir,
      env,
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expectProbesSeen(bench.rig);
    expect(JSON.parse(r.stdout)).toMatchObject({
      summary: 'add written; found «redacted:SENTINEL_API_KEY» «redacted:DENIED_SECRET» «redacted:SENTINEL_TOKEN»',
    });
    expectClean('stdout/stderr', r.stdout + r.stderr);
    await expectWorkspaceClean(bench.paths, adwIdOf(r), env);
  });

  it("factory bon: arms, a failed arm's motif, a provider 401, harvest.json", async () => {
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-sentinel-bon-')));
    const demo = bonTapes(0);
    const tapes: Tapes = {
      // The primer reads .env and prints the environment; arm 1 reports a failure quoting the values (its motif).
      'model:alpha': [
        PROBES,
        ECHO,
        report({ status: 'success', summary: `Plan; found ${ALL}`, changed_files: [] }),
        report({ status: 'fail', summary: `gave up: ${ALL}`, changed_files: [] }),
      ],
      'model:beta': [
        ...demo['model:beta']!.slice(0, -1),
        report({ status: 'success', summary: `farewell added; ${ALL}`, changed_files: ['src/farewell.js'] }),
      ],
      // A provider that quotes the key it refused (and a credential of the cockpit) in its 401.
      'model:gamma': [
        fail(401, { body: { error: { message: `Incorrect API key provided: ${GIVEN} (${TOKEN})` } }, times: Infinity }),
      ],
    };
    const rig = await startRig({ tapes });
    cleanups.push(
      () => rig.cleanup(),
      () => fs.rmSync(scratch, { recursive: true, force: true }),
    );
    const repo = createDemoRepo(path.join(scratch, 'greet'));
    const rosterFile = path.join(repo, 'adws/adw_config/factory.config.yaml');
    fs.appendFileSync(rosterFile, `agents:\n  builder:\n${PROFILE}\n`);
    fs.appendFileSync(path.join(repo, '.gitignore'), '.env\n');
    // The arms work in worktrees: the ignored .env reaches them only when .worktreeinclude names it (it does here,
    // so the secrets are there for an agent to leak).
    fs.writeFileSync(path.join(repo, '.worktreeinclude'), '.env\n');
    execFileSync('git', ['add', '.worktreeinclude'], { cwd: repo });
    execFileSync('git', ['commit', '-qam', 'vault'], { cwd: repo });
    fs.writeFileSync(path.join(repo, '.env'), DOT_ENV);
    const env = cliEnv(rig);
    const r = await runCli(['bon', 'specs/farewell.md', '--models', DEMO_MODELS.join(','), '--no-ui'], {
      cwd: repo,
      env,
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const adwId = adwIdOf(r);
    expect(r.stdout).toBe(`factory apply ${adwId}\n`);
    expectProbesSeen(rig, 'model:alpha');
    expect(rig.model.requestsFor('model:gamma').length).toBeGreaterThan(0);
    expectClean('stdout/stderr', r.stdout + r.stderr);
    const paths = workspacePaths(repo);
    const rel = await expectWorkspaceClean(paths, adwId, env);
    // harvest.json and pi's stderr logs (RPC mode) were among the files read, and the failed arm's motif is masked.
    expect(rel).toContain(path.join('bon', adwId, 'harvest.json'));
    expect(rel.some((f) => f.endsWith('.stderr.log'))).toBe(true);
    const harvest = JSON.parse(fs.readFileSync(path.join(paths.dataDir, 'bon', adwId, 'harvest.json'), 'utf8')) as {
      arms: { arm: number; motif: string | null }[];
    };
    expect(harvest.arms.find((a) => a.arm === 1)?.motif).toContain(
      '«redacted:DENIED_SECRET» «redacted:SENTINEL_TOKEN»',
    );
  });
});
