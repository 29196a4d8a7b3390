// The ONE place where keys are named. Each screen has a table per input mode: key → intent, with the
// words shown in the key-help line. Behaviour (useKeymap) and help (KeyHelp) both read these tables, so
// they can not drift apart. No other file compares key literals.

import type { Key } from 'ink';
import type { BonIntent, BonMode } from '../state/bon/intents.js';
import type { HomeIntent, HomeMode } from '../state/home/intents.js';
import type { RunIntent, RunMode } from '../state/run/intents.js';
import type { DoctorIntent, DoctorMode, DoctorVia } from '../state/doctor/store.js';

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
const RUN_DOCTOR: Binding<RunIntent> = { keys: ['d'], intent: 'doctor', help: 'doctor' };

export const RUN_KEYS: Readonly<Record<RunMode, KeyTable<RunIntent>>> = {
  running: [
    { keys: ['ctrl+c'], intent: 'abort', help: 'abort turn (twice: quit)' },
    { keys: ['q'], intent: 'confirm-quit', help: 'quit (asks first)' },
    RUN_DOCTOR,
  ],
  aborting: [{ keys: ['ctrl+c', 'q'], intent: 'quit', help: 'quit now' }],
  'confirm-quit': [
    { keys: ['q', 'ctrl+c'], intent: 'quit', help: 'abort run and quit' },
    { keys: ['escape'], intent: 'stay', help: 'keep running' },
  ],
  finished: [{ keys: ['q', 'ctrl+c'], intent: 'quit', help: 'quit' }, RUN_DOCTOR],
  quitting: [],
};

const BON_SELECT: KeyTable<BonIntent> = [
  { keys: ['left'], intent: 'left', help: 'select arm' },
  { keys: ['right'], intent: 'right', help: 'select arm' },
  { keys: ['return'], intent: 'diff', help: 'diff' },
];

/**
 * Bon screen (the arms board). The run screen's Ctrl-C / q machine, plus the arm keys: `a` aborts the
 * running arm (the batch goes on), `c` clones one more arm from the primer, `p` asks before applying the
 * selected (by default the winning) patch, `m` types a message into the selected arm's live session, `+` gives an
 * arm paused at its cap as much again, `o` shows the arms' overlap and `s` two arms side by side (tab: the next). In the diff view and the apply question Ctrl-C still acts as
 * on the run screen (`interrupt`: abort the turn, or quit when that was done or the run is over).
 */
const BON_COMPARE: KeyTable<BonIntent> = [
  { keys: ['o'], intent: 'overlap', help: 'overlap' },
  { keys: ['s'], intent: 'side', help: 'compare' },
];

type ScrollIntent = 'up' | 'down' | 'page-up' | 'page-down' | 'top' | 'bottom';

/** The scroll keys of every view that scrolls (a diff, a comparison, the doctor's checklist). */
const SCROLL_KEYS: KeyTable<ScrollIntent> = [
  { keys: ['up', 'k'], intent: 'up', help: 'scroll' },
  { keys: ['down', 'j'], intent: 'down', help: 'scroll' },
  { keys: ['pageup'], intent: 'page-up', help: 'page' },
  { keys: ['pagedown'], intent: 'page-down', help: 'page' },
  { keys: ['g'], intent: 'top', help: 'top' },
  { keys: ['G'], intent: 'bottom', help: 'end' },
];

const SCROLL: KeyTable<BonIntent> = SCROLL_KEYS;

const HOME_QUIT: Binding<HomeIntent> = { keys: ['q', 'ctrl+c'], intent: 'quit', help: 'quit' };
const HOME_DOCTOR: Binding<HomeIntent> = { keys: ['d'], intent: 'doctor', help: 'doctor' };

/**
 * Home screen (`factory` with no arguments): nothing runs here, so `q` and Ctrl-C quit at once. In a
 * replayed run, `q` goes back to the list like esc (the run is only being read), Ctrl-C still quits.
 * `r` is bound wherever a run is selected; the home store refuses it for a run that is not failed or
 * interrupted, and says why.
 */
export const HOME_KEYS: Readonly<Record<HomeMode, KeyTable<HomeIntent>>> = {
  loading: [HOME_QUIT, HOME_DOCTOR],
  empty: [HOME_QUIT, HOME_DOCTOR],
  list: [
    { keys: ['up', 'k'], intent: 'up', help: 'up' },
    { keys: ['down', 'j'], intent: 'down', help: 'down' },
    { keys: ['return'], intent: 'open', help: 'open' },
    { keys: ['r'], intent: 'resume', help: 'resume' },
    HOME_QUIT,
    HOME_DOCTOR,
  ],
  replay: [
    { keys: ['escape', 'q'], intent: 'back', help: 'back to runs' },
    { keys: ['r'], intent: 'resume', help: 'resume' },
    { keys: ['ctrl+c'], intent: 'quit', help: 'quit' },
  ],
  // A replayed arms board reads as the live one does (select, diff, compare); nothing on it acts on the run.
  'replay-board': [
    { keys: ['left'], intent: 'left', help: 'select arm' },
    { keys: ['right'], intent: 'right', help: 'select arm' },
    { keys: ['return'], intent: 'diff', help: 'diff' },
    { keys: ['o'], intent: 'overlap', help: 'overlap' },
    { keys: ['s'], intent: 'side', help: 'compare' },
    { keys: ['escape', 'q'], intent: 'back', help: 'back to runs' },
    { keys: ['r'], intent: 'resume', help: 'resume' },
    { keys: ['ctrl+c'], intent: 'quit', help: 'quit' },
  ],
  'replay-view': [
    ...SCROLL_KEYS,
    { keys: ['tab'], intent: 'next-pair', help: 'next arm' },
    { keys: ['escape', 'q'], intent: 'close', help: 'back to board' },
    { keys: ['ctrl+c'], intent: 'quit', help: 'quit' },
  ],
  quitting: [],
};

export const BON_KEYS: Readonly<Record<BonMode, KeyTable<BonIntent>>> = {
  running: [
    ...BON_SELECT,
    { keys: ['a'], intent: 'abort-arm', help: 'abort arm' },
    { keys: ['c'], intent: 'clone', help: 'clone arm' },
    { keys: ['m'], intent: 'steer', help: 'message arm' },
    { keys: ['+'], intent: 'raise', help: 'raise cap' },
    ...BON_COMPARE,
    { keys: ['p'], intent: 'ask-apply', help: 'apply' },
    { keys: ['ctrl+c'], intent: 'abort', help: 'abort turn (twice: quit)' },
    { keys: ['q'], intent: 'confirm-quit', help: 'quit (asks first)' },
    { keys: ['d'], intent: 'doctor', help: 'doctor' },
  ],
  aborting: [...BON_SELECT, { keys: ['ctrl+c', 'q'], intent: 'quit', help: 'quit now' }],
  'confirm-quit': [
    { keys: ['q', 'ctrl+c'], intent: 'quit', help: 'abort run and quit' },
    { keys: ['escape'], intent: 'stay', help: 'keep running' },
  ],
  finished: [
    ...BON_SELECT,
    ...BON_COMPARE,
    { keys: ['p'], intent: 'ask-apply', help: 'apply' },
    { keys: ['q', 'ctrl+c'], intent: 'quit', help: 'quit' },
    { keys: ['d'], intent: 'doctor', help: 'doctor' },
  ],
  'confirm-fanout': [
    { keys: ['y'], intent: 'fanout-yes', help: 'fan out' },
    { keys: ['n'], intent: 'fanout-no', help: 'no arm' },
    { keys: ['ctrl+c'], intent: 'interrupt', help: 'abort / quit' },
  ],
  steer: [
    { keys: ['return'], intent: 'steer-send', help: 'send' },
    { keys: ['backspace', 'delete'], intent: 'steer-erase', help: 'erase' },
    { keys: ['escape'], intent: 'steer-cancel', help: 'cancel' },
    { keys: ['ctrl+c'], intent: 'interrupt', help: 'abort / quit' },
  ],
  compare: [
    ...SCROLL,
    { keys: ['tab'], intent: 'next-pair', help: 'next arm' },
    { keys: ['escape', 'q'], intent: 'back', help: 'back to board' },
    { keys: ['ctrl+c'], intent: 'interrupt', help: 'abort / quit' },
  ],
  'confirm-apply': [
    { keys: ['y'], intent: 'apply', help: 'apply' },
    { keys: ['n', 'escape'], intent: 'cancel-apply', help: 'cancel' },
    { keys: ['ctrl+c'], intent: 'interrupt', help: 'abort / quit' },
  ],
  'confirm-abort': [
    { keys: ['y'], intent: 'confirm-abort', help: 'abort the arm' },
    { keys: ['n', 'escape'], intent: 'cancel-abort', help: 'keep it running' },
    { keys: ['ctrl+c'], intent: 'interrupt', help: 'abort / quit' },
  ],
  diff: [
    ...SCROLL,
    { keys: ['escape', 'q'], intent: 'back', help: 'back to board' },
    { keys: ['ctrl+c'], intent: 'interrupt', help: 'abort / quit' },
  ],
  quitting: [],
};

/**
 * Doctor checklist. Nothing it runs costs a token or holds a lock worth keeping, so leaving never asks.
 * Opened by `factory doctor`, q/esc/Ctrl-C quit; opened by `d` on the home screen, q/esc go back to the
 * runs and Ctrl-C quits the cockpit. `r` re-runs only once a pass is over (two passes would race on the
 * same probes and battery). The checklist scrolls (it is taller than a 24-row terminal) while it runs and after.
 */
const DOCTOR_SCROLL: KeyTable<DoctorIntent> = SCROLL_KEYS;
const doctorTables = (close: Binding<DoctorIntent>[]): Readonly<Record<DoctorMode, KeyTable<DoctorIntent>>> => ({
  running: [...DOCTOR_SCROLL, ...close],
  finished: [...DOCTOR_SCROLL, { keys: ['r'], intent: 'rerun', help: 're-run' }, ...close],
  closing: [],
});

export const DOCTOR_KEYS: Readonly<Record<DoctorVia, Readonly<Record<DoctorMode, KeyTable<DoctorIntent>>>>> = {
  command: doctorTables([{ keys: ['q', 'escape', 'ctrl+c'], intent: 'close', help: 'quit' }]),
  home: doctorTables([
    { keys: ['q', 'escape'], intent: 'close', help: 'back to runs' },
    { keys: ['ctrl+c'], intent: 'quit', help: 'quit' },
  ]),
  // Over a live run or the arms board: every way out goes back to it (Ctrl-C there is the run's, not the doctor's).
  run: doctorTables([{ keys: ['q', 'escape', 'ctrl+c'], intent: 'close', help: 'back to the run' }]),
  board: doctorTables([{ keys: ['q', 'escape', 'ctrl+c'], intent: 'close', help: 'back to the board' }]),
};

export const KEYMAPS = { run: RUN_KEYS, home: HOME_KEYS, bon: BON_KEYS, doctor: DOCTOR_KEYS } as const;
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
  pageup: 'PgUp',
  pagedown: 'PgDn',
};

/** How a key is written in the help line ('ctrl+c' → 'ctrl-c', 'escape' → 'esc'). */
export function keyLabel(name: KeyName): string {
  return KEY_LABELS[name] ?? name.replace(/^ctrl\+/, 'ctrl-').replace(/^meta\+/, 'alt-');
}

export interface HelpItem {
  keys: string;
  help: string;
}

/** Neighbouring bindings that say the same thing share one item (`←/→ select arm`). */
export function helpItems<I extends string>(table: KeyTable<I>): HelpItem[] {
  const items: HelpItem[] = [];
  for (const binding of table) {
    const keys = binding.keys.map(keyLabel).join('/');
    const previous = items[items.length - 1];
    if (previous !== undefined && previous.help === binding.help) previous.keys = `${previous.keys}/${keys}`;
    else items.push({ keys, help: binding.help });
  }
  return items;
}

/** The key-help line as plain text: `ctrl-c abort turn (twice: quit) · q quit (asks first)`. */
export function helpText<I extends string>(table: KeyTable<I>): string {
  return helpItems(table)
    .map((item) => `${item.keys} ${item.help}`)
    .join(' · ');
}
