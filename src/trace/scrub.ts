// The run's files, masked once more with the cockpit's redactor when the run closes. factory-obs masks what the
// node can know (its env, the project's `.env`), but a credential of the cockpit's real environment that was never
// given to pi is unknown there: if the agent got hold of it anyway (it can read its parent's /proc environ), the
// harness trace holds it raw until this pass. The same goes for pi's stderr (a provider's 401 quoting a key) and
// for harvest.json, written by the bon workflow from its arms' motifs. Each file is rewritten only when the
// redactor changes it, atomically (a temp file renamed over it): a reader sees the old bytes or the new, never half.
// pi's own session files are not touched: they are pi's (see the README, and the doctor's keys check).
import fs from 'node:fs';
import path from 'node:path';
import type { WorkspacePaths } from '../config/paths.js';
import { redactDeep, redactJsonLine, type Redactor } from '../contract/redact.js';
import { parseObjectLine } from './jsonl.js';
import { harnessFileName, traceLayout } from './runLog.js';
import { harvestFile } from '../config/paths.js';

/** Replace `file` by `next(text)` when that differs; false when unchanged or absent. Keeps the file's mode. */
export function rewriteIfChanged(file: string, next: (text: string) => string): boolean {
  let text: string;
  let mode: number;
  try {
    text = fs.readFileSync(file, 'utf8');
    mode = fs.statSync(file).mode & 0o777;
  } catch {
    return false;
  }
  const masked = next(text);
  if (masked === text) return false;
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.scrub`);
  try {
    fs.writeFileSync(temporary, masked, { mode });
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
  return true;
}

/** A JSONL file (a harness trace): each line's strings masked, the line structure kept. */
export function scrubJsonl(file: string, redact: Redactor): boolean {
  return rewriteIfChanged(file, (text) =>
    text
      .split('\n')
      .map((line) => redactJsonLine(redact, line))
      .join('\n'),
  );
}

/** A plain text file (pi's stderr log). */
export function scrubText(file: string, redact: Redactor): boolean {
  return rewriteIfChanged(file, (text) => redact(text));
}

/** A pretty-printed JSON file (harvest.json): its strings masked, written back in the same shape. */
export function scrubJson(file: string, redact: Redactor): boolean {
  return rewriteIfChanged(file, (text) => {
    if (redact(text) === text) return text;
    try {
      return `${JSON.stringify(redactDeep(redact, JSON.parse(text) as unknown), null, 2)}\n`;
    } catch {
      return redact(text);
    }
  });
}

/** The sessions the ledger declares for a run. Only lines naming the run are parsed: a close stays cheap however
 * many runs the ledger holds (30k lines parsed whole cost ~50 ms; scanned for the id, a few). */
export function sessionsOfRun(ledgerFile: string, adwId: string): string[] {
  let raw: string;
  try {
    raw = fs.readFileSync(ledgerFile, 'utf8');
  } catch {
    return [];
  }
  const ids = new Set<string>();
  for (const line of raw.split('\n')) {
    if (!line.includes(adwId)) continue;
    const entry = parseObjectLine(line);
    if (entry?.adw_id === adwId && typeof entry.session_id === 'string') ids.add(entry.session_id);
  }
  return [...ids];
}

export interface ScrubReport {
  /** Harness trace files (names under traces/harness) that were rewritten: the index must read them afresh. */
  harness: string[];
  /** Every file rewritten, for a warning or a test. */
  files: string[];
  /** Files that could not be rewritten, with why (one line each). */
  failed: string[];
}

/**
 * Mask the files of one finished run: the harness trace and pi's stderr log of each of its sessions (as the ledger
 * names them: primer, arms, retries, fallbacks) and the bon harvest. Never throws.
 */
export function scrubRun(paths: WorkspacePaths, adwId: string, redact: Redactor): ScrubReport {
  const report: ScrubReport = { harness: [], files: [], failed: [] };
  const attempt = (file: string, scrub: (file: string, redact: Redactor) => boolean): boolean => {
    try {
      if (!scrub(file, redact)) return false;
      report.files.push(file);
      return true;
    } catch (error) {
      report.failed.push(`${file}: ${(error as Error).message.split('\n')[0]}`);
      return false;
    }
  };
  const { harnessDir } = traceLayout(paths);
  for (const id of sessionsOfRun(paths.ledgerFile, adwId)) {
    const name = harnessFileName(id);
    if (attempt(path.join(harnessDir, name), scrubJsonl)) report.harness.push(name);
    // rpc.ts names the log by the raw id; an id that is no plain file name cannot be one of its logs.
    if (/^[A-Za-z0-9._-]+$/.test(id)) attempt(path.join(paths.sessionsDir, `${id}.stderr.log`), scrubText);
  }
  attempt(harvestFile(path.join(paths.dataDir, 'bon', adwId)), scrubJson);
  return report;
}
