// The ONE place where keys are named. Each screen has a table per input mode: key → intent, with the
// words shown in the key-help line. Behaviour (useKeymap) and help (KeyHelp) both read these tables, so
// they can not drift apart. No other file compares key literals.

import type { Key } from 'ink';
import type { HomeIntent, HomeMode, RunIntent, RunMode } from '../state/controller.js';

/** A normalised key name: a printable character ('q'), or a named key ('escape', 'ctrl+c', 'left'…). */
export type KeyName = string;

export interface Binding<I extends string> {
  keys: readonly KeyName[];
  intent: I;
  /** What the key does, for the help line. */
  help: string;
}

export type KeyTable<I extends string> = readonly Binding<I>[];

/**
 * Run screen. Ctrl-C first aborts the running turn, a second Ctrl-C quits (SPEC 5). `q` during a live run
 * asks before quitting, because quitting abandons the run: a stray `q` must never throw away a paid turn.
 * Once the run is finished, `q` and Ctrl-C quit at once.
 */
export const RUN_KEYS: Readonly<Record<RunMode, KeyTable<RunIntent>>> = {
  running: [
    { keys: ['ctrl+c'], intent: 'abort', help: 'abort turn (twice: quit)' },
    { keys: ['q'], intent: 'confirm-quit', help: 'quit (asks first)' },
  ],
  aborting: [
    { keys: ['ctrl+c', 'q'], intent: 'quit', help: 'quit now' },
  ],
  'confirm-quit': [
    { keys: ['q', 'ctrl+c'], intent: 'quit', help: 'abort run and quit' },
    { keys: ['escape'], intent: 'stay', help: 'keep running' },
  ],
  finished: [
    { keys: ['q', 'ctrl+c'], intent: 'quit', help: 'quit' },
  ],
  quitting: [],
};

const HOME_QUIT: Binding<HomeIntent> = { keys: ['q', 'ctrl+c'], intent: 'quit', help: 'quit' };

/**
 * Home screen (`factory` with no arguments): nothing runs here, so `q` and Ctrl-C quit at once. In a
 * replayed run, `q` goes back to the list like esc (the run is only being read), Ctrl-C still quits.
 * `r` is bound wherever a run is selected; the home store refuses it for a run that is not failed or
 * interrupted, and says why.
 */
export const HOME_KEYS: Readonly<Record<HomeMode, KeyTable<HomeIntent>>> = {
  loading: [HOME_QUIT],
  empty: [HOME_QUIT],
  list: [
    { keys: ['up', 'k'], intent: 'up', help: 'up' },
    { keys: ['down', 'j'], intent: 'down', help: 'down' },
    { keys: ['return'], intent: 'open', help: 'open' },
    { keys: ['r'], intent: 'resume', help: 'resume' },
    HOME_QUIT,
  ],
  replay: [
    { keys: ['escape', 'q'], intent: 'back', help: 'back to runs' },
    { keys: ['r'], intent: 'resume', help: 'resume' },
    { keys: ['ctrl+c'], intent: 'quit', help: 'quit' },
  ],
  quitting: [],
};

export const KEYMAPS = { run: RUN_KEYS, home: HOME_KEYS } as const;
export type ScreenName = keyof typeof KEYMAPS;

const NAMED_KEYS: ReadonlyArray<[keyof Key, KeyName]> = [
  ['escape', 'escape'],
  ['return', 'return'],
  ['tab', 'tab'],
  ['upArrow', 'up'],
  ['downArrow', 'down'],
  ['leftArrow', 'left'],
  ['rightArrow', 'right'],
  ['pageUp', 'pageup'],
  ['pageDown', 'pagedown'],
  ['home', 'home'],
  ['end', 'end'],
  ['backspace', 'backspace'],
  ['delete', 'delete'],
];

/** Normalise Ink's (input, key) pair to a KeyName; undefined for input that is no single key (a paste). */
export function keyNameOf(input: string, key: Key): KeyName | undefined {
  // Kitty-protocol terminals report releases too; a key acts once, on press.
  if (key.eventType === 'release') return undefined;
  for (const [flag, name] of NAMED_KEYS) {
    if (key[flag] === true) return name;
  }
  if (key.ctrl && input.length === 1) return `ctrl+${input.toLowerCase()}`;
  if (key.meta && input.length === 1) return `meta+${input}`;
  if ([...input].length === 1) return input;
  return undefined;
}

export function intentFor<I extends string>(table: KeyTable<I>, name: KeyName): I | undefined {
  return table.find((binding) => binding.keys.includes(name))?.intent;
}

const KEY_LABELS: Readonly<Record<string, string>> = {
  escape: 'esc',
  return: 'enter',
  left: '←',
  right: '→',
  up: '↑',
  down: '↓',
};

/** How a key is written in the help line ('ctrl+c' → 'ctrl-c', 'escape' → 'esc'). */
export function keyLabel(name: KeyName): string {
  return KEY_LABELS[name] ?? name.replace(/^ctrl\+/, 'ctrl-').replace(/^meta\+/, 'alt-');
}

export interface HelpItem {
  keys: string;
  help: string;
}

export function helpItems<I extends string>(table: KeyTable<I>): HelpItem[] {
  return table.map((binding) => ({ keys: binding.keys.map(keyLabel).join('/'), help: binding.help }));
}

/** The key-help line as plain text: `ctrl-c abort turn (twice: quit) · q quit (asks first)`. */
export function helpText<I extends string>(table: KeyTable<I>): string {
  return helpItems(table)
    .map((item) => `${item.keys} ${item.help}`)
    .join(' · ');
}
