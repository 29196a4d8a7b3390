// The doctor checklist (`factory doctor` in a TTY, or `d` on the home screen): every check of the pass,
// grouped by category, resolving live from ○ planned to a spinner to ✓ ! ✗ –, with its detail and, under a
// warning or a failure, its `fix:` hint dimmed; the live summary line; the key help. It reads the doctor
// store, owns the screen's one clock and its one input hook (DOCTOR_KEYS), and asks the core through the
// DoctorController. Every line truncates, so a narrow terminal never wraps a row; a short terminal shows a window
// over the checklist (doctorScroll.ts) that the scroll keys move and that opens on the first problem. The
// screen mount (src/tui/mount.ts):
//   const store = createDoctorStore(initialDoctorState('command'));
//   render(<DoctorScreen store={store} controller={{ rerun, close }} />, { exitOnCtrlC: false });
//   void runDoctorInto(store, (hooks) => runDoctor(ctx, { only, quick, ...hooks }));

import React from 'react';
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import { doctorLines, doctorWindow, type DoctorLine } from '../state/doctor/scroll.js';
import {
  dispatchDoctorIntent,
  doctorMark,
  doctorModeOf,
  doctorProgressLine,
  doctorSpinning,
  doctorTone,
  optionalNote,
  type DoctorController,
  type DoctorRow,
  type DoctorStatus,
  type DoctorStore,
} from '../state/doctor/store.js';
import { displayWidth, fitCell } from '../src/contract/text.js';
import { KeyHelp } from './KeyHelp.js';
import { DOCTOR_KEYS } from './keymap.js';
import { Spinner } from './Spinner.js';
import { SPINNER_INTERVAL_MS } from './theme.js';
import { useClock } from './useClock.js';
import { useKeymap } from './useKeymap.js';
import { useTerminalSize } from './useTerminalSize.js';

export interface DoctorScreenProps {
  store: DoctorStore;
  controller: DoctorController;
}

export const DOCTOR_STATUS_COLOR: Readonly<Record<DoctorStatus, string>> = {
  ok: 'green',
  warn: 'yellow',
  fail: 'red',
  skipped: 'gray',
};

export const WAITING_NOTE = 'waiting';
const INDENT = '  ';
/** The id column never takes more than this, nor more than a third of the terminal. */
const ID_MAX = 28;

/** Width of the id column in display columns: the longest id, capped so the detail keeps room on a narrow terminal. */
export function idColumnWidth(ids: readonly string[], columns: number): number {
  const longest = Math.max(0, ...ids.map(displayWidth));
  return Math.max(4, Math.min(longest, ID_MAX, Math.floor(columns / 3)));
}

function Mark({ row, now }: { row: DoctorRow; now: number }): React.JSX.Element {
  if (row.status === 'running') return <Spinner now={now} />;
  const mark = doctorMark(row);
  if (row.status === 'pending') return <Text dimColor>{mark}</Text>;
  return <Text color={DOCTOR_STATUS_COLOR[row.status]}>{mark}</Text>;
}

function CheckRow({ row, idWidth, now }: { row: DoctorRow; idWidth: number; now: number }): React.JSX.Element {
  const result = row.result;
  const optional = optionalNote(row);
  return (
    <Text wrap="truncate-end">
      {INDENT}
      <Mark row={row} now={now} /> {fitCell(row.id, idWidth)}
      {'  '}
      {result !== undefined ? (
        <Text>
          {result.detail}
          <Text dimColor>{optional}</Text>
        </Text>
      ) : (
        <Text dimColor>{row.status === 'pending' ? `${row.title} · ${WAITING_NOTE}` : `${row.title}…`}</Text>
      )}
    </Text>
  );
}

function ChecklistLine({
  line,
  idWidth,
  now,
}: {
  line: DoctorLine<DoctorRow>;
  idWidth: number;
  now: number;
}): React.JSX.Element {
  if (line.kind === 'category') {
    return (
      <Text bold wrap="truncate-end">
        {line.category}
      </Text>
    );
  }
  if (line.kind === 'fix')
    return (
      <Text
        wrap="truncate-end"
        dimColor
      >{`${INDENT}  ${' '.repeat(idWidth)}  ${line.more ? '     ' : 'fix: '}${line.fix}`}</Text>
    );
  return <CheckRow row={line.row} idWidth={idWidth} now={now} />;
}

/**
 * Lines of the screen around the checklist: the title, two gaps, the key help, the summary once rows exist, the
 * status and crash lines when set, and one spare row: a frame as tall as the terminal makes Ink clear the whole
 * screen on every spinner tick.
 */
export function doctorChrome(state: { rows: readonly DoctorRow[]; statusLine?: string; crash?: string }): number {
  return (
    5 + (state.rows.length > 0 ? 1 : 0) + (state.statusLine !== undefined ? 1 : 0) + (state.crash !== undefined ? 1 : 0)
  );
}

/** The checklist window's height on a terminal of `rows` (undefined: unknown, every line shown); never below 3. */
/** The characters a fix has on a line after the indent, the id column and `fix: ` (at least 20). */
export function fixRoom(columns: number, idWidth: number): number {
  return Math.max(20, columns - (INDENT.length + 2 + idWidth + 2 + 'fix: '.length) - 1);
}

export function doctorPage(rows: number | undefined, chrome: number): number | undefined {
  return rows === undefined ? undefined : Math.max(3, rows - chrome);
}

/** Which lines a window shows, in the title: `lines 9–26 of 31`. */
export function doctorWindowNote(first: number, shown: number, total: number): string {
  return `lines ${first + 1}–${first + shown} of ${total}`;
}

export function DoctorScreen({ store, controller }: DoctorScreenProps): React.JSX.Element {
  const doctor = useStore(store);
  const { columns, rows: terminalRows } = useTerminalSize();
  const mode = doctorModeOf(doctor);
  const now = useClock(doctorSpinning(doctor), SPINNER_INTERVAL_MS);
  const idWidth = idColumnWidth(
    doctor.rows.map((row) => row.id),
    columns,
  );
  const fixWidth = fixRoom(columns, idWidth);
  const lines = doctorLines(doctor.rows, fixWidth);
  const page = doctorPage(terminalRows, doctorChrome(doctor));
  const { first, shown } = doctorWindow(lines, doctor.offset, page);
  // Read at key time, like the table: a key pressed before React re-renders sees the window it moves.
  const pageRef = React.useRef(page ?? lines.length);
  pageRef.current = page ?? lines.length;
  const fixRef = React.useRef(fixWidth);
  fixRef.current = fixWidth;

  useKeymap(
    () => DOCTOR_KEYS[store.getState().via][doctorModeOf(store.getState())],
    (intent) => dispatchDoctorIntent(store, controller, intent, { page: pageRef.current, fixWidth: fixRef.current }),
  );

  const started = doctor.generation > 0 || doctor.rows.length > 0;
  return (
    <Box flexDirection="column" width={columns}>
      <Text wrap="truncate-end">
        <Text bold>factory</Text>
        <Text dimColor>{` · doctor${mode === 'running' ? ' · checking…' : ''}`}</Text>
        {shown.length < lines.length ? (
          <Text dimColor>{` · ${doctorWindowNote(first, shown.length, lines.length)}`}</Text>
        ) : null}
      </Text>
      <Box marginTop={1} flexDirection="column">
        {!started ? <Text dimColor>preparing the checks…</Text> : null}
        {shown.map((line, index) => (
          <ChecklistLine key={first + index} line={line} idWidth={idWidth} now={now} />
        ))}
        {doctor.crash !== undefined ? (
          <Text color="red" wrap="truncate-end">{`the doctor could not run: ${doctor.crash}`}</Text>
        ) : null}
      </Box>
      <Box marginTop={1} flexDirection="column">
        {doctor.rows.length > 0 ? (
          <Text wrap="truncate-end" color={doctor.finished ? doctorTone(doctor) : undefined}>
            {doctorProgressLine(doctor)}
          </Text>
        ) : null}
        {doctor.statusLine !== undefined ? (
          <Text color="yellow" wrap="truncate-end">
            {doctor.statusLine}
          </Text>
        ) : null}
        <KeyHelp table={DOCTOR_KEYS[doctor.via][mode]} columns={columns} />
      </Box>
    </Box>
  );
}
