// Whether a process is alive. kill(pid, 0) answers for a process that exists (EPERM: it exists, another user's), but
// also for a zombie: a cockpit SIGKILLed a moment ago, its parent not having reaped it yet, would read as still
// running its run. Where the kernel shows a process's state, a zombie (Z) or a dead one (X) is not alive.
import fs from 'node:fs';

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // No /proc (macOS) or the process just ended: kill's answer stands.
    return fs.existsSync('/proc/self/stat') ? false : true;
  }
}
