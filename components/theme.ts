// Colours and glyphs of the cockpit, in one place so every view speaks the same visual language.

import type { PhaseKind } from '../src/contract/events.js';
import type { PhaseStatus } from '../state/run/store.js';

export const kindColor: Readonly<Record<PhaseKind, string>> = {
  agent: 'magenta',
  code: 'blue',
};

export const statusColor: Readonly<Record<PhaseStatus, string>> = {
  pending: 'gray',
  running: 'cyan',
  retrying: 'yellow',
  ok: 'green',
  failed: 'red',
  skipped: 'gray',
};

/** Glyph of each state; a running phase shows the spinner instead. */
export const statusGlyph: Readonly<Record<Exclude<PhaseStatus, 'running'>, string>> = {
  pending: '○',
  retrying: '↻',
  ok: '✓',
  failed: '✗',
  skipped: '–',
};

export const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;
/** Milliseconds per spinner frame; the screen clock ticks at this pace while something runs. */
export const SPINNER_INTERVAL_MS = 125;

export const CONNECTOR = '│';
export const TOOL_GLYPH = '⚙';
