// The model calls of past best-of-N arms in this workspace, read back from factory.db for the spend forecast: the
// strongest sign of what this repo's arms will do is what its arms did. Read-only (the file is opened readonly, never
// created, never migrated); a missing or unreadable database is no history, never an error on the way to a fan-out.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { WorkspacePaths } from '../config/paths.js';
import type { CallUsage } from '../contract/agent.js';

/** One past arm: its route and its model calls in order (what pi's usage said of each). */
export interface PastArm {
  adwId: string;
  phase: string;
  model?: string;
  calls: CallUsage[];
}

const ROWS = `
SELECT p.adw_id AS adwId, p.name AS phase, p.model AS model, h.payload AS payload
FROM (SELECT adw_id, started_at FROM runs WHERE adw_name = 'adw_bon' AND status != 'running' ORDER BY started_at DESC LIMIT ?) r
JOIN phases p ON p.adw_id = r.adw_id AND p.name LIKE 'arm\\_%' ESCAPE '\\' AND p.status IN ('ok', 'failed')
JOIN harness_by_phase h ON h.adw_id = p.adw_id AND h.phase = p.name AND h.type = 'message_end'
ORDER BY r.started_at DESC, p.name, h.session_id, h.line_no`;

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/** The usage of one `message_end` line, when it is an assistant's with figures. */
export function callOfPayload(payload: string): CallUsage | undefined {
  let line: { message_role?: unknown; usage?: Record<string, unknown> | null };
  try {
    line = JSON.parse(payload) as typeof line;
  } catch {
    return undefined;
  }
  const u = line.usage;
  if (line.message_role !== 'assistant' || !u || typeof u !== 'object') return undefined;
  const cost = u.cost && typeof u.cost === 'object' ? num((u.cost as { total?: unknown }).total) : 0;
  return {
    input: num(u.input),
    output: num(u.output),
    cacheRead: num(u.cacheRead),
    cacheWrite: num(u.cacheWrite),
    cost,
  };
}

/** The arms (finished, green or red) of the last `runs` best-of-N runs recorded in the workspace's factory.db, newest first. */
export function pastArms(paths: WorkspacePaths, runs = 5): PastArm[] {
  const file = path.join(paths.dataDir, 'factory.db');
  if (!fs.existsSync(file)) return [];
  let db: BetterSqlite3.Database | undefined;
  try {
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db.prepare(ROWS).all(runs) as Array<{
      adwId: string;
      phase: string;
      model: string | null;
      payload: string;
    }>;
    const arms = new Map<string, PastArm>();
    for (const row of rows) {
      const call = callOfPayload(row.payload);
      if (!call) continue;
      const key = `${row.adwId}/${row.phase}`;
      let arm = arms.get(key);
      if (!arm)
        arms.set(
          key,
          (arm = { adwId: row.adwId, phase: row.phase, ...(row.model ? { model: row.model } : {}), calls: [] }),
        );
      arm.calls.push(call);
    }
    return [...arms.values()];
  } catch {
    return [];
  } finally {
    db?.close();
  }
}
