// The single input hook: every key of a screen goes through here, is named by keymap.ts and turned into
// an intent by the table of the current mode. The table is read at key time (not render time) so two
// quick Ctrl-C presses see the mode the first one produced, even before React re-renders.

import { useRef } from 'react';
import { useInput, useStdin } from 'ink';
import { intentFor, keyNameOf, type KeyTable } from './keymap.js';

/**
 * `onText`: what a key that no binding takes types, for a mode that reads text (a message to an arm): the raw input,
 * a paste included; control keys never reach it.
 */
export function useKeymap<I extends string>(
  currentTable: () => KeyTable<I>,
  onIntent: (intent: I) => void,
  onText?: (text: string) => void,
): void {
  const { isRawModeSupported } = useStdin();
  // Refs keep the Ink listener stable across renders (no re-subscription, no stale closure).
  const tableRef = useRef(currentTable);
  const intentRef = useRef(onIntent);
  const textRef = useRef(onText);
  tableRef.current = currentTable;
  intentRef.current = onIntent;
  textRef.current = onText;
  const handler = useRef((input: string, key: Parameters<typeof keyNameOf>[1]) => {
    const name = keyNameOf(input, key);
    const intent = name === undefined ? undefined : intentFor(tableRef.current(), name);
    if (intent !== undefined) intentRef.current(intent);
    else if (
      input !== '' &&
      !key.ctrl &&
      !key.meta &&
      key.eventType !== 'release' &&
      !/^[\u0000-\u001f\u007f]+$/.test(input)
    )
      textRef.current?.(input);
  });
  // Without a TTY on stdin Ink can not enter raw mode (and throws): the screen is then view-only.
  useInput(handler.current, { isActive: isRawModeSupported });
}
