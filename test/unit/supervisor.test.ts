// The kill ladder on real processes: a leader that ignores SIGTERM and a grandchild in a process group of its
// own (as pi's bash tool starts commands) must both be gone after kill().
import { describe, expect, it } from 'vitest';
import { descendants, liveChildren, spawnSupervised, taggedProcesses } from '../../src/process/supervisor.js';
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
    const proc = spawnSupervised(process.execPath, ['-e', script], {
      cwd: process.cwd(),
      env: process.env,
      runTag: 'unit-ladder',
    });
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

  it('endStrays ends the jobs a child left running (background, setsid, their children) and leaves the child alive', async () => {
    // As pi's bash tool leaves them: one job in the background, one detached into a session of its own (adopted
    // by init once its shell exits), with a child of its own. An unrelated sleep of the same name is not touched.
    const bystander = spawnSupervised('sleep', ['600'], { cwd: process.cwd(), env: process.env });
    const script = `
      const { spawn, execSync } = require('node:child_process');
      const a = spawn('sleep', ['600'], { stdio: 'ignore' });
      execSync('setsid sh -c "sleep 601 & sleep 602" > /dev/null 2>&1 < /dev/null &');
      console.log(a.pid);
      setInterval(() => {}, 1000);
    `;
    const proc = spawnSupervised(process.execPath, ['-e', script], {
      cwd: process.cwd(),
      env: process.env,
      runTag: 'unit-strays',
    });
    let out = '';
    proc.child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => /\d+\n/.test(out));
    const sleeps = () => taggedProcesses('unit-strays').filter((p) => p !== proc.pid);
    await waitFor(() => sleeps().length >= 4); // sleep 600, sh, sleep 601, sleep 602
    const ended = await proc.endStrays();
    expect(ended.length).toBeGreaterThanOrEqual(4);
    for (const p of ended) expect(alive(p)).toBe(false);
    expect(sleeps()).toEqual([]);
    expect(alive(proc.pid)).toBe(true);
    expect(alive(bystander.pid)).toBe(true);
    await proc.kill(300);
    await bystander.kill(300);
  });

  it('puts the run tag in the child environment', async () => {
    const proc = spawnSupervised(process.execPath, ['-e', 'console.log(process.env.FACTORY_RUN_TAG)'], {
      cwd: process.cwd(),
      env: process.env,
      runTag: 'abc12345',
    });
    let out = '';
    proc.child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exit = await proc.exited;
    expect(exit.code).toBe(0);
    expect(out.trim()).toBe('abc12345');
  });
});
