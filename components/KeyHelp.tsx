// The key-help line, built from the keymap table of the current mode (never written by hand).

import React from 'react';
import { Text } from 'ink';
import { displayWidth } from '../src/contract/text.js';
import { helpItems, type HelpItem, type KeyTable } from './keymap.js';

function lineWidth(items: readonly HelpItem[]): number {
  return items.reduce(
    (sum, item, i) => sum + (i > 0 ? 3 : 0) + displayWidth(item.keys) + (item.help ? 1 + displayWidth(item.help) : 0),
    0,
  );
}

/**
 * The items as they fit one line of `columns`: whole, else each help cut to its first word, else the keys alone,
 * so the last keys (q, d) stay on screen on a narrow terminal instead of being cut off. Pure.
 */
export function fitHelp(items: readonly HelpItem[], columns: number | undefined): HelpItem[] {
  if (columns === undefined || lineWidth(items) <= columns) return [...items];
  const short = items.map((item) => ({ keys: item.keys, help: item.help.split(' ')[0] ?? '' }));
  if (lineWidth(short) <= columns) return short;
  // The way out (quit, doctor: the last two) keeps its word the longest.
  const tail = short.map((item, i) => (i >= short.length - 2 ? item : { keys: item.keys, help: '' }));
  if (lineWidth(tail) <= columns) return tail;
  return items.map((item) => ({ keys: item.keys, help: '' }));
}

export function KeyHelp<I extends string>({
  table,
  columns,
}: {
  table: KeyTable<I>;
  columns?: number;
}): React.JSX.Element {
  const items = fitHelp(helpItems(table), columns);
  return (
    <Text wrap="truncate-end" dimColor>
      {items.map((item, index) => (
        <React.Fragment key={item.keys}>
          {index > 0 ? ' · ' : ''}
          <Text bold>{item.keys}</Text>
          {item.help ? ` ${item.help}` : ''}
        </React.Fragment>
      ))}
    </Text>
  );
}
