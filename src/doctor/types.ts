// The doctor's vocabulary: a check, its result, and the context every check probes. Pure types.
import type { DotEnv } from '../config/env.js';
import type { WorkspacePaths } from '../config/paths.js';
import type { PiCommand } from '../pi/resolve.js';
import type { Roster } from '../config/roster.js';

export type DoctorCategory = 'tools' | 'pi' | 'node' | 'repo' | 'models' | 'tests';
export type DoctorSeverity = 'required' | 'optional';
export type DoctorStatus = 'ok' | 'warn' | 'fail' | 'skipped';

/** Display order of the categories (rows are grouped by it). */
export const DOCTOR_CATEGORIES: readonly DoctorCategory[] = ['tools', 'pi', 'node', 'repo', 'models', 'tests'];

export interface CheckResult {
  status: DoctorStatus;
  /** One line: what was found (never a secret's value). */
  detail: string;
  /** One line naming the exact command (or edit) that fixes it; absent when there is nothing to fix. */
  fix?: string;
}

export interface DoctorContext {
  /** The workspace (a git top-level when there is one). */
  root: string;
  paths: WorkspacePaths;
  /** The factory's own folder (its `.pi/extensions`, its node_modules). */
  factoryRoot: string;
  /** The real environment (names of keys are read from it, values never leave it). */
  env: NodeJS.ProcessEnv;
  /** `.env` of the workspace, loaded once by the caller. */
  dotenv: DotEnv;
  /** The roster that applies, or why it could not be read (an invalid roster is a failed check, not a crash). */
  roster: Roster | Error;
  /** The pi that would run, or why none resolves. */
  pi: PiCommand | Error;
  /** Cap of one probe (a spawned program); the battery has its own, longer cap. */
  probeTimeoutMs?: number;
  batteryTimeoutMs?: number;
  /** `--gates`: the payload gates run once on HEAD (repo.gates.head). */
  runGates?: boolean;
}

export interface DoctorCheck {
  /** Stable, dotted (`tools.git`, `node.ext.factory-obs`); `factory doctor <id…>` selects by it or its prefix. */
  id: string;
  category: DoctorCategory;
  severity: DoctorSeverity;
  /** Short human title for rows and the checklist. */
  title: string;
  /** Skipped by `--quick` (the slow ones: the battery). */
  slow?: boolean;
  run(ctx: DoctorContext): Promise<CheckResult>;
}

/** A check with its outcome, as streamed and reported. */
export interface DoctorResult extends CheckResult {
  id: string;
  category: DoctorCategory;
  severity: DoctorSeverity;
  title: string;
  /** Wall time of this check, ms. */
  ms: number;
}
