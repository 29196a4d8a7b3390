// The doctor against real state: temp git repos with and without the node, a broken rules file, a roster
// naming a model pi does not list (checked by the REAL `pi --list-models` on a scripted agent dir), a missing
// key, a pi that does not exist, and the node battery green on the real node and red on a partial one.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDoctorContext } from '../../src/doctor/context.js';
import { formatDoctorRows, doctorJson } from '../../src/doctor/report.js';
import { doctorExit, runDoctor } from '../../src/doctor/run.js';
import type { DoctorContext, DoctorResult } from '../../src/doctor/types.js';
import { installNode } from '../../src/pi/node.js';
import { factoryRoot } from '../../src/pi/resolve.js';
import { makeAgentDir, type AgentDir } from '../../src/scripted/agentDir.js';
import { makeTempRepo, type TempRepo } from '../helpers/repo.js';
import { basicEnv, piForTests, piUnderTest } from '../helpers/rig.js';
import { makePartialFactory } from '../../.pi/tests/helpers/node-rig.js';
import { checkPi } from '../../src/pi/resolve.js';

const FACTORY = factoryRoot();
const SECRET = 'sk-doctor-sentinel-5a7f3c';

function byId(results: DoctorResult[]): Record<string, DoctorResult> {
  return Object.fromEntries(results.map((r) => [r.id, r]));
}

const ROSTER = `gateway: ""
fallback_model: scripted/beta
agents:
  builder:
    model: scripted/alpha
    auth: { keys: [DOCTOR_PRESENT_KEY] }
  prompter:
    model: scripted/no-such-model
    auth: { keys: [DOCTOR_MISSING_KEY] }
`;

describe('factory doctor on real state', () => {
  let agent: AgentDir;
  const repos: TempRepo[] = [];
  const temps: string[] = [];
  let baseEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    // pi --list-models never calls the model: the server URL only has to be well-formed.
    agent = makeAgentDir({ baseUrl: 'http://127.0.0.1:9/v1' });
    // FACTORY_PI: the doctor checks the pi under test (CI's floor or ceiling), never node_modules/.bin/pi.
    // basicEnv carries the run's TMPDIR and FACTORY_WORKTREES: the gates check's scratch tree is the test run's own.
    baseEnv = { ...basicEnv(), ...agent.env, FACTORY_PI: (await piUnderTest()).factoryPi };
  });
  afterAll(() => {
    for (const r of repos) r.cleanup();
    for (const t of [agent.dir, ...temps]) rmSync(t, { recursive: true, force: true });
  });

  function repo(files: Record<string, string> = {}): string {
    const r = makeTempRepo({ files });
    repos.push(r);
    return r.dir;
  }

  async function doctor(
    cwd: string,
    env: NodeJS.ProcessEnv = baseEnv,
    extra: Partial<DoctorContext> = {},
  ): Promise<DoctorResult[]> {
    const ctx = { ...(await createDoctorContext({ cwd, env, factoryRoot: FACTORY })), ...extra };
    return runDoctor(ctx, { quick: true });
  }

  it('a repo with the node: hashes, routes against the real pi --list-models, keys by name only', async () => {
    const dir = repo({ 'adws/adw_config/factory.config.yaml': ROSTER, '.env': `DOCTOR_PRESENT_KEY=${SECRET}\n` });
    installNode(dir, FACTORY);
    const updates: string[] = [];
    const ctx = await createDoctorContext({ cwd: dir, env: baseEnv, factoryRoot: FACTORY });
    const results = await runDoctor(ctx, { quick: true, onUpdate: (id) => updates.push(id) });
    const r = byId(results);

    expect(updates.sort()).toEqual(results.map((x) => x.id).sort()); // every result streamed exactly once
    expect(r['tools.git']?.status).toBe('ok');
    expect(r['tools.pi']).toMatchObject({ status: 'ok', severity: 'required' });
    expect(r['pi.version']).toMatchObject({
      status: 'ok',
      detail: `pi ${(await piUnderTest()).version}, within the tested 0.85.0 – 1.6.x`,
    });
    // Information only: the SDK is for the types; the extensions run on pi's own copy, whatever its version.
    expect(r['pi.sdk']).toMatchObject({ status: 'ok', severity: 'optional' });
    expect(r['pi.sdk']?.detail).toMatch(
      /^SDK \d+\.\d+\.\d+ for the types; the extensions run on pi \d+\.\d+\.\d+'s own copy$/,
    );
    expect(r['node.settings']).toMatchObject({ status: 'ok' });
    expect(r['node.rules']?.status).toBe('ok');
    for (const name of ['damage-control', 'factory-obs', 'factory-report', 'factory-guard', 'factory-inventory']) {
      const hash = createHash('sha256')
        .update(readFileSync(path.join(FACTORY, '.pi', 'extensions', `${name}.ts`)))
        .digest('hex')
        .slice(0, 12);
      expect(r[`node.ext.${name}`]).toMatchObject({ status: 'ok', severity: 'required' });
      expect(r[`node.ext.${name}`]?.detail).toContain(hash);
    }
    expect(r['models.route.builder']).toMatchObject({ status: 'ok', detail: 'scripted/alpha listed by pi' });
    expect(r['models.route.fallback']?.status).toBe('ok');
    expect(r['models.route.prompter']).toMatchObject({ status: 'fail', severity: 'required' });
    expect(r['models.route.prompter']?.detail).toMatch(/scripted\/no-such-model is not among pi's scripted models/);
    // The fix names the pi as the user types it: `pi`, or "$FACTORY_PI" when that is the pi asked (never a path).
    // (baseEnv sets FACTORY_PI)
    expect(r['models.route.prompter']?.fix).toContain('`"$FACTORY_PI" --list-models scripted` lists the ids');
    // One row per key, naming the roles that need it.
    expect(r['models.key.DOCTOR_PRESENT_KEY']).toMatchObject({
      status: 'ok',
      detail: 'DOCTOR_PRESENT_KEY (.env) for builder',
    });
    expect(r['models.key.DOCTOR_MISSING_KEY']).toMatchObject({
      status: 'fail',
      detail: 'missing: DOCTOR_MISSING_KEY, needed for prompter',
    });
    expect(r['models.key.DOCTOR_MISSING_KEY']?.fix).toContain('DOCTOR_MISSING_KEY=…');
    expect(r['tests.battery']).toMatchObject({ status: 'skipped', detail: 'skipped by --quick' });
    // models.json sends the scripted provider to a port where nothing listens: the endpoint row says so, with the fix.
    expect(r['models.endpoint.scripted']).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^http:\/\/127\.0\.0\.1:9\/v1\/models cannot be reached: (ECONNREFUSED|bad port)$/),
      fix: expect.stringContaining('start the model server that answers http://127.0.0.1:9/v1'),
    });
    expect(doctorExit(results)).toBe(1);

    const shown = `${formatDoctorRows(results).join('\n')}\n${JSON.stringify(doctorJson(results))}`;
    expect(shown).not.toContain(SECRET);
    expect(formatDoctorRows(results).at(-1)).toMatch(/^\d+ ok, \d+ warnings?, 3 failed, \d+ skipped$/);
  });

  it('one missing key is one ✗ row naming every role that needs it (their routes wait for it)', async () => {
    const roster =
      'gateway: ""\nagents:\n  builder:\n    model: keyless/a\n    auth: { keys: [KEYLESS_API_KEY] }\n  prompter:\n    model: keyless/b\n    auth: { keys: [KEYLESS_API_KEY] }\n';
    const dir = repo({ 'adws/adw_config/factory.config.yaml': roster });
    installNode(dir, FACTORY);
    const results = await doctor(dir);
    const failed = results.filter((x) => x.id.startsWith('models.') && x.status === 'fail');
    expect(failed.map((x) => [x.id, x.detail])).toEqual([
      ['models.key.KEYLESS_API_KEY', 'missing: KEYLESS_API_KEY, needed for builder, prompter'],
    ]);
    const r = byId(results);
    for (const role of ['builder', 'prompter'])
      expect(r[`models.route.${role}`]).toMatchObject({
        status: 'skipped',
        detail: 'not checked: KEYLESS_API_KEY is missing (its own row)',
      });
  });

  it('the model check sees the real state: a route fixed in the roster turns green on the next run', async () => {
    const dir = repo({
      'adws/adw_config/factory.config.yaml': ROSTER.replace('scripted/no-such-model', 'scripted/gamma'),
    });
    installNode(dir, FACTORY);
    const r = byId(await doctor(dir));
    expect(r['models.route.prompter']?.status).toBe('ok');
  });

  it('a repo without .pi/settings.json: pi optional for the tools, the node given at spawn, the rules missing with the fix', async () => {
    const dir = repo({ 'README.md': 'payload\n' });
    const r = byId(await doctor(dir));
    expect(r['node.settings']).toMatchObject({
      status: 'ok',
      detail: `none (the cockpit gives pi its node at each start from ${FACTORY})`,
    });
    expect(r['node.rules']).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining(`factory init --into ${dir}`),
    });
    expect(r['models.routes']).toMatchObject({ status: 'skipped' });
    expect(r['models.route.builder']).toBeUndefined();
  });

  it('a broken rules file and a settings.json that is not JSON fail with a one-line motif', async () => {
    const dir = repo();
    installNode(dir, FACTORY);
    writeFileSync(path.join(dir, '.pi', 'damage-control-rules.yaml'), 'bash:\n  deny: ["rm (-rf"]\n');
    let r = byId(await doctor(dir));
    expect(r['node.rules']?.status).toBe('fail');
    expect(r['node.rules']?.detail).toMatch(/bash\.deny: invalid regular expression "rm \(-rf"/);

    writeFileSync(path.join(dir, '.pi', 'damage-control-rules.yaml'), 'bash: [unclosed\n');
    writeFileSync(path.join(dir, '.pi', 'settings.json'), '{"packages": [');
    r = byId(await doctor(dir));
    expect(r['node.rules']?.detail).toMatch(/YAML syntax error/);
    expect(r['node.settings']?.detail).toMatch(/is not valid JSON/);
    expect(r['node.settings']?.detail).not.toContain('\n');
  });

  it('a pi that does not exist: the pi checks fail, the workspace needs it, exit 1', async () => {
    const dir = repo();
    installNode(dir, FACTORY);
    const results = await doctor(dir, {
      ...baseEnv,
      FACTORY_PI: '/nonexistent/pi',
      FACTORY_CLAUDE: '/nonexistent/claude',
    });
    const r = byId(results);
    expect(r['tools.pi']).toMatchObject({ status: 'fail', severity: 'required' });
    expect(r['tools.pi']?.detail).toMatch(/FACTORY_PI=\/nonexistent\/pi does not exist/);
    expect(r['pi.version']?.status).toBe('fail');
    expect(r['tools.harness']).toMatchObject({ status: 'fail', detail: 'neither pi nor claude runs here' });
    expect(r['tools.claude']?.status).toBe('skipped');
    expect(doctorExit(results)).toBe(1);
  });

  it('only the selected checks run', async () => {
    const dir = repo();
    const ctx = await createDoctorContext({ cwd: dir, env: baseEnv, factoryRoot: FACTORY });
    const results = await runDoctor(ctx, { only: ['tools.git', 'node.ext'] });
    const ids = results.map((x) => x.id);
    expect(ids[0]).toBe('tools.git');
    expect(ids.slice(1).every((id) => id.startsWith('node.ext.'))).toBe(true);
    for (const name of ['damage-control', 'factory-obs', 'factory-report', 'factory-guard', 'factory-inventory'])
      expect(ids).toContain(`node.ext.${name}`);
  });

  it('the battery runs the node for real on the pi under test: green, then red naming what is missing', async () => {
    const dir = repo();
    const pi = await piForTests();
    const ctx = { ...(await createDoctorContext({ cwd: dir, env: process.env, factoryRoot: FACTORY })), pi };
    let [result] = await runDoctor(ctx, { only: ['tests.battery'] });
    expect(result, result?.detail).toMatchObject({ status: 'ok' });
    expect(result?.detail).toContain(`8 probes green on pi ${(await checkPi(pi)).version} in `);

    const partial = makePartialFactory(['factory-report']);
    try {
      [result] = await runDoctor({ ...ctx, factoryRoot: partial.root }, { only: ['tests.battery'] });
    } finally {
      partial.cleanup();
    }
    expect(result).toMatchObject({ status: 'fail', severity: 'required' });
    expect(result?.detail).toMatch(/^factory-inventory: missing: factory-report \(and 1 more: factory-report\)$/);
  });
});
