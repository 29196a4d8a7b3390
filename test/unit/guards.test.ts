// The one guard of an attempt or a turn (src/pi/guards.ts): deadline, interrupt and idle watchdog, with the motifs
// json mode, the RPC turn and the claude adapter show.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { guardAttempt, idleMotif } from '../../src/pi/guards.js';

describe('guardAttempt', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('the deadline stops with kind timeout; the idle watchdog waits while progress comes', () => {
    const stops: [string, string][] = [];
    const guard = guardAttempt({ timeoutMs: 10_000, idle: { ms: 3_000, motif: idleMotif(3_000, 'it') } }, (m, k) =>
      stops.push([m, k]),
    );
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(2_000);
      guard.progress();
    }
    vi.advanceTimersByTime(2_000);
    expect(stops).toEqual([['harness silent after 10 s — request timeout', 'timeout']]);
    vi.advanceTimersByTime(1_000);
    expect(stops.at(-1)).toEqual(['no progress from pi for 3 s — watchdog ended it', 'stalled']);
    guard.disarm();
  });

  it("the interrupt carries the caller's motif; disarm removes every timer and the listener", () => {
    const stops: [string, string][] = [];
    const controller = new AbortController();
    const guard = guardAttempt(
      { timeoutMs: 1_000, signal: controller.signal, abortMotif: 'aborted by the user' },
      (m, k) => stops.push([m, k]),
    );
    controller.abort();
    expect(stops).toEqual([['aborted by the user', 'aborted']]);
    guard.disarm();
    guard.progress();
    vi.advanceTimersByTime(60_000);
    expect(stops).toHaveLength(1);
    const other = new AbortController();
    guardAttempt({ timeoutMs: 1_000, signal: other.signal }, (m, k) => stops.push([m, k])).disarm();
    other.abort();
    expect(stops).toHaveLength(1);
  });

  it('without an abort motif the interrupt says "interrupted by the user"', () => {
    const stops: string[] = [];
    const controller = new AbortController();
    guardAttempt({ timeoutMs: 1_000, signal: controller.signal }, (m) => stops.push(m));
    controller.abort();
    expect(stops).toEqual(['interrupted by the user']);
    vi.clearAllTimers();
  });
});
