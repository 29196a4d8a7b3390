// Real-pi harness for the socle's tests: a throwaway project with the factory node installed the way a
// user's repo gets it (installNode → a `packages` entry in .pi/settings.json), a scripted model, and
// one `pi -p --mode json --approve` run with the factory's node environment.
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installNode } from '../../../src/pi/node.js';
import type { Tapes } from '../../../src/scripted/tape.js';
import { runPiJson, startRig, type PiEvent, type PiRun, type Rig } from '../../../test/helpers/rig.js';

/** The factory checkout these tests belong to. */
export const FACTORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The base envelope schema, shaped like the core's zod output (additional fields pass). */
export const ENVELOPE_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'BuildEnvelope',
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['success', 'fail'], description: 'success or fail' },
    summary: { type: 'string', description: 'one sentence' },
    artifacts: { type: 'array', items: { type: 'string' } },
    changed_files: { type: 'array', items: { type: 'string' } },
  },
  required: ['status', 'changed_files'],
  additionalProperties: {},
};

export interface NodeProject {
  dir: string;
  dataDir: string;
  schemaFile: string;
  cleanup(): void;
}

/** A fresh project folder with the node installed from `factoryRoot` (the real factory by default). */
export function makeNodeProject(factoryRoot = FACTORY_ROOT): NodeProject {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-node-')));
  installNode(dir, factoryRoot);
  const dataDir = path.join(dir, 'adws', 'adw_data');
  const schemaFile = path.join(dataDir, 'schemas', 'BuildEnvelope.json');
  mkdirSync(path.dirname(schemaFile), { recursive: true });
  writeFileSync(schemaFile, JSON.stringify(ENVELOPE_SCHEMA, null, 2));
  return { dir, dataDir, schemaFile, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A copy of the factory's node (package.json manifest, .pi/extensions, .pi/lib) without some extension
 * files, its node_modules linked to the real one: a node where those extensions are really absent.
 */
export function makePartialFactory(without: string[]): { root: string; cleanup(): void } {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-partial-')));
  cpSync(path.join(FACTORY_ROOT, 'package.json'), path.join(root, 'package.json'));
  cpSync(path.join(FACTORY_ROOT, '.pi', 'lib'), path.join(root, '.pi', 'lib'), { recursive: true });
  cpSync(path.join(FACTORY_ROOT, '.pi', 'damage-control-rules.yaml'), path.join(root, '.pi', 'damage-control-rules.yaml'));
  cpSync(path.join(FACTORY_ROOT, '.pi', 'extensions'), path.join(root, '.pi', 'extensions'), {
    recursive: true,
    filter: (source) => !without.some((name) => path.basename(source) === `${name}.ts`),
  });
  symlinkSync(path.join(FACTORY_ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function nodeEnv(project: NodeProject, extra: Record<string, string> = {}): Record<string, string> {
  return {
    FACTORY_ENVELOPE_SCHEMA: project.schemaFile,
    FACTORY_EXPECTED: 'factory-report,factory-inventory,damage-control,factory-obs,factory-guard',
    FACTORY_PHASE: 'build',
    FACTORY_ROLE: 'builder',
    FACTORY_ADW_ID: 'a1b2c3d4',
    FACTORY_DATA_DIR: project.dataDir,
    ...extra,
  };
}

/** One json-mode run of the real pi in `project`, with the project trusted (`--approve`). */
export function runNode(rig: Rig, project: NodeProject, prompt: string, env: Record<string, string> = nodeEnv(project)): Promise<PiRun> {
  return runPiJson({ ...rig, env: { ...rig.env, ...env } }, { cwd: project.dir, prompt, args: ['--approve'] });
}

export function startNodeRig(tapes: Tapes): Promise<Rig> {
  return startRig({ tapes });
}

export function toolEnds(events: PiEvent[], toolName: string): PiEvent[] {
  return events.filter((e) => e.type === 'tool_execution_end' && e.toolName === toolName);
}

export function resultText(event: PiEvent | undefined): string {
  const result = (event?.result ?? {}) as { content?: { type: string; text?: string }[] };
  return (result.content ?? []).map((c) => c.text ?? '').join('');
}

export function inventories(events: PiEvent[]): { pi_version: string; present: string[]; missing: string[] }[] {
  return events
    .filter((e) => e.type === 'entry_appended')
    .map((e) => e.entry as { type?: string; customType?: string; data?: unknown })
    .filter((entry) => entry?.type === 'custom' && entry.customType === 'factory-inventory')
    .map((entry) => entry.data as { pi_version: string; present: string[]; missing: string[] });
}
