// Building the doctor's context once per `factory doctor` (commands/doctor.ts): the workspace, its `.env`, the roster and the pi that
// would run. Failures to read the roster or to find pi are kept as values: they become failed checks.
import { loadDotEnv } from '../config/env.js';
import { resolveWorkspaceRoot, workspacePaths } from '../config/paths.js';
import { factoryRoot as findFactoryRoot, resolvePi } from '../pi/resolve.js';
import { loadRosterIfPresent } from '../config/roster.js';
import type { DoctorContext } from './types.js';

export interface DoctorContextOptions {
  /** Where the doctor was started (`--cwd`). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `--config`: a roster file other than the workspace's. */
  config?: string;
  factoryRoot?: string;
}

export async function createDoctorContext(opts: DoctorContextOptions): Promise<DoctorContext> {
  const root = await resolveWorkspaceRoot(opts.cwd);
  const factoryRoot = opts.factoryRoot ?? findFactoryRoot();
  const roster = await loadRosterIfPresent(root, opts.config).catch((error: unknown) =>
    error instanceof Error ? error : new Error(String(error)),
  );
  // The roster may name its pi, like FACTORY_PI (an explicit FACTORY_PI still wins).
  const piName = opts.env.FACTORY_PI ?? (roster instanceof Error ? undefined : roster.pi);
  const pi = await resolvePi({ env: { ...opts.env, FACTORY_PI: piName }, factoryRoot }).catch((error: unknown) =>
    error instanceof Error ? error : new Error(String(error)),
  );
  return {
    root,
    paths: workspacePaths(root),
    factoryRoot,
    env: opts.env,
    dotenv: loadDotEnv(root, opts.env),
    roster,
    pi,
  };
}
