// For the prescription test: which node extensions are on disk, and the environment that makes one pi run a
// full factory phase of the node. (The battery's own probes live in src/doctor/nodeBattery.ts.)
import type { NodeProject } from './node-rig.js';

export { extensionsOnDisk } from '../../../src/doctor/nodeBattery.js';

/** A factory phase environment that expects exactly the extensions on disk (so a silent one is missing). */
export function phaseEnv(
  project: Pick<NodeProject, 'schemaFile' | 'dataDir'>,
  expected: string[],
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    FACTORY_ENVELOPE_SCHEMA: project.schemaFile,
    FACTORY_EXPECTED: expected.join(','),
    FACTORY_PHASE: 'build',
    FACTORY_ROLE: 'builder',
    FACTORY_ADW_ID: 'b4773e11',
    FACTORY_DATA_DIR: project.dataDir,
    ...extra,
  };
}
