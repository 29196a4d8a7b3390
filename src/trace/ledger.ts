// The session ledger: one JSON line per pi session start, appended and fsynced BEFORE pi is spawned, so a
// cockpit killed with SIGKILL mid-phase still leaves the trace needed to resume in the live session.
import fs from 'node:fs';
import path from 'node:path';

export interface LedgerEntry {
  session_id: string;
  /** Resolved folder pi runs in: a session can only be resumed from there. */
  cwd: string;
  model: string | null;
  phase: string | null;
  adw_id: string | null;
  declared_at: string;
  /** Why this line exists beyond the first attempt (e.g. "fallback", "clone"). */
  reason?: string;
}

export function appendLedger(file: string, entry: LedgerEntry): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'a+');
  try {
    // A crash mid-write leaves a torn last line: start on a fresh line, or this entry would be glued to the
    // fragment and skipped with it.
    const size = fs.fstatSync(fd).size;
    const last = Buffer.alloc(1);
    const torn = size > 0 && fs.readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
    fs.writeSync(fd, `${torn ? '\n' : ''}${JSON.stringify(entry)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Declare a pi/claude session start for a phase of a run (what every adapter writes before it spawns). */
export function declareSession(
  file: string,
  session: { sessionId: string; cwd: string; model?: string; phase: string; adwId: string; reason?: string },
): void {
  appendLedger(file, {
    session_id: session.sessionId,
    cwd: session.cwd,
    model: session.model ?? null,
    phase: session.phase,
    adw_id: session.adwId,
    declared_at: new Date().toISOString(),
    ...(session.reason ? { reason: session.reason } : {}),
  });
}

/** Every well-formed line; a torn or foreign line (crash mid-write) is skipped, never fatal. */
export function readLedger(file: string): LedgerEntry[] {
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const entries: LedgerEntry[] = [];
  for (const line of raw.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as Partial<LedgerEntry>;
      if (typeof value.session_id === 'string' && typeof value.cwd === 'string') entries.push(value as LedgerEntry);
    } catch {
      // torn last line: skipped
    }
  }
  return entries;
}

export type SessionOrigin = { known: true; cwd: string; source: 'ledger' | 'session-file' } | { known: false };

/** pi's session file for `sessionId` in `sessionDir` (`<time>_<id>.jsonl`), when pi has written one. */
export function sessionFileOf(sessionDir: string, sessionId: string): string | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(sessionDir);
  } catch {
    return undefined;
  }
  const name = names.find((n) => n.endsWith(`_${sessionId}.jsonl`));
  return name === undefined ? undefined : path.join(sessionDir, name);
}

/**
 * Whether pi's session file for `sessionId` holds a user message: false when the attempt died before pi wrote it
 * (pi writes the file lazily), so the next attempt would start an empty session that never saw the ask.
 */
export function sessionHoldsAsk(sessionDir: string, sessionId: string): boolean {
  const file = sessionFileOf(sessionDir, sessionId);
  if (!file) return false;
  try {
    return /"role"\s*:\s*"user"/.test(fs.readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

/** Where a session was born: the last ledger line for it, else its session file's header, else unknown. */
export function sessionOrigin(sessionId: string, opts: { ledgerFile: string; sessionDir: string }): SessionOrigin {
  const lines = readLedger(opts.ledgerFile).filter((e) => e.session_id === sessionId);
  const last = lines.at(-1);
  if (last) return { known: true, cwd: last.cwd, source: 'ledger' };
  const file = sessionFileOf(opts.sessionDir, sessionId);
  if (!file) return { known: false };
  try {
    const fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(64 * 1024);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    fs.closeSync(fd);
    const header = JSON.parse(buf.subarray(0, n).toString('utf8').split('\n')[0] ?? '') as {
      type?: string;
      cwd?: string;
    };
    if (header.type === 'session' && typeof header.cwd === 'string')
      return { known: true, cwd: header.cwd, source: 'session-file' };
  } catch {
    // unreadable header: treat as unknown
  }
  return { known: false };
}

/**
 * pi looks a session id up by the header's exact cwd: resuming from another folder silently creates an empty
 * twin with the same id. Refuse that before any call (zero tokens). Unknown ids are a first attempt: allowed.
 */
export function resumeRequiresCwd(
  sessionId: string,
  cwd: string,
  opts: { ledgerFile: string; sessionDir: string },
): { allowed: true } | { allowed: false; bornIn: string; motif: string } {
  const origin = sessionOrigin(sessionId, opts);
  if (!origin.known) return { allowed: true };
  const here = path.resolve(cwd);
  if (path.resolve(origin.cwd) === here) return { allowed: true };
  return {
    allowed: false,
    bornIn: origin.cwd,
    motif: `session ${sessionId} was born in ${origin.cwd}; resume it from there (here: ${here})`,
  };
}
