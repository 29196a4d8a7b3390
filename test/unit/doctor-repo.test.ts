// The doctor's repo checks: which gate judges a build, which brief each role gets — read from the files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDoctorContext } from '../../src/doctor/context.js';
import { runDoctor } from '../../src/doctor/run.js';
import { PLACEHOLDER_GATE } from '../../src/init/gateCommand.js';
import { factoryRoot } from '../../src/pi/resolve.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function workspace(files: Record<string, string>): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-doctor-repo-')));
  dirs.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

async function repoRows(dir: string) {
  const ctx = await createDoctorContext({ cwd: dir, env: { PATH: process.env.PATH }, factoryRoot: factoryRoot() });
  return Object.fromEntries((await runDoctor(ctx, { only: ['repo'] })).map((r) => [r.id, r]));
}

describe('doctor: repo checks', () => {
  it('a repository without roster or briefs: no gate, and each role gets the neutral default — warnings with the fix', async () => {
    const rows = await repoRows(workspace({ 'README.md': '# x\n' }));
    expect(rows['repo.gates']).toMatchObject({ status: 'warn', fix: expect.stringContaining('factory init') });
    for (const role of ['builder', 'prompter']) {
      expect(rows[`repo.brief.${role}`]).toMatchObject({
        status: 'warn',
        severity: 'optional',
        detail: `the repository has none: ${role} gets the factory's neutral default`,
      });
    }
  });

  it("the placeholder gate fails, a real one is named, and the repo's own brief is the one used", async () => {
    const roster = (run: string) =>
      `gateway: ""\npayload: { dir: ., commands: [{ run: ${JSON.stringify(run)} }] }\nagents:\n  judge: { model: scripted/alpha }\n`;
    const placeholder = await repoRows(workspace({ 'adws/adw_config/factory.config.yaml': roster(PLACEHOLDER_GATE) }));
    expect(placeholder['repo.gates']).toMatchObject({
      status: 'fail',
      detail: "payload.commands[0] is factory init's placeholder (it always fails)",
    });

    const dir = workspace({
      'adws/adw_config/factory.config.yaml': roster('make check'),
      'adws/adw_config/briefs/builder.md': '# Ours\nTabs only.\n',
    });
    const rows = await repoRows(dir);
    expect(rows['repo.gates']).toMatchObject({ status: 'ok', detail: 'make check' });
    expect(rows['repo.brief.builder']).toMatchObject({
      status: 'ok',
      detail: 'adws/adw_config/briefs/builder.md (17 characters)',
    });
    expect(rows['repo.brief.judge']?.status).toBe('warn'); // a role the roster names is checked too
  });

  it("a roster that routes the prompter but lacks the builder names the builder, with the fix (pi's default model otherwise)", async () => {
    const { modelChecks } = await import('../../src/doctor/modelChecks.js');
    const roster = 'gateway: ""\nagents:\n  prompter: { model: scripted/alpha }\n';
    const ctx = await createDoctorContext({
      cwd: workspace({ 'adws/adw_config/factory.config.yaml': roster }),
      env: { PATH: process.env.PATH },
      factoryRoot: factoryRoot(),
    });
    const lacking = modelChecks(ctx).find((c) => c.id === 'models.route.builder');
    expect(lacking).toBeDefined();
    expect(await lacking!.run(ctx)).toMatchObject({
      status: 'warn',
      detail: "the roster has no builder: factory build and every bon arm would run on pi's default model",
      fix: expect.stringContaining('agents.builder.model'),
    });
    expect(modelChecks(ctx).some((c) => c.id === 'models.route.judge')).toBe(false);
  });

  it('names pi --list-models as the user types it: pi, or "$FACTORY_PI" — never a path to a bundled Node and pi', async () => {
    const { listModelsCommand } = await import('../../src/doctor/modelChecks.js');
    const pi = (source: 'FACTORY_PI' | 'PATH' | 'bundled') => ({
      pi: {
        command: '/opt/node/bin/node',
        prefixArgs: ['/opt/pi/cli.js'],
        source,
        display: '/opt/node/bin/node /opt/pi/cli.js',
      },
    });
    expect(listModelsCommand(pi('bundled'), 'openrouter')).toBe('pi --list-models openrouter');
    expect(listModelsCommand(pi('PATH'), 'openrouter')).toBe('pi --list-models openrouter');
    expect(listModelsCommand(pi('FACTORY_PI'), 'openrouter')).toBe('"$FACTORY_PI" --list-models openrouter');
    expect(listModelsCommand({ pi: new Error('no pi') }, 'x')).toBe('pi --list-models x');
  });
});
