// Peak resident memory of a process and everything it started (the cockpit and its pi processes), sampled from
// /proc every 100 ms: the process table is read whole, since pi's children re-parent nowhere else while they live.
// Linux only; elsewhere the figures are undefined and the bench says so.
import fs from 'node:fs';

export interface TreeRss {
  /** Stops sampling: the peak of the whole tree and of the root process alone, in bytes (undefined off Linux). */
  stop(): { peakTree?: number; peakRoot?: number; processes: number };
}

const PAGE = 4096;

function table(): Map<number, { ppid: number; rss: number }> {
  const out = new Map<number, { ppid: number; rss: number }>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: the fields start after its closing one.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(entry), { ppid: Number(fields[1]), rss: Number(fields[21]) * PAGE });
    } catch {
      // A process that ended while the table was read.
    }
  }
  return out;
}

function treeOf(root: number, procs: Map<number, { ppid: number; rss: number }>): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const out: number[] = [];
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    if (!procs.has(pid)) continue;
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

export function sampleTreeRss(root: number, everyMs = 100): TreeRss {
  if (process.platform !== 'linux' || !fs.existsSync('/proc/self/stat')) return { stop: () => ({ processes: 0 }) };
  let peakTree = 0;
  let peakRoot = 0;
  const seen = new Set<number>();
  const sample = () => {
    const procs = table();
    const tree = treeOf(root, procs);
    for (const pid of tree) seen.add(pid);
    peakTree = Math.max(
      peakTree,
      tree.reduce((sum, pid) => sum + procs.get(pid)!.rss, 0),
    );
    peakRoot = Math.max(peakRoot, procs.get(root)?.rss ?? 0);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return { peakTree, peakRoot, processes: seen.size };
    },
  };
}

export function megabytes(bytes: number | undefined): string {
  return bytes === undefined ? 'n/a (no /proc here)' : `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}
