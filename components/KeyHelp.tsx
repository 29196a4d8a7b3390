// The key-help line, built from the keymap table of the current mode (never written by hand).

import React from 'react';
import { Text } from 'ink';
import { helpItems, type KeyTable } from './keymap.js';

export function KeyHelp<I extends string>({ table }: { table: KeyTable<I> }): React.JSX.Element {
  const items = helpItems(table);
  return (
    <Text wrap="truncate-end" dimColor>
      {items.map((item, index) => (
        <React.Fragment key={item.keys}>
          {index > 0 ? ' · ' : ''}
          <Text bold>{item.keys}</Text> {item.help}
        </React.Fragment>
      ))}
    </Text>
  );
}
