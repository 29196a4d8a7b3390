// The store a screen sees: reads at once, change notices at most one a frame — the first after a quiet spell at
// once (a key answers without delay), those within the frame folded into one at its end with the newest state.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { pacedStore } from '../../state/paced.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('the paced store', () => {
  it('notices the first change at once, folds the rest of the frame into one at its end, and reads are never late', () => {
    const store = createStore<{ n: number }>()(() => ({ n: 0 }));
    const view = pacedStore(store, 100);
    const seen: [number, number][] = [];
    const unsubscribe = view.subscribe((state, previous) => seen.push([state.n, previous.n]));
    store.setState({ n: 1 });
    expect(seen).toEqual([[1, 0]]);
    for (let n = 2; n <= 50; n += 1) store.setState({ n });
    expect(view.getState().n).toBe(50); // the core's reads are never delayed
    expect(seen).toHaveLength(1);
    vi.advanceTimersByTime(100);
    expect(seen).toEqual([
      [1, 0],
      [50, 1],
    ]); // the end of the frame: the newest state, since the last notice
    vi.advanceTimersByTime(100);
    expect(seen).toHaveLength(2); // a quiet frame: no notice
    vi.advanceTimersByTime(100);
    store.setState({ n: 51 });
    expect(seen.at(-1)).toEqual([51, 50]); // after a quiet spell, at once again
    unsubscribe();
    store.setState({ n: 52 });
    vi.advanceTimersByTime(500);
    expect(seen.at(-1)).toEqual([51, 50]);
  });

  it('a thousand changes a second reach the screen as ten notices', () => {
    const store = createStore<{ n: number }>()(() => ({ n: 0 }));
    let notices = 0;
    pacedStore(store, 100).subscribe(() => (notices += 1));
    for (let ms = 0; ms < 1000; ms += 1) {
      store.setState({ n: ms });
      vi.advanceTimersByTime(1);
    }
    expect(notices).toBeGreaterThanOrEqual(10);
    expect(notices).toBeLessThanOrEqual(11);
  });
});
