// Wall-clock timing of whole processes for `npm run bench`: medians over repeated runs, alternating the two
// sides so machine noise lands on both. Asynchronous on purpose: a scripted model served from this very
// process must keep answering while the command runs.
import { spawn, type SpawnOptions } from 'node:child_process';

export interface Command {
  label: string;
  command: string;
  args: string[] | (() => string[]);
  options?: SpawnOptions;
  input?: string;
}

export function wallMs(cmd: Command): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const args = typeof cmd.args === 'function' ? cmd.args() : cmd.args;
    const child = spawn(cmd.command, args, { ...cmd.options, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin!.end(cmd.input ?? '');
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code !== 0)
        reject(new Error(`${cmd.label} exited ${code ?? signal}: ${stderr.trim().split('\n').slice(-2).join(' | ')}`));
      else resolve(ms);
    });
  });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Medians of two commands run alternately `runs` times each (after one warm-up of each), and the median of the
 * paired differences: each pair runs back to back on the same machine state, so `diff` estimates what `a` adds
 * to `b` with far less noise than `a - b` (two medians of ~1 s runs that wander by tens of ms each).
 */
export async function pair(a: Command, b: Command, runs: number): Promise<{ a: number; b: number; diff: number }> {
  await wallMs(a);
  await wallMs(b);
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    as.push(await wallMs(a));
    bs.push(await wallMs(b));
  }
  return { a: median(as), b: median(bs), diff: median(as.map((ms, i) => ms - bs[i]!)) };
}

export function verdictLine(ok: boolean): string {
  return ok ? 'goal met' : 'GOAL MISSED';
}
