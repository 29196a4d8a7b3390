// The last lines of the current phase's activity: tool calls (⚙ + detail), the agent's text (dim),
// provider retries and failed attempts (yellow), tool errors (red). Bounded to `height` lines; every line
// truncates so a long tool argument never wraps into the graph.

import React from 'react';
import { Box, Text } from 'ink';
import { isLive, type PhaseState, type TailItem } from '../state/run/store.js';
import { flatLine } from '../src/contract/text.js';
import { TOOL_GLYPH } from './theme.js';

export interface TailLine {
  text: string;
  color?: string;
  dim?: boolean;
}

/** How one tail item reads on screen; undefined for items not worth a line (a tool that ended fine). */
export function tailLine(item: TailItem): TailLine | undefined {
  switch (item.kind) {
    case 'tool_start':
      return { text: `${TOOL_GLYPH} ${item.tool}${item.detail ? ` ${flatLine(item.detail)}` : ''}` };
    case 'tool_end':
      return item.isError ? { text: `✗ ${item.tool}: ${flatLine(item.detail)}`, color: 'red' } : undefined;
    case 'text': {
      const text = flatLine(item.text);
      return text ? { text, dim: true } : undefined;
    }
    case 'retry':
      return { text: `↻ provider retry ${item.attempt}: ${flatLine(item.message)}`, color: 'yellow' };
    case 'note':
      return { text: `· ${flatLine(item.text)}` };
    case 'attempt_failed': {
      const next = item.willRetry ? ' — retrying in the same session' : '';
      return {
        text: `↻ attempt ${item.attempt}/${item.attempts} failed: ${flatLine(item.motif)}${next}`,
        color: 'yellow',
      };
    }
    default: {
      const unreachable: never = item;
      return unreachable;
    }
  }
}

export function tailLines(phase: PhaseState | undefined, height: number): TailLine[] {
  if (phase === undefined || height <= 0) return [];
  const lines: TailLine[] = [];
  // Walk backwards: only the newest `height` visible lines are ever built.
  for (let i = phase.activity.length - 1; i >= 0 && lines.length < height; i--) {
    const line = tailLine(phase.activity[i].item);
    if (line !== undefined) lines.push(line);
  }
  return lines.reverse();
}

export function ActivityTail({
  phase,
  height,
}: {
  phase: PhaseState | undefined;
  height: number;
}): React.JSX.Element | null {
  if (phase === undefined) return null;
  const lines = tailLines(phase, height);
  return (
    <Box flexDirection="column">
      <Text dimColor wrap="truncate-end">{`── ${phase.name} activity`}</Text>
      {lines.length === 0 ? (
        <Text dimColor>{isLive(phase) ? '  waiting for the agent…' : '  no activity'}</Text>
      ) : (
        lines.map((line, index) => (
          <Text key={index} wrap="truncate-end" color={line.color} dimColor={line.dim}>
            {`  ${line.text}`}
          </Text>
        ))
      )}
    </Box>
  );
}
