// `factory doctor [--quick] [--strict] [--json] [<id>…]` and the prescription `factory doctor --layer node|station
// --into <repo>`: zero tokens, every check probing real state, run concurrently.
import path from 'node:path';
import { describePrescription, parseLayer, prescribe } from '../doctor/prescription.js';
import { UsageError } from '../contract/errors.js';
import { factoryRoot } from '../pi/resolve.js';
import type { CommandFlags, Workspace } from './workspace.js';

export interface DoctorFlags extends CommandFlags {
  quick?: boolean;
  strict?: boolean;
  /** Run the payload gates once on HEAD (repo.gates.head). */
  gates?: boolean;
  layer?: string;
  into?: string;
}

export function prescriptionOutput(flags: DoctorFlags): string {
  if (flags.layer === undefined || flags.into === undefined)
    throw new UsageError('the prescription needs both --layer node|station and --into <repo>');
  const result = prescribe({
    layer: parseLayer(flags.layer),
    into: path.resolve(flags.into),
    factoryRoot: factoryRoot(),
  });
  return `${describePrescription(result)}\n`;
}

/** Headless doctor: the checklist is the command's output, on stdout (rows, or one JSON document with --json). */
export async function doctorHeadless(ids: string[], flags: DoctorFlags): Promise<{ stdout: string; exit: number }> {
  const [session, { formatDoctorRows, doctorJson }] = await Promise.all([
    doctorSession(ids, flags),
    import('../doctor/report.js'),
  ]);
  const results = await session.pass();
  const exit = session.exit(results);
  if (flags.json) return { stdout: `${JSON.stringify(doctorJson(results))}\n`, exit };
  return { stdout: `${formatDoctorRows(results).join('\n')}\n`, exit };
}

/**
 * The doctor over a running workflow (`d` on its screen): the roster, folder and environment the run was started
 * with — not the repository's default roster, nor the shell's environment when the run has its own (the demo's).
 */
export function doctorOfRun(ws: Pick<Workspace, 'root' | 'rosterFile' | 'real'>) {
  return doctorSession([], { cwd: ws.root, config: ws.rosterFile, retries: 0, ui: true, json: false }, ws.real);
}

/** Everything a doctor pass needs, loaded once; `pass` runs one pass with optional live hooks. */
export async function doctorSession(ids: string[], flags: DoctorFlags, env: NodeJS.ProcessEnv = process.env) {
  const [{ createDoctorContext }, { doctorChecks }, run] = await Promise.all([
    import('../doctor/context.js'),
    import('../doctor/checks.js'),
    import('../doctor/run.js'),
  ]);
  const ctx = {
    ...(await createDoctorContext({ cwd: flags.cwd ?? process.cwd(), env, config: flags.config })),
    ...(flags.gates ? { runGates: true } : {}),
  };
  const checks = doctorChecks(ctx);
  const unknown = run.unknownSelectors(checks, ids);
  if (unknown.length > 0)
    throw new UsageError(
      `unknown check ${unknown.map((u) => JSON.stringify(u)).join(', ')} (see factory doctor --json for the ids)`,
    );
  const only = ids.length > 0 ? ids : undefined;
  return {
    planned: checks.filter((c) => run.selects(only, c.id)),
    pass: (hooks: Pick<import('../doctor/run.js').RunDoctorOptions, 'onStart' | 'onUpdate'> = {}) =>
      run.runDoctor(ctx, { only, quick: flags.quick, ...hooks }),
    exit: (results: import('../doctor/types.js').DoctorResult[]) => run.doctorExit(results, { strict: flags.strict }),
  };
}
