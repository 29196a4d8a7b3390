// `factory doctor` through the built CLI, headless: rows on stdout or one JSON document, exit codes, selection,
// and the prescription writing another repo's node settings.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { installNode } from '../../src/pi/node.js';
import { factoryRoot } from '../../src/pi/resolve.js';
import { runCli } from '../helpers/cli.js';
import { makeTempRepo, type TempRepo } from '../helpers/repo.js';
import { cliChildEnv } from '../helpers/rig.js';

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

// FACTORY_PI names the pi under test, so the doctor checks that pi on both CI legs, not node_modules/.bin/pi.
const env = { ...process.env, ...(await cliChildEnv()), CI: 'true' };

describe('factory doctor, headless', () => {
  it('checks a repo with the node installed: --json lists every check, exit 0 when the required ones pass', async () => {
    repo = makeTempRepo({ files: { 'README.md': '# r\n' } });
    installNode(repo.dir, factoryRoot());
    const r = await runCli(['doctor', '--quick', '--json', '--cwd', repo.dir], { env });
    const report = JSON.parse(r.stdout) as {
      checks: { id: string; category: string; severity: string; status: string; detail: string; fix: string | null }[];
    };
    const byId = new Map(report.checks.map((c) => [c.id, c]));
    expect(byId.get('tools.git')).toMatchObject({ category: 'tools', severity: 'required', status: 'ok' });
    expect(byId.get('node.settings')?.status).toBe('ok');
    expect(byId.get('node.ext.damage-control')?.detail).toMatch(/sha256 [0-9a-f]{12}/);
    expect(byId.get('tests.battery')?.status).toBe('skipped');
    const requiredFailures = report.checks.filter((c) => c.severity === 'required' && c.status === 'fail');
    expect(r.code).toBe(requiredFailures.length === 0 ? 0 : 1);
  });

  it('fails (exit 1) with the fix when the node is missing, the checklist on stdout with a summary line', async () => {
    repo = makeTempRepo({ files: { '.pi/settings.json': '{ not json' } });
    const r = await runCli(['doctor', '--quick', '--cwd', repo.dir], { env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ node\.settings/);
    expect(r.stdout).toMatch(/fix: /);
    expect(r.stdout.trim().split('\n').at(-1)).toMatch(/^\d+ ok, \d+ warnings?, \d+ failed, \d+ skipped$/);
    expect(r.stderr).toBe('');
  });

  it('runs only the named checks, and refuses an unknown id in one line (exit 2)', async () => {
    repo = makeTempRepo();
    const only = await runCli(['doctor', 'tools.git', '--json', '--cwd', repo.dir], { env });
    expect(only.code).toBe(0);
    expect((JSON.parse(only.stdout) as { checks: { id: string }[] }).checks.map((c) => c.id)).toEqual(['tools.git']);
    const bad = await runCli(['doctor', 'no.such.check', '--cwd', repo.dir], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('writes the node layer into another repo, and refuses a target that is not a repo without writing', async () => {
    repo = makeTempRepo();
    const r = await runCli(['doctor', '--layer', 'node', '--into', repo.dir], { env });
    expect(r.code, r.stderr).toBe(0);
    const settings = JSON.parse(fs.readFileSync(path.join(repo.dir, '.pi', 'settings.json'), 'utf8')) as {
      packages: { source: string; extensions: string[] }[];
    };
    expect(settings.packages[0]!.source).toBe(
      path.relative(path.join(repo.dir, '.pi'), factoryRoot()).split(path.sep).join('/'),
    );
    expect(settings.packages[0]!.extensions).toContain('.pi/extensions/factory-report.ts');
    const outside = fs.mkdtempSync(path.join(path.dirname(repo.dir), 'not-a-repo-'));
    try {
      const refused = await runCli(['doctor', '--layer', 'node', '--into', outside], { env });
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(fs.existsSync(path.join(outside, '.pi'))).toBe(false);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
    const halfFlags = await runCli(['doctor', '--layer', 'node'], { env });
    expect(halfFlags.code).toBe(2);
  });
});
