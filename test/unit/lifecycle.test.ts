// The lifecycle root: cleanups in reverse order (each one runs even when another fails), and the one interrupt
// ladder that signals and keys climb alike.
import { afterEach, describe, expect, it } from 'vitest';
import { Lifecycle, type Rung } from '../../src/lifecycle.js';

function rig(opts: { forceGraceMs?: number } = {}) {
  const log: string[] = [];
  const exits: number[] = [];
  let kills = 0;
  const lifecycle = new Lifecycle({
    killAllChildrenSync: () => {
      kills += 1;
    },
    exit: (code) => exits.push(code),
    forceGraceMs: opts.forceGraceMs ?? 20,
    onWarning: (m) => log.push(`warn: ${m}`),
  });
  const rungs: Rung[] = [];
  const target = { abort: () => log.push('abort'), quit: () => log.push('quit'), onRung: (r: Rung) => rungs.push(r) };
  return { lifecycle, log, exits, rungs, target, kills: () => kills };
}

let disposeLater: Lifecycle[] = [];
afterEach(async () => {
  for (const l of disposeLater.splice(0)) await l.dispose();
});

describe('lifecycle: cleanups', () => {
  it('runs the cleanups last first at dispose, each once, and keeps going past a failing one', async () => {
    const { lifecycle, log } = rig();
    lifecycle.defer('first', () => void log.push('first'));
    lifecycle.defer('broken', () => {
      throw new Error('boom');
    });
    lifecycle.defer('last', async () => {
      await new Promise((r) => setTimeout(r, 5));
      log.push('last');
    });
    await lifecycle.dispose();
    await lifecycle.dispose();
    expect(log).toEqual(['last', 'warn: cleanup "broken" failed: boom', 'first']);
  });

  it('a released cleanup runs at once and not again at dispose', async () => {
    const { lifecycle, log } = rig();
    lifecycle.defer('kept', () => void log.push('kept'));
    const release = lifecycle.defer('mount', () => void log.push('mount'));
    await release();
    await release();
    expect(log).toEqual(['mount']);
    await lifecycle.dispose();
    expect(log).toEqual(['mount', 'kept']);
  });
});

describe('lifecycle: the interrupt ladder', () => {
  it('interrupt aborts first; a second request of any kind forces: every child killed, a hard exit 130 after the grace', async () => {
    const { lifecycle, log, rungs, target, kills, exits } = rig();
    lifecycle.attach(target);
    lifecycle.interrupt();
    expect(lifecycle.rung).toBe(1);
    expect(log).toEqual(['abort']);
    expect(kills()).toBe(0);
    lifecycle.quit();
    expect(lifecycle.rung).toBe(3);
    expect(log).toEqual(['abort', 'abort', 'quit']);
    expect(kills()).toBe(1);
    expect(rungs).toEqual([1, 3]);
    await new Promise((r) => setTimeout(r, 60));
    expect(exits).toEqual([130]);
  });

  it('quit aborts and stops the waiting screen without forcing; interrupt after it forces', () => {
    const { lifecycle, log, rungs, target, kills } = rig({ forceGraceMs: 60_000 });
    lifecycle.attach(target);
    lifecycle.quit();
    expect(lifecycle.rung).toBe(2);
    expect(log).toEqual(['abort', 'quit']);
    expect(kills()).toBe(0);
    lifecycle.interrupt();
    expect(rungs).toEqual([2, 3]);
    expect(kills()).toBe(1);
  });

  it('with nothing attached (a command still preparing), the first request ends the process at once, children first', () => {
    const { lifecycle, exits, kills } = rig({ forceGraceMs: 60_000 });
    lifecycle.interrupt();
    expect(kills()).toBe(1);
    expect(exits).toEqual([130]);
    const other = rig({ forceGraceMs: 60_000 });
    other.lifecycle.quit();
    expect(other.exits).toEqual([130]);
  });

  it('a new target starts the ladder again; a detached one is no longer reached', () => {
    const { lifecycle, log, target } = rig({ forceGraceMs: 60_000 });
    const detach = lifecycle.attach(target);
    lifecycle.interrupt();
    detach();
    const second: string[] = [];
    lifecycle.attach({ abort: () => second.push('abort') });
    expect(lifecycle.rung).toBe(0);
    lifecycle.interrupt();
    expect(second).toEqual(['abort']);
    expect(log).toEqual(['abort']);
  });

  it('signals climb the same ladder: SIGINT interrupts, SIGTERM and SIGHUP quit; dispose removes the handlers', async () => {
    const { lifecycle, log, target } = rig({ forceGraceMs: 60_000 });
    disposeLater.push(lifecycle);
    const before = process.listenerCount('SIGINT');
    lifecycle.installSignals();
    lifecycle.installSignals();
    expect(process.listenerCount('SIGINT')).toBe(before + 1);
    lifecycle.attach(target);
    process.emit('SIGINT');
    expect(lifecycle.rung).toBe(1);
    lifecycle.attach(target);
    process.emit('SIGTERM');
    expect(lifecycle.rung).toBe(2);
    lifecycle.attach(target);
    process.emit('SIGHUP');
    expect(lifecycle.rung).toBe(2);
    expect(log).toEqual(['abort', 'abort', 'quit', 'abort', 'quit']);
    await lifecycle.dispose();
    expect(process.listenerCount('SIGINT')).toBe(before);
  });
});
