// A store as a screen should see it: the same state, read at once, but change notices paced to one per frame. A
// busy run changes its store thousands of times a second (usage, tool calls, text of five arms at once); each notice
// costs React a render and Ink a layout, though the terminal shows at most a frame every `frameMs`. A notice after
// a quiet spell (a key) goes out at once; those that follow within the frame are folded into one at its end, so the
// last state is always drawn. Pure: no React, no Ink; the core's own reads (`getState`) are never delayed.
import type { StoreApi } from 'zustand/vanilla';

/** A frame of the live screens: eight a second, what the eye reads on a board of figures. */
export const FRAME_MS = 125;

export function pacedStore<S>(store: StoreApi<S>, frameMs: number = FRAME_MS): StoreApi<S> {
  return {
    getState: store.getState,
    getInitialState: store.getInitialState,
    setState: store.setState,
    subscribe(listener) {
      let timer: NodeJS.Timeout | undefined;
      let pending: { state: S; previous: S } | undefined;
      let since: S | undefined;
      const tick = () => {
        timer = undefined;
        if (!pending) return;
        const { state, previous } = pending;
        pending = undefined;
        since = undefined;
        listener(state, previous);
        timer = setTimeout(tick, frameMs);
      };
      const unsubscribe = store.subscribe((state, previous) => {
        if (timer === undefined) {
          listener(state, previous);
          timer = setTimeout(tick, frameMs);
          return;
        }
        // Within the frame: the notice at its end carries the newest state and the one before the first change.
        since ??= previous;
        pending = { state, previous: since };
      });
      return () => {
        unsubscribe();
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        pending = undefined;
      };
    },
  };
}
