// The one way a screen is mounted: Ink's own Ctrl-C exit off (the keymap and the lifecycle's ladder own Ctrl-C),
// console output patched above the frame, and an unmount that waits for the last frame to be committed instead of
// sleeping. Everything Ink and React is imported here, in production mode.
import type { Instance } from 'ink';
import type { ReactElement, ReactNode } from 'react';
import type { StoreApi } from 'zustand/vanilla';
import type { Lifecycle } from '../lifecycle.js';

export type Ink = typeof import('ink');
export type ReactModule = typeof import('react');
export interface Ui {
  ink: Ink;
  React: ReactModule;
  useStore: typeof import('zustand').useStore;
}

/**
 * Ink and React, in their production builds: React's development build records a performance measure per
 * render that Node keeps forever (a leak under a busy board). NODE_ENV is restored right after, so children
 * never see a value the user did not set.
 */
export async function importUi(): Promise<Ui> {
  const previous = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    const [ink, React, { useStore }] = await Promise.all([
      import('ink'),
      import('react'),
      import('zustand'),
      import('react/jsx-runtime'),
    ]);
    return { ink, React, useStore };
  } finally {
    if (previous === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = previous;
  }
}

export interface Mounted {
  readonly app: Instance;
  /** Show another element in the same frame (an overlay); `back()` restores the screen as mounted. */
  show(element: ReactElement): void;
  back(): void;
  /** Resolves once the store's current state has been rendered (or the screen is not showing it). */
  settled(): Promise<void>;
  /** Erase the frame (before handing the terminal to another screen), unmount, wait for Ink to let go. */
  close(opts?: { clear?: boolean }): Promise<void>;
}

/**
 * Ink throttles frames (30 a second); a committed state is on screen once unmount flushes that last frame. The cap is
 * a hang guard, not a measure of speed: the probe commits within a paced frame on a quiet machine, but on a loaded
 * one it took more than the 500 ms this once was, and the screen was unmounted before its last state (a Ctrl-C'd
 * run exited 130 with "aborting…" as its last frame, never "interrupted").
 */
const SETTLE_CAP_MS = 10_000;

/**
 * Mount `screen`, which draws `store`. A probe around it records each state React commits, so `settled()` knows
 * when the last one is drawn. The mount is released by `close()`, or by the lifecycle's dispose on the way out.
 */
export function mountScreen<S>(ui: Ui, lifecycle: Lifecycle, screen: ReactElement, store?: StoreApi<S>): Mounted {
  const { React, ink, useStore } = ui;
  let committed: unknown;
  let probing = true;
  const waiters: (() => void)[] = [];
  const onCommit = (state: unknown) => {
    committed = state;
    if (store && committed === store.getState()) for (const w of waiters.splice(0)) w();
  };
  function Probe({ children }: { children: ReactNode }) {
    const state = useStore(store as StoreApi<unknown>);
    React.useEffect(() => onCommit(state), [state]);
    return React.createElement(React.Fragment, null, children);
  }
  const root = store ? React.createElement(Probe, null, screen) : screen;
  const app = ink.render(root, { exitOnCtrlC: false, patchConsole: true });
  let closed = false;
  const release = lifecycle.defer('unmount screen', async () => {
    closed = true;
    app.unmount();
    await app.waitUntilExit().catch(() => undefined);
  });
  return {
    app,
    show(element) {
      probing = false;
      for (const w of waiters.splice(0)) w();
      app.rerender(element);
    },
    back() {
      probing = true;
      app.rerender(root);
    },
    settled() {
      if (!store || !probing || closed || committed === store.getState()) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SETTLE_CAP_MS);
        timer.unref();
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    async close(opts = {}) {
      if (closed) return;
      if (opts.clear) app.clear();
      await release();
    },
  };
}
