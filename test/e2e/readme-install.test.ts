// The README is a test: the shell block of "Use it in your repo" is run as written — the cockpit packed from
// this checkout, installed globally into a temporary prefix, `factory init` in a fresh repository, the commit
// it asks for, the doctor (battery included), and a best-of-3 of the roster init wrote. The model is the
// scripted one, listed under pi's own `openrouter` provider so the roster runs unchanged and offline.
// Three substitutions only, each checked to be in the README: the tarball goes to a scratch folder (and is
// packed without re-running the build, which `npm test` has just done: rebuilding dist/ under a running suite
// would pull files from under other tests), the global prefix is the scratch one (npm_config_prefix), and
// `cd ~/src/your-repo` goes to the test's repository. No `pi` is on PATH: the pinned pi the install brought
// runs, unless the suite runs on another pi (FACTORY_PI), which is then the user's own pi.
// Then what init committed is tried as a team gets it: a teammate's clone at another depth, with the cockpit
// moved whole under another npm prefix (its first place gone): doctor green, a best-of-2 green, the tree clean.
// And the block of "Try it on your repo without a key" runs as a whole script, the scripted model standing in for
// the local model server (its URL the one substitution, with `cd ~/src/your-repo`), HOME a scratch folder.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factoryRoot } from '../../src/pi/resolve.js';
import { makeAgentDir } from '../../src/scripted/agentDir.js';
import { startScriptedModel, type ScriptedModel } from '../../src/scripted/server.js';
import { call, report } from '../../src/scripted/tape.js';
import { runToEnd } from '../helpers/cli.js';
import { git, makeTempRepo, type TempRepo } from '../helpers/repo.js';

const ROOT = factoryRoot();
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const BUILDER = 'anthropic/claude-sonnet-4.5';
const PROMPTER = 'z-ai/glm-5.3';

/** The fenced shell block under the README's "Use it in your repo" heading, one command per line. */
export function readmeCommands(readme: string): string[] {
  const section = readme.split(/^## /m).find((s) => s.startsWith('Use it in your repo'));
  const block = section ? /```sh\n([\s\S]*?)```/.exec(section)?.[1] : undefined;
  if (!block) throw new Error('README.md has no ```sh block under "## Use it in your repo"');
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The fenced shell block under the README's "Try it on your repo without a key" heading, as one script. */
export function localBlock(readme: string): string {
  const section = readme.split(/^## /m).find((s) => s.startsWith('Try it on your repo without a key'));
  const block = section ? /```sh\n([\s\S]*?)```/.exec(section)?.[1] : undefined;
  if (!block) throw new Error('README.md has no ```sh block under "## Try it on your repo without a key"');
  return block;
}

const LOCAL_MODEL = 'qwen2.5-coder-7b';
const LOCAL_URL = 'http://127.0.0.1:8080/v1';

const SPEC =
  '# farewell\n\nAdd `src/farewell.js` exporting `farewell(name)` that returns `Goodbye, <name>!`.\nThe test `test/farewell.test.js` must pass.\n';
const FILES = {
  'package.json': `${JSON.stringify({ name: 'greet', version: '1.0.0', type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/greet.js': 'export const greet = (name) => `Hello, ${name}!`;\n',
  'test/farewell.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { farewell } from '../src/farewell.js';\n\ntest('says goodbye by name', () => {\n  assert.equal(farewell('Ada'), 'Goodbye, Ada!');\n});\n",
  '.gitignore': 'node_modules/\n',
};

const write = (content: string) => call('write', { path: 'src/farewell.js', content });
const built = { status: 'success', summary: 'farewell added', changed_files: ['src/farewell.js'] };

describe('README: Use it in your repo', () => {
  let scratch: string;
  let repo: TempRepo;
  let model: ScriptedModel;
  let env: NodeJS.ProcessEnv;
  const outputs: Array<{ command: string; status: number | null; stdout: string; stderr: string }> = [];

  beforeAll(async () => {
    scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-readme-')));
    repo = makeTempRepo({ files: FILES });
    model = await startScriptedModel({
      models: [BUILDER, PROMPTER, LOCAL_MODEL],
      tapes: {
        // The primer reads the spec and plans; three arms follow on the same model: one red, two green.
        [`model:${BUILDER}`]: [
          call('read', { path: 'specs/feature.md' }),
          report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] }),
          write('export const farewell = (name) => `Bye, ${name}.`;\n'),
          report(built),
          write('export const farewell = (name) => `Goodbye, ${name}!`;\n'),
          report(built),
          write('export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n'),
          report(built),
          // The teammate's clone: a primer and two arms, both green.
          call('read', { path: 'specs/feature.md' }),
          report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] }),
          write('export const farewell = (name) => `Goodbye, ${name}!`;\n'),
          report(built),
          write("export const farewell = (name) => 'Goodbye, ' + name + '!';\n"),
          report(built),
        ],
        // The local model server of "Try it on your repo without a key": a primer and two green arms.
        [`model:${LOCAL_MODEL}`]: [
          call('read', { path: 'specs/feature.md' }),
          report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] }),
          write('export const farewell = (name) => `Goodbye, ${name}!`;\n'),
          report(built),
          write('export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n'),
          report(built),
        ],
      },
    });
    const agent = makeAgentDir({
      baseUrl: model.baseUrl,
      dir: path.join(scratch, 'pi-agent'),
      provider: 'openrouter',
      models: [BUILDER, PROMPTER].map((id) => ({ id, cost: { input: 3, output: 15 } })),
    });
    const prefix = path.join(scratch, 'prefix');
    // The user's own environment (their HOME and npm config, proxies, CA certificates…), minus what `npm test`
    // and vitest added (npm_* lifecycle variables, node_modules/.bin on PATH) and minus any pi on PATH.
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !/^(npm_|VITEST|FACTORY_)/i.test(k) && k !== 'NODE_ENV' && k !== 'INIT_CWD',
      ),
    );
    const pathDirs = (process.env.PATH ?? '')
      .split(path.delimiter)
      .filter((d) => d !== '' && !d.includes('node_modules') && !fs.existsSync(path.join(d, 'pi')));
    env = {
      ...inherited,
      PATH: [path.join(prefix, 'bin'), ...pathDirs].join(path.delimiter),
      npm_config_prefix: prefix,
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Reader',
      GIT_AUTHOR_EMAIL: 'reader@example.invalid',
      GIT_COMMITTER_NAME: 'Reader',
      GIT_COMMITTER_EMAIL: 'reader@example.invalid',
      CI: 'true',
      ...agent.env,
      ...(process.env.FACTORY_PI ? { FACTORY_PI: process.env.FACTORY_PI } : {}),
      // The test run's own worktree root (test/global-setup.ts), which checks that every run folder went: without
      // it the reader's bon runs would make <tmp>/factory-worktrees, a folder the run leaves behind.
      ...(process.env.FACTORY_WORKTREES ? { FACTORY_WORKTREES: process.env.FACTORY_WORKTREES } : {}),
    };
    expect(
      spawnSync('bash', ['-c', 'command -v pi'], { env }).status,
      'a pi on the test PATH would hide the bundled one',
    ).not.toBe(0);
    fs.mkdirSync(path.join(repo.dir, 'specs'));
    fs.writeFileSync(path.join(repo.dir, 'specs', 'feature.md'), SPEC); // the user's spec, not committed (bon allows it)

    const substitutions: Array<[string, string, string]> = [
      ['npm pack', `npm pack --ignore-scripts --pack-destination ${JSON.stringify(scratch)}`, ROOT],
      [`npm install -g ./factory-cockpit-${VERSION}.tgz`, `npm install -g ./factory-cockpit-${VERSION}.tgz`, scratch],
      ['cd ~/src/your-repo', `cd ${JSON.stringify(repo.dir)}`, repo.dir],
    ];
    let cwd = ROOT;
    for (const line of readmeCommands(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'))) {
      const sub = substitutions.find(([written]) => written === line);
      if (sub) cwd = sub[2];
      const command = sub ? sub[1] : line;
      if (command.startsWith('cd ')) {
        outputs.push({ command: line, status: 0, stdout: '', stderr: '' });
        continue;
      }
      const run = await runToEnd('bash', ['--norc', '--noprofile', '-c', command], { cwd, env, timeoutMs: 420_000 });
      outputs.push({ command: line, status: run.code, stdout: run.stdout, stderr: run.stderr });
      if (run.code !== 0) {
        // The command that stopped the walk is the failure, said with its own words (not a "lost line" after it).
        expect.fail(
          `README command \`${line}\` exited ${run.code ?? 'on a signal (out of time?)'}: ${run.stderr.trim().split('\n').slice(-6).join(' | ')}`,
        );
      }
    }
    for (const [written] of substitutions)
      expect(
        outputs.map((o) => o.command),
        `README lost the line "${written}"`,
      ).toContain(written);
  }, 900_000);

  afterAll(async () => {
    await model?.close();
    repo?.cleanup();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  const result = (prefix: string) => {
    const found = outputs.find((o) => o.command.startsWith(prefix));
    if (!found)
      throw new Error(
        `"${prefix}" did not run; ran: ${outputs.map((o) => `${o.command} → ${o.status}`).join('; ')}\n${outputs.at(-1)?.stderr.slice(-2000)}`,
      );
    return found;
  };

  it('every command of the block exits 0', () => {
    for (const o of outputs) expect(o.status, `${o.command}\n${o.stderr.slice(-3000)}`).toBe(0);
    expect(outputs.at(-1)?.command).toMatch(/^factory bon /);
  });

  it('factory init wrote the roster with the repository own test command and the commit left a clean tree', () => {
    expect(result('factory init').stdout).toContain('roster; gate: npm test (package.json scripts.test)');
    expect(git(repo.dir, 'log', '--format=%s', '-1').trim()).toBe('Set up the factory cockpit');
    expect(git(repo.dir, 'ls-files', '.pi', 'adws', 'specs').split('\n').filter(Boolean).sort()).toEqual([
      '.pi/damage-control-rules.yaml',
      'adws/adw_config/briefs/builder.md',
      'adws/adw_config/briefs/prompter.md',
      'adws/adw_config/factory.config.yaml',
      'specs/example.md',
    ]);
    // Nothing committed names this machine's install (its prefix, its depth): the node is given at each start.
    for (const file of git(repo.dir, 'ls-files').split('\n').filter(Boolean)) {
      expect(git(repo.dir, 'show', `HEAD:${file}`), file).not.toMatch(
        new RegExp(`lib/node_modules|${path.basename(scratch)}`),
      );
    }
  });

  it('the doctor is green on the installed cockpit, battery included', () => {
    const doctor = result('factory doctor');
    expect(doctor.stdout).toMatch(/tests\.battery\s+8 probes green/);
    expect(doctor.stdout).toMatch(/repo\.gates\s+npm test/);
    expect(doctor.stdout).toMatch(/models\.route\.builder\s+openrouter\/anthropic\/claude-sonnet-4\.5 listed by pi/);
    expect(doctor.stdout).toMatch(/, 0 failed, /);
  });

  it('the best-of-3 ranks the two green arms first and proposes the winner; the tree is untouched', () => {
    const bon = result('factory bon');
    // The arms share one model (one tape) and run at once: which arm drew the red answer is the race's, not the test's.
    expect(bon.stderr).toMatch(/#3 arm \d openrouter\/anthropic\/claude-sonnet-4\.5 — red: `npm test` exited 1/);
    expect(
      bon.stderr.match(/#[12] arm \d openrouter\/anthropic\/claude-sonnet-4\.5 — green/g),
      bon.stderr.slice(-4000),
    ).toHaveLength(2);
    expect(bon.stdout.trim()).toMatch(/^factory apply [0-9a-f]{8}$/);
    expect(git(repo.dir, 'status', '--porcelain')).toBe('?? specs/feature.md\n');
  });

  it('factory demo runs from the installed cockpit with no pi on PATH', async () => {
    const demo = await runToEnd('factory', ['demo'], { cwd: scratch, env, timeoutMs: 300_000 });
    expect(demo.code, demo.stderr.slice(-3000)).toBe(0);
    expect(demo.stderr).toMatch(/run green/);
    expect(demo.stdout).toBe(''); // no `git apply` proposal for a demo repo that is gone when the command ends
    execFileSync('factory', ['--version'], { env }); // the bin the install linked
  });

  it("a teammate's clone at another depth, the cockpit moved under another npm prefix: doctor green, best-of-2 green, tree clean", async () => {
    // The cockpit as installed above, moved whole under another prefix: nothing of it may name where it was
    // installed (a path baked in at install time would break here, where a fresh install would bake the new one),
    // and the first place no longer exists. Moved rather than installed again: the install itself is tested above,
    // and a second one compiles SQLite again (minutes of CI on a machine without prebuilt binaries).
    const prefix = path.join(scratch, 'prefix');
    const otherPrefix = path.join(scratch, 'team', 'opt', 'npm-global');
    const clone = path.join(scratch, 'team', 'home', 'mate', 'work', 'clients', 'greet');
    fs.mkdirSync(path.dirname(clone), { recursive: true });
    git(scratch, 'clone', '-q', repo.dir, clone);
    fs.writeFileSync(path.join(clone, '.env'), 'OPENROUTER_API_KEY=sk-or-mate\n'); // the teammate's own key
    fs.mkdirSync(path.join(clone, 'specs'), { recursive: true });
    fs.writeFileSync(path.join(clone, 'specs', 'feature.md'), SPEC);
    const mate = {
      ...env,
      npm_config_prefix: otherPrefix,
      PATH: [path.join(otherPrefix, 'bin'), ...(env.PATH ?? '').split(path.delimiter).slice(1)].join(path.delimiter),
    };
    fs.mkdirSync(path.dirname(otherPrefix), { recursive: true });
    fs.renameSync(prefix, otherPrefix);
    try {
      expect(fs.existsSync(prefix)).toBe(false);
      const doctor = await runToEnd('factory', ['doctor'], { cwd: clone, env: mate, timeoutMs: 300_000 });
      expect(doctor.code, `${doctor.stdout}\n${doctor.stderr.slice(-3000)}`).toBe(0);
      expect(doctor.stdout).toMatch(
        /node\.settings\s+none \(the cockpit gives pi its node at each start from .*team\/opt\/npm-global\/lib\/node_modules\/factory-cockpit\)/,
      );
      expect(doctor.stdout).toMatch(/tests\.battery\s+8 probes green/);
      expect(doctor.stdout).toMatch(/, 0 failed, /);
      expect(doctor.stdout).not.toMatch(/^\s+[!✗] (node|repo|models)\./m); // the machine's own Node may warn; nothing of the clone's
      const bon = await runToEnd('factory', ['bon', 'specs/feature.md', '--arms', '2'], {
        cwd: clone,
        env: mate,
        timeoutMs: 420_000,
      });
      expect(bon.code, bon.stderr.slice(-3000)).toBe(0);
      expect(
        bon.stderr.match(/#[12] arm \d openrouter\/anthropic\/claude-sonnet-4\.5 — green/g),
        bon.stderr.slice(-4000),
      ).toHaveLength(2);
      expect(git(clone, 'status', '--porcelain')).toBe('?? specs/feature.md\n'); // the doctor rewrote nothing tracked
    } finally {
      fs.renameSync(otherPrefix, prefix);
    }
  }, 900_000);

  it('"Try it on your repo without a key": the local endpoint through models.json, the doctor reaches it, a best-of-2 runs keyless', async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const block = localBlock(readme);
    for (const written of ['cd ~/src/your-repo', LOCAL_URL, `local/${LOCAL_MODEL}`])
      expect(block, `README lost "${written}"`).toContain(written);
    const script = block
      .replace('cd ~/src/your-repo', `cd ${JSON.stringify(repo.dir)}`)
      .replaceAll(LOCAL_URL, model.baseUrl);
    const home = path.join(scratch, 'home');
    fs.mkdirSync(home);
    // No agent dir of the test's and no provider key at all: pi reads ~/.pi/agent of this HOME, as a user's pi does.
    const local = Object.fromEntries(
      Object.entries({ ...env, HOME: home }).filter(([k]) => k !== 'PI_CODING_AGENT_DIR' && !/_API_KEY$/.test(k)),
    );
    fs.rmSync(path.join(repo.dir, '.env'), { force: true }); // the key the first block wrote
    const run = await runToEnd('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', script], {
      cwd: home,
      env: local,
      timeoutMs: 600_000,
    });
    expect(run.code, `${run.stdout}\n${run.stderr.slice(-3000)}`).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`models\\.endpoint\\.local\\s+${model.baseUrl.replace(/[.]/g, '\\.')}/models answers`),
    );
    expect(run.stdout).toMatch(/models\.route\.builder\s+local\/qwen2\.5-coder-7b listed by pi/);
    expect(run.stderr.match(/#[12] arm \d local\/qwen2\.5-coder-7b — green/g), run.stderr.slice(-4000)).toHaveLength(2);
    expect(git(repo.dir, 'status', '--porcelain')).toBe('?? specs/feature.md\n');

    // The same row with the server gone: it fails, names the URL and the fix, and the doctor exits 1.
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const modelsFile = path.join(home, '.pi', 'agent', 'models.json');
    fs.writeFileSync(
      modelsFile,
      fs.readFileSync(modelsFile, 'utf8').replace(model.baseUrl, `http://127.0.0.1:${port}/v1`),
    );
    const down = await runToEnd(
      'factory',
      ['doctor', '--quick', '--config', path.join(home, 'factory-local.yaml'), 'models.endpoint'],
      { cwd: repo.dir, env: local, timeoutMs: 120_000 },
    );
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(
      new RegExp(
        `models\\.endpoint\\.local\\s+http://127\\.0\\.0\\.1:${port}/v1/models cannot be reached: ECONNREFUSED`,
      ),
    );
    expect(down.stdout).toContain(`start the model server that answers http://127.0.0.1:${port}/v1`);
  }, 900_000);
});
