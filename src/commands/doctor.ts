// `factory doctor [--quick] [--strict] [--json] [<id>…]` and the prescription `factory doctor --layer node|station
// --into <repo>`: zero tokens, every check probing real state, run concurrently.
import path from 'node:path';
import { describePrescription, parseLayer, prescribe } from '../doctor/prescription.js';
import { UsageError } from '../errors.js';
import { factoryRoot } from '../pi/resolve.js';
import type { CommandFlags } from './workspace.js';

export interface DoctorFlags extends CommandFlags {
  quick?: boolean;
  strict?: boolean;
  layer?: string;
  into?: string;
}

export function prescriptionOutput(flags: DoctorFlags): string {
  if (flags.layer === undefined || flags.into === undefined) throw new UsageError('the prescription needs both --layer node|station and --into <repo>');
  const result = prescribe({ layer: parseLayer(flags.layer), into: path.resolve(flags.into), factoryRoot: factoryRoot() });
  return `${describePrescription(result)}\n`;
}

/** Headless doctor: rows on stderr as checks resolve (grouped at the end), or one JSON document on stdout. */
export async function doctorHeadless(ids: string[], flags: DoctorFlags): Promise<{ stdout: string; exit: number }> {
  const [{ createDoctorContext }, { doctorChecks }, { runDoctor, doctorExit, unknownSelectors }, { formatDoctorRows, doctorJson }] = await Promise.all([
    import('../doctor/context.js'),
    import('../doctor/checks.js'),
    import('../doctor/run.js'),
    import('../doctor/report.js'),
  ]);
  const ctx = await createDoctorContext({ cwd: flags.cwd ?? process.cwd(), env: process.env, config: flags.config });
  const unknown = unknownSelectors(doctorChecks(ctx), ids);
  if (unknown.length > 0) throw new UsageError(`unknown check ${unknown.map((u) => JSON.stringify(u)).join(', ')} (see factory doctor --json for the ids)`);
  const results = await runDoctor(ctx, { only: ids.length > 0 ? ids : undefined, quick: flags.quick });
  const exit = doctorExit(results, { strict: flags.strict });
  if (flags.json) return { stdout: `${JSON.stringify(doctorJson(results))}\n`, exit };
  process.stderr.write(`${formatDoctorRows(results).join('\n')}\n`);
  return { stdout: '', exit };
}
