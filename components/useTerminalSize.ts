// Terminal size from Ink's stdout, re-read on every 'resize' so the views re-lay out when the user
// resizes the window (Ink itself ignores resize in CI; this hook does not).

import { useEffect, useState } from 'react';
import { useStdout } from 'ink';

export interface TerminalSize {
  columns: number;
  /** Undefined when stdout does not report rows (pipes, test doubles). */
  rows?: number;
}

const FALLBACK_COLUMNS = 80;

function read(stdout: NodeJS.WriteStream): TerminalSize {
  return { columns: stdout.columns || FALLBACK_COLUMNS, rows: stdout.rows || undefined };
}

export function useTerminalSize(): TerminalSize {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => read(stdout));
  useEffect(() => {
    const onResize = () =>
      setSize((previous) => {
        const next = read(stdout);
        return next.columns === previous.columns && next.rows === previous.rows ? previous : next;
      });
    stdout.on('resize', onResize);
    // The size may have changed between the first render and this subscription.
    onResize();
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}
