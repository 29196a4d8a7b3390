// A process is alive when it exists and is not a zombie: a cockpit SIGKILLed a moment ago whose parent has not reaped
// it still answers kill(pid, 0), and the home must read its run as interrupted, not running.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../src/process/alive.js';

describe.skipIf(process.platform !== 'linux')('processAlive', () => {
  it('is true for a live process, false for an ended one and for a zombie kill(pid, 0) still answers', async () => {
    expect(processAlive(process.pid)).toBe(true);
    // `sleep 0.1` ends under a parent that never reaps it (it became `sleep 5`): a zombie while that one sleeps.
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(
        await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()))),
      );
      expect(processAlive(pid)).toBe(true);
      await new Promise((r) => setTimeout(r, 400));
      expect(() => process.kill(pid, 0)).not.toThrow(); // still in the process table
      expect(processAlive(pid)).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
    const ended = spawn('true');
    await new Promise((r) => ended.once('exit', r));
    expect(processAlive(ended.pid!)).toBe(false);
  });
});
