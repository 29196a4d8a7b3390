// The gate chips under a gates phase: one chip per zero-token gate, green ✓ or red ✗, then for each red
// gate its motif, dimmed, on a line of its own (truncated to the width, never wrapped):
//
//   ↻ code  gates  3.2s  sent back
//   │   ✓ changed_files  ✗ npm test 3.1s
//   │   ↳ `npm test` exited 1: FAIL test/sum.test.js | 1 failing
//
// Pure view: the reports come from the run store (`gate_result` events of the phase's current run).

import React from 'react';
import { Text } from 'ink';
import type { GateReport } from '../state/run/store.js';
import { formatSeconds } from '../src/contract/format.js';
import { flatLine } from '../src/contract/text.js';
import { statusColor, statusGlyph } from './theme.js';

/** A gate's time is worth showing only when it is felt (a test suite, not a file check). */
const SHOWN_SECONDS = 1;

/** The dimmed lines under the chips: one per red gate that says why, named unless its motif names it already. */
export function gateMotifLines(gates: readonly GateReport[]): string[] {
  const lines: string[] = [];
  for (const report of gates) {
    const motif = report.ok ? '' : flatLine(report.motif ?? '');
    if (motif === '') continue;
    lines.push(motif.includes(report.gate) ? motif : `${report.gate}: ${motif}`);
  }
  return lines;
}

/** Rows the chips take under their node: the chip line, then the red gates' motifs. */
export function gateChipsHeight(gates: readonly GateReport[] | undefined): number {
  if (gates === undefined || gates.length === 0) return 0;
  return 1 + gateMotifLines(gates).length;
}

function Chip({ report }: { report: GateReport }): React.JSX.Element {
  const color = report.ok ? statusColor.ok : statusColor.failed;
  const seconds = report.seconds >= SHOWN_SECONDS ? ` ${formatSeconds(report.seconds)}` : '';
  return (
    <Text>
      <Text color={color}>{report.ok ? statusGlyph.ok : statusGlyph.failed}</Text>{' '}
      <Text color={report.ok ? undefined : color}>{report.gate}</Text>
      {seconds ? <Text dimColor>{seconds}</Text> : null}
    </Text>
  );
}

/** `rail` is the graph's connector column (│, or a space under the last node). */
export function GateChips({
  gates,
  rail,
}: {
  gates: readonly GateReport[] | undefined;
  rail: string;
}): React.JSX.Element | null {
  if (gates === undefined || gates.length === 0) return null;
  return (
    <>
      <Text wrap="truncate-end">
        <Text color="gray">{rail}</Text>
        {'   '}
        {gates.map((report, index) => (
          <React.Fragment key={report.gate}>
            {index > 0 ? '  ' : ''}
            <Chip report={report} />
          </React.Fragment>
        ))}
      </Text>
      {gateMotifLines(gates).map((line, index) => (
        <Text key={index} wrap="truncate-end" dimColor>
          <Text color="gray">{rail}</Text>
          {`   ↳ ${line}`}
        </Text>
      ))}
    </>
  );
}
