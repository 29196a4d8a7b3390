// A finished program's output is never lost to a busy event loop. After a program's exit, runToEnd waits a drain
// interval for its pipes to close; judged on the timer alone, a loop kept busy by other work (other programs'
// exits and sweeps, each a synchronous /proc scan) reached that timer before the pipes' bytes were read, and gave up
// on them: a successful `git rev-parse` or `git diff` read as empty output (an arm's own git pointed at no objects,
// a green arm's patch of 0 bytes). The drain now judges the pipes only after the loop's poll phase had its turn.
import { describe, expect, it } from 'vitest';
import { runToEnd } from '../../src/process/run.js';

/** Blocks the event loop, as a synchronous scan of /proc or of a .git tree does. */
function block(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin
  }
}

describe('runToEnd on a busy event loop', () => {
  it('keeps every output of programs that end together while the loop is busy', async () => {
    const text = 'y'.repeat(2_000);
    const busy = setInterval(() => block(30), 1);
    try {
      const runs = await Promise.all(
        Array.from({ length: 40 }, () =>
          runToEnd(process.execPath, ['-e', `process.stdout.write(${JSON.stringify(text)})`], { drainMs: 1 }),
        ),
      );
      expect(runs.every((r) => r.code === 0)).toBe(true);
      expect(runs.map((r) => r.stdout.length)).toEqual(runs.map(() => text.length));
    } finally {
      clearInterval(busy);
    }
  }, 120_000);
});
