// Test helpers for Ink 6 views, on top of ink-testing-library: ANSI-free frames, named keys, a terminal
// resize, and `waitFor` that polls the rendered frame instead of sleeping a fixed time.

import chalk from 'chalk';
import type { ReactElement } from 'react';
import { render } from 'ink-testing-library';
import { afterAll, afterEach, beforeAll } from 'vitest';

/** Raw bytes a terminal sends for the keys the cockpit uses. */
export const KEYS = {
  ctrlC: '\u0003',
  escape: '\u001B',
  enter: '\r',
  up: '\u001B[A',
  down: '\u001B[B',
  right: '\u001B[C',
  left: '\u001B[D',
} as const;

const ANSI = /\u001B\[[0-?]*[ -/]*[@-~]|\u001B\][^\u0007]*\u0007/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * Let React 19's scheduler and Ink's stdin reader run: one setImmediate turn (where React flushes) then
 * one timer turn. Used after render (so useInput has subscribed) and after each key.
 */
export async function tick(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
}

export interface WaitForOptions {
  /** Ceiling before giving up (not a delay: waitFor returns as soon as the condition holds). */
  timeout?: number;
  /** Extra context for the failure message, e.g. the last frame. */
  describe?: () => string;
}

export async function waitFor(condition: () => boolean, options: WaitForOptions = {}): Promise<void> {
  const deadline = Date.now() + (options.timeout ?? 3000);
  for (;;) {
    if (condition()) return;
    if (Date.now() > deadline) {
      const context = options.describe ? `\n${options.describe()}` : '';
      throw new Error(`waitFor: condition still false after ${options.timeout ?? 3000} ms${context}`);
    }
    await tick();
  }
}

export interface InkHarness {
  /** The last frame written, without colours. */
  lastFrame(): string;
  /** The last frame with its ANSI styling. */
  rawFrame(): string;
  /** Every line of the last frame, trailing spaces removed. */
  lines(): string[];
  /** Send raw key bytes to the app's stdin, then let the app react. */
  press(bytes: string): Promise<void>;
  /** Resize the fake terminal, as a real one does on SIGWINCH. */
  resize(columns: number, rows?: number): void;
  /** Wait until the frame contains `text` (or matches it). */
  waitForFrame(text: string | RegExp, timeout?: number): Promise<void>;
  unmount(): void;
}

export async function renderInk(
  tree: ReactElement,
  size: { columns?: number; rows?: number } = {},
): Promise<InkHarness> {
  const instance = render(tree);
  const stdout = instance.stdout as unknown as NodeJS.EventEmitter & { columns: number; rows?: number };
  const harness: InkHarness = {
    lastFrame: () => stripAnsi(instance.lastFrame() ?? ''),
    rawFrame: () => instance.lastFrame() ?? '',
    lines: () =>
      harness
        .lastFrame()
        .split('\n')
        .map((line) => line.trimEnd()),
    async press(bytes) {
      instance.stdin.write(bytes);
      await tick();
    },
    resize(columns, rows) {
      // ink-testing-library's stdout reports a fixed 100 columns from a prototype getter: shadow it.
      Object.defineProperty(stdout, 'columns', { value: columns, configurable: true, writable: true });
      Object.defineProperty(stdout, 'rows', { value: rows, configurable: true, writable: true });
      stdout.emit('resize');
    },
    waitForFrame: (text, timeout) =>
      waitFor(() => (typeof text === 'string' ? harness.lastFrame().includes(text) : text.test(harness.lastFrame())), {
        timeout,
        describe: () => `expected ${String(text)} in the frame:\n${harness.lastFrame()}`,
      }),
    unmount: () => {
      instance.unmount();
      instance.cleanup();
    },
  };
  if (size.columns !== undefined || size.rows !== undefined) harness.resize(size.columns ?? 100, size.rows);
  // useInput subscribes in an effect: keys written before it runs would be lost.
  await tick();
  return harness;
}

export interface ScreenTests {
  /** Mounts a screen (the one this test shows; it is unmounted after the test). */
  mount(tree: ReactElement, size?: { columns?: number; rows?: number }): Promise<InkHarness>;
  /** Unmounts it now (a test that mounts a second screen). */
  unmount(): void;
}

/**
 * The set-up a file of screen tests shares: colours forced to the basic 16 for the whole file, whatever terminal
 * runs the tests (its frames are asserted in colour, and Ink colours through this very chalk instance), and the
 * screen a test mounted unmounted after it.
 */
export function screenTests(): ScreenTests {
  let level = chalk.level;
  beforeAll(() => {
    level = chalk.level;
    chalk.level = 1;
  });
  afterAll(() => {
    chalk.level = level;
  });
  let mounted: InkHarness | undefined;
  const unmount = () => {
    mounted?.unmount();
    mounted = undefined;
  };
  afterEach(unmount);
  return {
    async mount(tree, size) {
      mounted = await renderInk(tree, size);
      return mounted;
    },
    unmount,
  };
}
