// The spec a build or a best-of-N is asked to implement: one check for both (it exists, is a file, is not empty).
import fs from 'node:fs';
import path from 'node:path';
import { PhaseFailure } from '../contract/errors.js';

export interface SpecFile {
  /** Absolute path. */
  abs: string;
  bytes: number;
}

/** The spec at `specPath` (relative to `cwd`), or a PhaseFailure of kind `check` saying what is wrong with it. */
export function checkSpecFile(cwd: string, specPath: string): SpecFile {
  const abs = path.resolve(cwd, specPath);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(abs);
  } catch {
    throw new PhaseFailure(`spec not found: ${specPath} (looked for ${abs})`, undefined, 'check');
  }
  if (!stat.isFile()) throw new PhaseFailure(`spec is not a file: ${specPath}`, undefined, 'check');
  if (fs.readFileSync(abs, 'utf8').trim() === '')
    throw new PhaseFailure(`spec is empty: ${specPath} (nothing to build)`, undefined, 'check');
  return { abs, bytes: stat.size };
}
