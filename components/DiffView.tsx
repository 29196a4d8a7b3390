// One arm's patch, coloured like `git diff` (+ green, - red, @@ cyan, file headers bold), scrolled by the
// bon screen's keys (↑/↓, PgUp/PgDn, g/G; esc goes back to the board). The text comes from the controller
// (`readPatch`) through the bon store; this view only draws the window [offset, offset + height).
// A patch is untrusted text written by a model: control characters are made visible, never sent to the
// terminal, so a patch can not move the cursor or recolour the screen.

import React from 'react';
import { Box, Text } from 'ink';
import type { DiffState } from '../state/bon/store.js';

export interface DiffLineStyle {
  color?: string;
  bold?: boolean;
}

const HEADER =
  /^(diff --git |index |--- |\+\+\+ |new file mode|deleted file mode|old mode|new mode|similarity index|rename (from|to) |Binary files |GIT binary patch)/;

/** How one patch line is drawn. File headers first, so `--- a/x` is a header and not a removed line. */
export function diffLineStyle(line: string): DiffLineStyle {
  if (HEADER.test(line)) return { bold: true };
  if (line.startsWith('@@')) return { color: 'cyan' };
  if (line.startsWith('+')) return { color: 'green' };
  if (line.startsWith('-')) return { color: 'red' };
  return {};
}

const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

/** Tabs as spaces (Ink measures columns), a CRLF file's \r dropped, other control characters as a visible mark. */
export function printableLine(line: string): string {
  return line.replace(/\r$/, '').replace(/\t/g, '    ').replace(CONTROL, '�');
}

export interface DiffViewProps {
  diff: DiffState;
  /** Patch lines shown at once. */
  height: number;
  columns: number;
}

export function diffTitle(diff: DiffState, height: number): string {
  const name = `arm_${diff.arm} patch`;
  if (diff.status === 'loading') return `── ${name} · reading…`;
  if (diff.status === 'failed') return `── ${name} · unreadable`;
  const total = diff.lines.length;
  const last = Math.min(total, diff.offset + height);
  return `── ${name} · lines ${total === 0 ? 0 : diff.offset + 1}–${last} of ${total}`;
}

export function DiffView({ diff, height, columns }: DiffViewProps): React.JSX.Element {
  const shown = diff.lines.slice(diff.offset, diff.offset + Math.max(1, height));
  return (
    <Box flexDirection="column" width={columns}>
      <Text wrap="truncate-end" bold>
        {diffTitle(diff, height)}
      </Text>
      {diff.status === 'loading' ? <Text dimColor>reading the patch…</Text> : null}
      {diff.status === 'failed' ? (
        <Text wrap="truncate-end" color="red">
          {`could not read the patch: ${diff.error ?? 'unknown error'}`}
        </Text>
      ) : null}
      {diff.status === 'ready' && diff.lines.length === 0 ? <Text dimColor>(empty patch)</Text> : null}
      {shown.map((line, index) => {
        const style = diffLineStyle(line);
        return (
          <Text key={diff.offset + index} wrap="truncate-end" color={style.color} bold={style.bold}>
            {printableLine(line) || ' '}
          </Text>
        );
      })}
    </Box>
  );
}
