// Height budget of the run screen, as a pure function of the terminal rows, so the activity tail grows
// on a tall terminal and shrinks (never below one line) on a short one.

/** Lines of the run screen that are not the graph or the tail lines: header, gaps, tail title, totals, status, help. */
export const RUN_SCREEN_CHROME = 8;
export const DEFAULT_TAIL_LINES = 8;
export const MAX_TAIL_LINES = 15;

export function tailHeight(rows: number | undefined, graphHeight: number): number {
  if (rows === undefined) return DEFAULT_TAIL_LINES;
  return Math.max(1, Math.min(MAX_TAIL_LINES, rows - RUN_SCREEN_CHROME - graphHeight));
}
