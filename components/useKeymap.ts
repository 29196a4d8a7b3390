// The single input hook: every key of a screen goes through here, is named by keymap.ts and turned into
// an intent by the table of the current mode. The table is read at key time (not render time) so two
// quick Ctrl-C presses see the mode the first one produced, even before React re-renders.

import { useRef } from 'react';
import { useInput, useStdin } from 'ink';
import { intentFor, keyNameOf, type KeyTable } from './keymap.js';

export function useKeymap<I extends string>(currentTable: () => KeyTable<I>, onIntent: (intent: I) => void): void {
  const { isRawModeSupported } = useStdin();
  // Refs keep the Ink listener stable across renders (no re-subscription, no stale closure).
  const tableRef = useRef(currentTable);
  const intentRef = useRef(onIntent);
  tableRef.current = currentTable;
  intentRef.current = onIntent;
  const handler = useRef((input: string, key: Parameters<typeof keyNameOf>[1]) => {
    const name = keyNameOf(input, key);
    if (name === undefined) return;
    const intent = intentFor(tableRef.current(), name);
    if (intent !== undefined) intentRef.current(intent);
  });
  // Without a TTY on stdin Ink can not enter raw mode (and throws): the screen is then view-only.
  useInput(handler.current, { isActive: isRawModeSupported });
}
