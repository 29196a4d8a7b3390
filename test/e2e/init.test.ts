// `factory init` through the built CLI, in real git repositories: what it writes, that it merges and never
// overwrites, that a second run changes nothing, that the commit line it prints really leaves a clean tree,
// and that bad input is refused in one line with nothing written.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PLACEHOLDER_MARK } from '../../src/init/gateCommand.js';
import { factoryRoot } from '../../src/pi/resolve.js';
import { loadRoster } from '../../src/config/roster.js';
import { runCli } from '../helpers/cli.js';
import { git, makeTempRepo, type TempRepo } from '../helpers/repo.js';

const FACTORY = factoryRoot();
const repos: TempRepo[] = [];
const temps: string[] = [];
afterAll(() => {
  for (const r of repos) r.cleanup();
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});

function repo(files: Record<string, string> = {}): string {
  const r = makeTempRepo({ files });
  repos.push(r);
  return r.dir;
}

/** Every file of the work tree (not .git) with a hash of its bytes: "nothing written" is checked on this. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const abs = path.join(at, entry.name);
      if (entry.name === '.git') continue;
      if (entry.isDirectory()) walk(abs);
      else out[path.relative(dir, abs)] = createHash('sha256').update(fs.readFileSync(abs)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

const read = (dir: string, rel: string) => fs.readFileSync(path.join(dir, rel), 'utf8');
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const init = (cwd: string, args: string[] = []) => runCli(['init', ...args], { cwd, env });

describe('factory init', () => {
  it('sets a repository up, prints the exact commit, and a second run changes nothing', async () => {
    const dir = repo({
      'package.json': JSON.stringify({ name: 'lib', scripts: { test: 'vitest run' } }),
      'src/index.js': 'export {};\n',
    });
    const first = await init(dir);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(
      '+ adws/adw_config/factory.config.yaml  written: roster; gate: npm test (package.json scripts.test)',
    );

    const roster = await loadRoster(path.join(dir, 'adws/adw_config/factory.config.yaml'));
    expect(roster.payload.commands.map((c) => c.run)).toEqual(['npm test']);
    expect(Object.keys(roster.agents).sort()).toEqual(['builder', 'prompter']);
    for (const role of ['builder', 'prompter']) {
      expect(read(dir, `adws/adw_config/briefs/${role}.md`)).toBe(read(FACTORY, `templates/briefs/${role}.md`));
    }
    expect(read(dir, 'adws/adw_config/briefs/builder.md')).not.toMatch(/TypeScript strict|test\/unit/); // not the factory's own rules
    // Nothing committed names this machine's install: the cockpit gives pi its node at each start.
    expect(fs.existsSync(path.join(dir, '.pi/settings.json'))).toBe(false);
    expect(read(dir, '.pi/damage-control-rules.yaml')).toBe(read(FACTORY, '.pi/damage-control-rules.yaml'));
    const example = read(dir, 'specs/example.md');
    expect(example).toBe(read(FACTORY, 'templates/specs/example.md'));
    expect(example.match(/^## .+$/gm)).toEqual([
      '## Goal',
      '## Context',
      '## Acceptance criteria',
      '## Out of scope',
      '## Files likely touched',
    ]);
    expect(first.stdout).toMatch(/\+ specs\/example\.md\s+written: an example spec/);
    expect(read(dir, '.gitignore')).toMatch(/^# factory: .*\nadws\/adw_data\/\n# factory: provider keys\n\.env\n$/);

    // The printed commit line, run as printed, leaves nothing uncommitted (adws/adw_data is ignored).
    const commit = first.stdout.split('\n').find((l) => l.trim().startsWith('git add -- '));
    expect(commit).toBeDefined();
    execFileSync('bash', ['-c', commit!.trim()], {
      cwd: dir,
      env: {
        ...env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@example.invalid',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@example.invalid',
      },
    });
    fs.mkdirSync(path.join(dir, 'adws/adw_data/sessions'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'adws/adw_data/sessions/ledger.jsonl'), '{}\n');
    expect(git(dir, 'status', '--porcelain', '--untracked-files=all')).toBe('');

    const before = snapshot(dir);
    const second = await init(dir);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('Nothing to commit');
    expect(second.stdout).not.toMatch(/^\s+[+~] /m);
    expect(snapshot(dir)).toEqual(before);
  });

  it('merges: your roster, briefs, settings and ignore rules are kept', async () => {
    const ownRoster =
      'gateway: ""\npayload: { dir: ., commands: [{ run: make check }] }\nagents:\n  builder: { model: scripted/alpha }\n';
    const dir = repo({
      'adws/adw_config/factory.config.yaml': ownRoster,
      'adws/adw_config/briefs/builder.md': '# Our builder\nUse tabs.\n',
      '.pi/settings.json': JSON.stringify({ theme: 'dark', packages: ['npm:other-pi-package'] }),
      '.gitignore': 'node_modules\n/adws/adw_data\n*.env',
    });
    const out = await init(dir);
    expect(out.code, out.stderr).toBe(0);
    expect(read(dir, 'adws/adw_config/factory.config.yaml')).toBe(ownRoster);
    expect(read(dir, 'adws/adw_config/briefs/builder.md')).toBe('# Our builder\nUse tabs.\n');
    expect(read(dir, 'adws/adw_config/briefs/prompter.md')).toBe(read(FACTORY, 'templates/briefs/prompter.md'));
    expect(read(dir, '.gitignore')).toBe('node_modules\n/adws/adw_data\n*.env'); // both already ignored: untouched
    const settings = JSON.parse(read(dir, '.pi/settings.json')) as { theme: string; packages: unknown[] };
    expect(settings.theme).toBe('dark');
    expect(settings.packages).toEqual(['npm:other-pi-package']); // no machine path added
    expect(out.stdout).toMatch(/= adws\/adw_config\/factory\.config\.yaml\s+kept: your roster/);
    expect(out.stdout).toMatch(/= adws\/adw_config\/briefs\/builder\.md\s+kept: your builder brief/);
  });

  it('removes the machine path an older init committed, keeps the rest, and the doctor then loads the node at spawn', async () => {
    const legacy = {
      source: '../../prefix-old/lib/node_modules/factory-cockpit',
      extensions: ['.pi/extensions/factory-report.ts', '.pi/extensions/damage-control.ts'],
      skills: [],
      prompts: [],
      themes: [],
    };
    const dir = repo({
      '.pi/settings.json': JSON.stringify({ theme: 'dark', packages: ['npm:other-pi-package', legacy] }),
    });
    const out = await init(dir);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(
      /~ \.pi\/settings\.json\s+updated: removed the machine path \.\.\/\.\.\/prefix-old\/lib\/node_modules\/factory-cockpit/,
    );
    expect(JSON.parse(read(dir, '.pi/settings.json'))).toEqual({ theme: 'dark', packages: ['npm:other-pi-package'] });
    const doctor = await runCli(['doctor', '--quick', '--json', 'node.settings'], { cwd: dir, env });
    const row = (
      JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; detail: string }> }
    ).checks.find((r) => r.id === 'node.settings');
    expect(row).toMatchObject({ status: 'ok' });
    expect(row?.detail).toContain(`at each start from ${FACTORY}`);
  });

  it('finds the gate of other repositories, and writes a placeholder the doctor flags when there is none', async () => {
    const pnpm = repo({
      'package.json': JSON.stringify({ scripts: { test: 'jest' } }),
      'pnpm-lock.yaml': 'lockfileVersion: 9\n',
    });
    // On a machine with pnpm (a stand-in on PATH), the lock's manager; without it, npm runs the same script.
    const bin = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-init-bin-')));
    temps.push(bin);
    fs.writeFileSync(path.join(bin, 'pnpm'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const withPnpm = await runCli(['init'], {
      cwd: pnpm,
      env: { ...env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
    });
    expect(withPnpm.code, withPnpm.stderr).toBe(0);
    expect((await loadRoster(path.join(pnpm, 'adws/adw_config/factory.config.yaml'))).payload.commands[0]?.run).toBe(
      'pnpm test',
    );

    const bare = repo({
      'package.json': JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }),
    });
    const out = await init(bare);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('Then set your test command');
    const gate =
      (await loadRoster(path.join(bare, 'adws/adw_config/factory.config.yaml'))).payload.commands[0]?.run ?? '';
    expect(gate).toContain(PLACEHOLDER_MARK);
    expect(execFileSyncCode('bash', ['-c', gate], bare)).not.toBe(0); // the placeholder never passes for green
    const doctor = await runCli(['doctor', '--quick', '--json', 'repo'], { cwd: bare, env });
    const rows = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; detail: string }> })
      .checks;
    expect(rows.find((r) => r.id === 'repo.gates')).toMatchObject({ status: 'fail' });
    expect(rows.find((r) => r.id === 'repo.brief.builder')?.detail).toContain(
      'neutral brief from factory init, not edited yet',
    );
    expect(doctor.code).toBe(1);
  });

  it('--into sets up another repository from anywhere', async () => {
    const dir = repo();
    const elsewhere = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-init-cwd-')));
    temps.push(elsewhere);
    fs.mkdirSync(path.join(dir, 'packages', 'a'), { recursive: true });
    const out = await init(elsewhere, ['--into', path.join(dir, 'packages', 'a')]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout.split('\n')[0]).toBe(`factory init in ${dir}`); // the repository's root, not the subfolder
    expect(fs.existsSync(path.join(dir, 'adws/adw_config/factory.config.yaml'))).toBe(true);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it('refuses bad input in one line, exit 2, nothing written', async () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-init-nogit-')));
    temps.push(outside);
    const invalidRoster = repo({ 'adws/adw_config/factory.config.yaml': 'agents:\n  builder:\n    timeout: soon\n' });
    const badJson = repo({ 'package.json': '{ "scripts": { "test": "jest", } }' });
    const unreadable = repo({ 'README.md': 'x\n' });
    fs.mkdirSync(path.join(unreadable, 'package.json')); // a folder where a file is expected: EISDIR
    const badSettings = repo({ '.pi/settings.json': '{ not json' });
    const cases: Array<[string, RegExp]> = [
      [outside, /is not inside a git repository/],
      [invalidRoster, /the roster is invalid, fix it first .*agents\.builder\.timeout/],
      [badJson, /package\.json is not valid JSON/],
      [unreadable, /package\.json cannot be read \(EISDIR\)/],
      [badSettings, /settings\.json is not valid JSON/],
    ];
    for (const [dir, motif] of cases) {
      const before = snapshot(dir);
      const out = await init(dir);
      expect(out.code, `${dir}: ${out.stdout}`).toBe(2);
      expect(out.stderr).toMatch(motif);
      expect(out.stderr).toMatch(/nothing was written\n$/);
      expect(out.stderr.trim().split('\n')).toHaveLength(1);
      expect(out.stdout).toBe('');
      expect(snapshot(dir)).toEqual(before);
    }
  });
});

function execFileSyncCode(command: string, args: string[], cwd: string): number {
  try {
    execFileSync(command, args, { cwd, stdio: 'ignore' });
    return 0;
  } catch (error) {
    return (error as { status?: number }).status ?? -1;
  }
}
