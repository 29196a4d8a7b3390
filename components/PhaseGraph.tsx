// The phase graph: one node per phase, in plan order, joined by a vertical connector.
//
//   ✓ agent prompt   attempt 2/3  4.1s  1.2k tok  $0.0031
//   │   ↳ attempt 1/3 failed: no JSON object in the answer
//   │
//   ⠹ code  dispose  0.3s
//
// A gates phase also shows its gate chips (GateChips.tsx); a judge that sent its phase back waits as ↻.
// Best-of-N arms (`arm_1..arm_N`, consecutive) branch off the main rail between prime and harvest; their
// gates are on the arms board, the graph keeps one line per arm and its motif:
//
//   ✓ agent prime  3.2s  2.1k tok  $0.0050
//   │
//   ├─┬─ ✓ arm_1  scripted/a  4.0s  1.1k tok  $0.0020
//   │ ├─ ✗ arm_2  scripted/b  5.1s  1.4k tok  $0.0031
//   │ │      ↳ npm test: exit 1
//   │ └─ ⠹ arm_3  scripted/c  2.0s
//   │
//   ○ code  harvest
//
// Pure view: phases and the screen clock come in as props; every line truncates instead of wrapping.

import React from 'react';
import { Box, Text } from 'ink';
import { isLive, phaseSeconds, type PhaseState } from '../state/run/store.js';
import { formatCost, formatSeconds, formatTokens } from '../src/contract/format.js';
import { displayWidth, fitCell, flatLine, pad } from '../src/contract/text.js';
import { GateChips, gateChipsHeight, gateMotifLines } from './GateChips.js';
import { Spinner } from './Spinner.js';
import { CONNECTOR, kindColor, statusColor, statusGlyph } from './theme.js';

const BADGE_WIDTH = 5; // 'agent'
const MAX_NAME_WIDTH = 24;

function showsAttempt(phase: PhaseState): boolean {
  return phase.attempts > 1 && phase.attempt > 0 && (isLive(phase) || phase.attempt > 1);
}

/** The detail columns after the name, as plain strings (empty ones left out). */
export function phaseDetails(phase: PhaseState, now: number): string[] {
  const details: string[] = [];
  if (showsAttempt(phase)) details.push(`attempt ${phase.attempt}/${phase.attempts}`);
  const seconds = phaseSeconds(phase, now);
  if (seconds !== undefined) details.push(formatSeconds(seconds));
  if (phase.tokens > 0 || phase.cost > 0) {
    details.push(`${formatTokens(phase.tokens)} tok`);
    details.push(formatCost(phase.cost));
  }
  if (phase.sentBack) details.push('sent back');
  return details;
}

/** The dimmed line under a node: why the phase, or its last failed attempt, failed. */
export function motifLine(phase: PhaseState): string | undefined {
  if (phase.motif === undefined) return undefined;
  if (phase.status === 'pending' || phase.status === 'skipped') return undefined;
  // A red gate already says why under its chip: the phase's motif (built from the same reports) would repeat it.
  if (gateMotifLines(phase.gates ?? []).length > 0) return undefined;
  const motif = flatLine(phase.motif);
  if (phase.sentBack) return `sent back: ${motif}`;
  if (phase.motifAttempt !== undefined) return `attempt ${phase.motifAttempt}/${phase.attempts} failed: ${motif}`;
  return motif;
}

function Glyph({ phase, now }: { phase: PhaseState; now: number }): React.JSX.Element {
  if (phase.status === 'running') return <Spinner now={now} color={statusColor.running} />;
  // An arm that ended with nothing verified (every gate red on HEAD the same way) is not green: not ✓.
  if (phase.unverified) return <Text color={statusColor.retrying}>?</Text>;
  return <Text color={statusColor[phase.status]}>{statusGlyph[phase.status]}</Text>;
}

function PhaseNode({
  phase,
  now,
  nameWidth,
  last,
}: {
  phase: PhaseState;
  now: number;
  nameWidth: number;
  last: boolean;
}) {
  const muted = phase.status === 'pending' || phase.status === 'skipped';
  const name = fitCell(phase.name, nameWidth);
  const details = phaseDetails(phase, now);
  const motif = motifLine(phase);
  const rail = last ? ' ' : CONNECTOR;
  return (
    <>
      <Text wrap="truncate-end">
        <Glyph phase={phase} now={now} /> <Text color={kindColor[phase.kind]}>{phase.kind.padEnd(BADGE_WIDTH)}</Text>{' '}
        <Text bold={!muted} dimColor={muted}>
          {name}
        </Text>
        {details.length > 0 ? <Text dimColor={muted}>{`  ${details.join('  ')}`}</Text> : null}
      </Text>
      <GateChips gates={phase.gates} rail={rail} />
      {motif !== undefined ? (
        <Text wrap="truncate-end" dimColor>
          <Text color="gray">{rail}</Text>
          {`   ↳ ${motif}`}
        </Text>
      ) : null}
      {last ? null : <Text color="gray">{CONNECTOR}</Text>}
    </>
  );
}

/** Plan order cut into runs of single phases and groups of consecutive arms (drawn as parallel branches). */
export type GraphSegment = { kind: 'phase'; phase: PhaseState } | { kind: 'arms'; arms: PhaseState[] };

export function graphSegments(phases: readonly PhaseState[]): GraphSegment[] {
  const segments: GraphSegment[] = [];
  for (const phase of phases) {
    const last = segments[segments.length - 1];
    if (phase.arm === undefined) segments.push({ kind: 'phase', phase });
    else if (last?.kind === 'arms') last.arms.push(phase);
    else segments.push({ kind: 'arms', arms: [phase] });
  }
  return segments;
}

/** The branch glyphs before arm `index` of `count`; `more`: the main rail goes on below the group. */
export function branchPrefix(index: number, count: number, more: boolean): string {
  const rail = more ? CONNECTOR : ' ';
  if (index === 0) return `${more ? '├' : '└'}─${count === 1 ? '──' : '┬─'} `;
  return `${rail} ${index === count - 1 ? '└' : '├'}─ `;
}

function armMotif(phase: PhaseState): string | undefined {
  if (phase.unverified && phase.status === 'ok')
    return 'unverified: every gate red on HEAD the same way — nothing verified it';
  if (phase.status !== 'failed' && phase.status !== 'retrying') return undefined;
  if (phase.motif === undefined) return undefined;
  const motif = flatLine(phase.motif);
  return phase.motifAttempt !== undefined ? `attempt ${phase.motifAttempt}/${phase.attempts} failed: ${motif}` : motif;
}

function ArmBranches({
  arms,
  now,
  nameWidth,
  more,
}: {
  arms: PhaseState[];
  now: number;
  nameWidth: number;
  more: boolean;
}) {
  const rail = more ? CONNECTOR : ' ';
  return (
    <>
      {arms.map((phase, index) => {
        const muted = phase.status === 'pending' || phase.status === 'skipped';
        const details = [phase.model, ...phaseDetails(phase, now)].filter((part): part is string => part !== undefined);
        const motif = armMotif(phase);
        const lastArm = index === arms.length - 1;
        return (
          <React.Fragment key={phase.name}>
            <Text wrap="truncate-end">
              <Text color="gray">{branchPrefix(index, arms.length, more)}</Text>
              <Glyph phase={phase} now={now} />{' '}
              <Text bold={!muted} dimColor={muted}>
                {pad(phase.name, nameWidth)}
              </Text>
              {details.length > 0 ? <Text dimColor={muted}>{`  ${details.join('  ')}`}</Text> : null}
            </Text>
            {motif !== undefined ? (
              <Text wrap="truncate-end" dimColor>
                <Text color="gray">{`${rail} ${lastArm ? ' ' : CONNECTOR}`}</Text>
                {`      ↳ ${motif}`}
              </Text>
            ) : null}
          </React.Fragment>
        );
      })}
    </>
  );
}

export function PhaseGraph({ phases, now }: { phases: readonly PhaseState[]; now: number }): React.JSX.Element {
  const nameWidth = Math.min(MAX_NAME_WIDTH, Math.max(1, ...phases.map((phase) => displayWidth(phase.name))));
  const segments = graphSegments(phases);
  return (
    <Box flexDirection="column">
      {segments.map((segment, index) => {
        const last = index === segments.length - 1;
        if (segment.kind === 'phase') {
          return (
            <PhaseNode key={segment.phase.name} phase={segment.phase} now={now} nameWidth={nameWidth} last={last} />
          );
        }
        return (
          <React.Fragment key={`arms-${segment.arms[0].name}`}>
            <ArmBranches arms={segment.arms} now={now} nameWidth={nameWidth} more={!last} />
            {last ? null : <Text color="gray">{CONNECTOR}</Text>}
          </React.Fragment>
        );
      })}
    </Box>
  );
}

/**
 * The graph in one line, for a terminal too short for the whole graph: each phase's mark and name, the arms of a
 * group side by side in brackets — `✓ check → ✓ prime → [✗ arm_1 ⠦ arm_2 ○ arm_3] → ○ harvest`.
 */
export function PhaseStrip({ phases, now }: { phases: readonly PhaseState[]; now: number }): React.JSX.Element {
  const node = (phase: PhaseState) => (
    <React.Fragment key={phase.name}>
      <Glyph phase={phase} now={now} />{' '}
      <Text dimColor={phase.status === 'pending' || phase.status === 'skipped'}>{phase.name}</Text>
    </React.Fragment>
  );
  return (
    <Text wrap="truncate-end">
      {graphSegments(phases).map((segment, index) => (
        <React.Fragment key={segment.kind === 'phase' ? segment.phase.name : `arms-${segment.arms[0].name}`}>
          {index > 0 ? <Text color="gray"> → </Text> : null}
          {segment.kind === 'phase' ? (
            node(segment.phase)
          ) : (
            <>
              <Text color="gray">[</Text>
              {segment.arms.map((arm, i) => (
                <React.Fragment key={arm.name}>
                  {i > 0 ? ' ' : ''}
                  {node(arm)}
                </React.Fragment>
              ))}
              <Text color="gray">]</Text>
            </>
          )}
        </React.Fragment>
      ))}
    </Text>
  );
}

/** Rows the graph occupies, for the screen's height budget. */
export function phaseGraphHeight(phases: readonly PhaseState[]): number {
  const segments = graphSegments(phases);
  let rows = Math.max(0, segments.length - 1); // the connectors between segments
  for (const segment of segments) {
    if (segment.kind === 'arms') {
      rows += segment.arms.length + segment.arms.filter((phase) => armMotif(phase) !== undefined).length;
    } else {
      const phase = segment.phase;
      rows += 1 + (motifLine(phase) !== undefined ? 1 : 0) + gateChipsHeight(phase.gates);
    }
  }
  return rows;
}
