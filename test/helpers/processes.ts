// Process facts for tests on real processes: whether a pid still runs, and polling until a condition holds.
import fs from 'node:fs';

/** Whether a process still runs: a zombie (killed, waiting for its reaper to collect it) counts as dead. */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Resolves once `test()` holds; throws naming `what` after `ms`. A test that throws counts as "not yet": a probe
 * such as `git worktree list` can fail while the run under test is half-way through making a worktree (git reads
 * an admin folder whose `commondir` is not written yet); the last error is named if time runs out.
 */
export async function until(what: string, test: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  let lastError: unknown;
  for (;;) {
    try {
      if (test()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}${lastError ? ` (last probe: ${String(lastError)})` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A process's command line as one string (`sleep 600`), or '' once it is gone or unreadable. */
export function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}
