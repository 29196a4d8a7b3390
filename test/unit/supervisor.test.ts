// The kill ladder on real processes: a leader that ignores SIGTERM and a grandchild in a process group of its
// own (as pi's bash tool starts commands) must both be gone after kill().
import { describe, expect, it } from 'vitest';
import { descendants, liveChildren, spawnSupervised } from '../../src/process/supervisor.js';
import { alive, until } from '../helpers/processes.js';

/** Polls until `check()` holds (5 s at most). */
const waitFor = (check: () => boolean, ms = 5000) => until('the condition', check, ms);

describe('spawnSupervised', () => {
  it('ends a stubborn leader and a grandchild that left its process group', async () => {
    const script = `
      process.on('SIGTERM', () => {});
      const { spawn } = require('node:child_process');
      const g = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
      console.log(g.pid);
      setInterval(() => {}, 1000);
    `;
    const proc = spawnSupervised(process.execPath, ['-e', script], { cwd: process.cwd(), env: process.env, runTag: 'unit-ladder' });
    let out = '';
    proc.child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => /\d+\n/.test(out));
    const grandchild = Number(out.trim());
    expect(descendants(proc.pid)).toContain(grandchild);
    expect(alive(grandchild)).toBe(true);
    await proc.kill(300);
    expect(alive(proc.pid)).toBe(false);
    await waitFor(() => !alive(grandchild));
    expect(liveChildren()).toBe(0);
  });

  it('puts the run tag in the child environment', async () => {
    const proc = spawnSupervised(process.execPath, ['-e', 'console.log(process.env.FACTORY_RUN_TAG)'], { cwd: process.cwd(), env: process.env, runTag: 'abc12345' });
    let out = '';
    proc.child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exit = await proc.exited;
    expect(exit.code).toBe(0);
    expect(out.trim()).toBe('abc12345');
  });
});
