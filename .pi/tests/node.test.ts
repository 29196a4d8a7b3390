// installNode (src/pi/node.ts): the node's settings entry, merged safely, and proof by the real pi that
// a repo prepared this way loads the five socle extensions from the factory folder.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installNode, isFactoryPackage, mergePackages, nodePackageEntry } from '../../src/pi/node.js';
import { say } from '../../src/scripted/tape.js';
import { runPiJson, type Rig } from '../../test/helpers/rig.js';
import { FACTORY_ROOT, inventories, makeNodeProject, nodeEnv, runNode, startNodeRig } from './helpers/node-rig.js';
import { packageSource } from '../../src/config/paths.js';

const SOCLE_FILES = ['damage-control', 'factory-obs', 'factory-report', 'factory-guard', 'factory-inventory'];

describe('packageSource', () => {
  it('is relative to the target .pi folder, POSIX, and always reads as a path', () => {
    expect(packageSource('/w/app/.pi', '/w/factory')).toBe('../../factory');
    expect(packageSource('/w/app/.pi', '/w/app/.pi/vendor/factory')).toBe('./vendor/factory');
    expect(packageSource('/w/app/.pi', '/w/app/.pi')).toBe('.');
  });
});

describe('mergePackages', () => {
  const entry = nodePackageEntry('../../factory');

  it('keeps other entries and appends the node', () => {
    const { packages, replaced } = mergePackages(['npm:other', { source: '../x', skills: [] }], entry, '/w/app/.pi');
    expect(packages).toEqual(['npm:other', { source: '../x', skills: [] }, entry]);
    expect(replaced).toBe(false);
  });

  it('replaces an entry with the same source in place, however it was written', () => {
    const { packages, replaced } = mergePackages(
      ['npm:a', '../../factory', 'npm:b', { source: '/w/factory/' }],
      entry,
      '/w/app/.pi',
    );
    expect(packages).toEqual(['npm:a', entry, 'npm:b']);
    expect(replaced).toBe(true);
  });

  it('replaces another install of the factory (elsewhere on disk, or gone with only its node filter left)', () => {
    const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-two-installs-')));
    try {
      // An older global install, still on disk: it holds the node's report extension.
      const old = path.join(scratch, 'old-prefix/lib/node_modules/factory-cockpit');
      mkdirSync(path.join(old, '.pi/extensions'), { recursive: true });
      writeFileSync(path.join(old, '.pi/extensions/factory-report.ts'), '');
      const app = path.join(scratch, 'app/.pi');
      const oldEntry = nodePackageEntry(packageSource(app, old));
      const gone = nodePackageEntry('../../removed-prefix/lib/node_modules/factory-cockpit');
      const { packages, replaced } = mergePackages(
        ['npm:other', oldEntry, gone, { source: '../unrelated', extensions: ['x.ts'] }],
        entry,
        app,
      );
      expect(packages).toEqual(['npm:other', entry, { source: '../unrelated', extensions: ['x.ts'] }]);
      expect(replaced).toBe(true);
      expect(isFactoryPackage(oldEntry, app) && isFactoryPackage(gone, app)).toBe(true);
      expect(
        isFactoryPackage('npm:other', app) || isFactoryPackage({ source: '../unrelated', extensions: ['x.ts'] }, app),
      ).toBe(false);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe('installNode', () => {
  let root: string;
  let factory: string;
  let app: string;

  beforeAll(() => {
    root = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-install-')));
    factory = path.join(root, 'factory');
    app = path.join(root, 'app');
    mkdirSync(path.join(factory, '.pi', 'extensions'), { recursive: true });
    writeFileSync(path.join(factory, '.pi', 'damage-control-rules.yaml'), 'bash: {}\n');
    mkdirSync(app);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('writes the node entry for two sibling repos, loading socle extensions only', () => {
    const result = installNode(app, factory);
    const settings = JSON.parse(readFileSync(path.join(app, '.pi', 'settings.json'), 'utf8'));
    expect(settings.packages).toHaveLength(1);
    const [entry] = settings.packages;
    expect(entry.source).toBe('../../factory');
    expect(entry.extensions).toEqual(expect.arrayContaining(SOCLE_FILES.map((n) => `.pi/extensions/${n}.ts`)));
    expect(entry.extensions.every((p: string) => p.startsWith('.pi/extensions/'))).toBe(true);
    expect([entry.skills, entry.prompts, entry.themes]).toEqual([[], [], []]);
    expect(result.rulesCopied).toBe(true);
    expect(readFileSync(path.join(app, '.pi', 'damage-control-rules.yaml'), 'utf8')).toBe('bash: {}\n');
  });

  it('merges into existing settings and never overwrites the target rules', () => {
    writeFileSync(
      path.join(app, '.pi', 'settings.json'),
      JSON.stringify({ theme: 'light', packages: ['npm:kept', '../../factory'] }),
    );
    writeFileSync(path.join(app, '.pi', 'damage-control-rules.yaml'), 'paths: {}\n');
    const result = installNode(app, factory);
    const settings = JSON.parse(readFileSync(path.join(app, '.pi', 'settings.json'), 'utf8'));
    expect(settings.theme).toBe('light');
    expect(settings.packages[0]).toBe('npm:kept');
    expect(settings.packages[1].source).toBe('../../factory');
    expect(settings.packages).toHaveLength(2);
    expect(result).toMatchObject({ replaced: true, rulesCopied: false });
    expect(readFileSync(path.join(app, '.pi', 'damage-control-rules.yaml'), 'utf8')).toBe('paths: {}\n');
  });

  it('refuses invalid JSON or a missing target without writing anything', () => {
    const settingsFile = path.join(app, '.pi', 'settings.json');
    writeFileSync(settingsFile, '{ not json');
    expect(() => installNode(app, factory)).toThrow(/settings\.json is not valid JSON .*nothing was written/);
    expect(readFileSync(settingsFile, 'utf8')).toBe('{ not json');
    writeFileSync(settingsFile, '{"packages": "npm:x"}');
    expect(() => installNode(app, factory)).toThrow('"packages" must be an array');
    expect(() => installNode(path.join(root, 'absent'), factory)).toThrow(/does not exist/);
    expect(() => installNode(app, path.join(root, 'app'))).toThrow(/is not a factory folder/);
  });
});

describe('the node in the real pi', () => {
  let rig: Rig;

  beforeAll(async () => {
    rig = await startNodeRig({ default: [say('ok'), say('ok')] });
  });
  afterAll(async () => {
    await rig?.cleanup();
  });

  it('a repo prepared by installNode loads the five from the factory folder (--approve)', async () => {
    const project = makeNodeProject();
    try {
      const settings = JSON.parse(readFileSync(path.join(project.dir, '.pi', 'settings.json'), 'utf8'));
      expect(settings.packages[0].source).toBe(packageSource(path.join(project.dir, '.pi'), FACTORY_ROOT));
      const run = await runNode(rig, project, 'hello');
      // Later socle members (factory-compact, factory-context) may be present too: the five must be.
      expect(inventories(run.events)).toEqual([
        { pi_version: rig.piVersion, present: expect.arrayContaining(SOCLE_FILES), missing: [] },
      ]);
    } finally {
      project.cleanup();
    }
  });

  it('pi run inside the factory itself finds the same five by project auto-discovery', async () => {
    const project = makeNodeProject(); // only for its data dir and schema file
    try {
      const run = await runPiJson(
        { ...rig, env: { ...rig.env, ...nodeEnv(project) } },
        { cwd: FACTORY_ROOT, prompt: 'hello', args: ['--approve'] },
      );
      expect(inventories(run.events)[0]?.missing).toEqual([]);
    } finally {
      project.cleanup();
    }
  });
});
