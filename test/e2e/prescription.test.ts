// `factory doctor --layer node|station --into <repo>` (src/doctor/prescription.ts): the merge into a
// sibling repository's settings, every refusal leaving the target untouched, and the proof by the real
// pi 0.85.1 (scripted model, --approve) that the prescribed repo loads the node from the factory folder.
//
// Layout: a temp folder holding `factory` — a symlink to this very checkout, so pi loads the real
// extensions — and `app`, a fresh git repository next to it: the two sibling repos of the spec.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrescriptionError, describePrescription, parseLayer, prescribe } from '../../src/doctor/prescription.js';
import { NODE_EXTENSIONS } from '../../src/pi/node.js';
import { say } from '../../src/scripted/tape.js';
import { extensionsOnDisk, phaseEnv } from '../../.pi/tests/helpers/battery.js';
import { ENVELOPE_SCHEMA, FACTORY_ROOT, inventories } from '../../.pi/tests/helpers/node-rig.js';
import { git } from '../helpers/repo.js';
import { runPiJson, startRig, type Rig } from '../helpers/rig.js';

let root: string;
let factory: string;

function gitRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  return dir;
}

function settingsOf(repo: string): { packages: unknown[]; [key: string]: unknown } {
  return JSON.parse(readFileSync(path.join(repo, '.pi', 'settings.json'), 'utf8'));
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-prescription-')));
  factory = path.join(root, 'factory');
  symlinkSync(FACTORY_ROOT, factory, 'dir');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('prescribe: the merge', () => {
  it('node layer into a sibling repo: ../../factory, the socle extensions only, rules seeded', () => {
    const app = gitRepo(path.join(root, 'node-app'));
    const result = prescribe({ layer: 'node', into: app, factoryRoot: factory });
    const [entry] = settingsOf(app).packages as Record<string, unknown>[];
    expect(entry).toEqual({
      source: '../../factory',
      extensions: NODE_EXTENSIONS.map((name) => `.pi/extensions/${name}.ts`),
      skills: [],
      prompts: [],
      themes: [],
    });
    expect(result).toMatchObject({
      layer: 'node',
      settingsFile: path.join(app, '.pi', 'settings.json'),
      replaced: false,
      rulesCopied: true,
    });
    expect(existsSync(path.join(app, '.pi', 'damage-control-rules.yaml'))).toBe(true);
    expect(describePrescription(result)).toContain('source ../../factory');
  });

  it('station layer: the whole package as a string source, same-source entries replaced, others and other keys kept', () => {
    const app = gitRepo(path.join(root, 'station-app'));
    mkdirSync(path.join(app, '.pi'));
    const before = {
      theme: 'light',
      packages: ['npm:kept-one', { source: '../../factory/', skills: [] }, { source: '../vendor/x' }],
    };
    writeFileSync(path.join(app, '.pi', 'settings.json'), JSON.stringify(before));
    const result = prescribe({ layer: 'station', into: app, factoryRoot: factory });
    expect(settingsOf(app)).toEqual({
      theme: 'light',
      packages: ['npm:kept-one', '../../factory', { source: '../vendor/x' }],
    });
    expect(result).toMatchObject({ layer: 'station', entry: '../../factory', replaced: true });
    // Back to the node layer: the station entry (same source) gives way in place.
    const again = prescribe({ layer: 'node', into: app, factoryRoot: factory });
    const packages = settingsOf(app).packages;
    expect(packages).toHaveLength(3);
    expect((packages[1] as { source: string }).source).toBe('../../factory');
    expect(again.replaced).toBe(true);
  });

  it('a folder inside the target work tree counts as the target, with its own relative source', () => {
    const app = gitRepo(path.join(root, 'mono'));
    const sub = path.join(app, 'packages', 'web');
    mkdirSync(sub, { recursive: true });
    const result = prescribe({ layer: 'node', into: sub, factoryRoot: factory });
    expect(result.settingsFile).toBe(path.join(sub, '.pi', 'settings.json'));
    expect((settingsOf(sub).packages[0] as { source: string }).source).toBe('../../../../factory');
  });
});

describe('prescribe: refusals write nothing', () => {
  function refused(run: () => unknown, motif: RegExp): void {
    let caught: unknown;
    try {
      run();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PrescriptionError);
    const message = (caught as Error).message;
    expect(message).toMatch(motif);
    expect(message).not.toContain('\n');
  }

  it('a missing target', () => {
    const absent = path.join(root, 'absent');
    refused(
      () => prescribe({ layer: 'node', into: absent, factoryRoot: factory }),
      /^target repository .*absent does not exist; nothing was written$/,
    );
    expect(existsSync(absent)).toBe(false);
  });

  it('a target that is not in a git repository', () => {
    const plain = path.join(root, 'plain');
    mkdirSync(plain);
    refused(
      () => prescribe({ layer: 'node', into: plain, factoryRoot: factory }),
      /is not inside a git repository; nothing was written$/,
    );
    expect(existsSync(path.join(plain, '.pi'))).toBe(false);
  });

  it('settings that are not JSON, or whose packages is not a list, stay byte for byte', () => {
    const app = gitRepo(path.join(root, 'broken-app'));
    mkdirSync(path.join(app, '.pi'));
    const file = path.join(app, '.pi', 'settings.json');
    for (const text of ['{ "packages": [', '{"packages": "npm:x"}', '[1, 2]']) {
      writeFileSync(file, text);
      refused(() => prescribe({ layer: 'station', into: app, factoryRoot: factory }), /nothing was written$/);
      expect(readFileSync(file, 'utf8')).toBe(text);
    }
    expect(existsSync(path.join(app, '.pi', 'damage-control-rules.yaml'))).toBe(false);
  });

  it('a bad layer, a folder that is no factory, and the factory itself', () => {
    const app = gitRepo(path.join(root, 'misc-app'));
    expect(() => parseLayer('all')).toThrow('--layer must be node or station, got "all"');
    expect(() => parseLayer(undefined)).toThrow('--layer must be node or station, got nothing');
    refused(
      () => prescribe({ layer: 'node', into: app, factoryRoot: path.join(root, 'plain') }),
      /is not a factory folder/,
    );
    refused(() => prescribe({ layer: 'node', into: FACTORY_ROOT, factoryRoot: factory }), /is the factory itself/);
    expect(existsSync(path.join(app, '.pi'))).toBe(false);
  });

  it('a factory installed elsewhere (a global npm prefix): an absolute source, true at any clone depth on this machine, and said not to commit', () => {
    const prefix = path.join(root, 'prefix', 'lib', 'node_modules', 'factory-cockpit');
    mkdirSync(path.join(prefix, '.pi', 'extensions'), { recursive: true });
    writeFileSync(path.join(prefix, 'package.json'), '{"name":"factory-cockpit"}');
    const shallow = gitRepo(path.join(root, 'global-app'));
    const deep = gitRepo(path.join(root, 'work', 'team', 'global-app'));
    const sources = [shallow, deep].map((app) => {
      const result = prescribe({ layer: 'node', into: app, factoryRoot: prefix });
      expect(describePrescription(result)).toMatch(/a path on this machine: keep it out of commits/);
      return (settingsOf(app).packages[0] as { source: string }).source;
    });
    expect(sources).toEqual([prefix, prefix]);
  });

  it('a factory installed in the target repo (a dev dependency) is not the factory itself', () => {
    const app = gitRepo(path.join(root, 'dev-dep-app'));
    const installed = path.join(app, 'node_modules', 'factory-cockpit');
    mkdirSync(path.join(installed, '.pi', 'extensions'), { recursive: true });
    writeFileSync(path.join(installed, 'package.json'), '{"name":"factory-cockpit"}');
    const result = prescribe({ layer: 'node', into: app, factoryRoot: installed });
    expect(typeof result.entry === 'string' ? result.entry : result.entry.source).toBe(
      '../node_modules/factory-cockpit',
    );
  });
});

describe('the real pi in a prescribed repo', () => {
  let rig: Rig;
  const expected = extensionsOnDisk(FACTORY_ROOT);

  beforeAll(async () => {
    rig = await startRig({ tapes: { default: [say('ok'), say('ok'), say('ok'), say('ok')] } });
  });
  afterAll(async () => {
    await rig?.cleanup();
  });

  function project(name: string): { dir: string; dataDir: string; schemaFile: string } {
    const dir = gitRepo(path.join(root, name));
    const dataDir = path.join(root, `${name}-data`);
    const schemaFile = path.join(dataDir, 'schemas', 'BuildEnvelope.json');
    mkdirSync(path.dirname(schemaFile), { recursive: true });
    writeFileSync(schemaFile, JSON.stringify(ENVELOPE_SCHEMA));
    return { dir, dataDir, schemaFile };
  }

  const run = (target: ReturnType<typeof project>, args: string[]) =>
    runPiJson(
      { ...rig, env: { ...rig.env, ...phaseEnv(target, expected) } },
      { cwd: target.dir, prompt: 'hello', args },
    );

  it.each(['node', 'station'] as const)(
    '%s layer: pi started in the target with --approve loads every node extension',
    async (layer) => {
      const target = project(`pi-${layer}`);
      const unprescribed = await run(target, ['--approve']);
      expect(inventories(unprescribed.events)).toEqual([]); // nothing loads the node before the prescription
      prescribe({ layer, into: target.dir, factoryRoot: factory });
      const [loaded, untrusted] = await Promise.all([run(target, ['--approve']), run(target, [])]);
      expect(loaded.exitCode).toBe(0);
      expect(inventories(loaded.events)).toEqual([
        { pi_version: rig.piVersion, present: [...expected].sort(), missing: [] },
      ]);
      expect(expected).toEqual(
        expect.arrayContaining([
          'damage-control',
          'factory-obs',
          'factory-report',
          'factory-guard',
          'factory-inventory',
        ]),
      );
      expect(inventories(untrusted.events)).toEqual([]); // without --approve pi skips project packages silently
    },
  );
});
