// Reading what pi stored: the JSONL session file of one session id in a rig's session dir.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type SessionLine = { type: string; [key: string]: unknown };

/** Every line of the session file whose header carries `sessionId` (pi names files by time and id). */
export function sessionLines(sessionDir: string, sessionId: string): SessionLine[] {
  const file = readdirSync(sessionDir).find((name) => name.endsWith('.jsonl') && name.includes(sessionId));
  if (!file) throw new Error(`no session file for ${sessionId} in ${sessionDir}`);
  return readFileSync(path.join(sessionDir, file), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as SessionLine);
}
