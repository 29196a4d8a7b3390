// The doctor checklist as lines, and the window over them (pure). A terminal of 24 rows holds fewer lines than a
// full pass writes (a category heading, a row per check, a `fix:` line under each warning or failure), so the
// screen shows a window that the keys move and that opens on the first row that is not well: a warning or a
// failure the user must see is never left off the top. The window's height is the screen's (it knows the
// terminal); the store keeps only where the window starts.

import type { DoctorCategory } from '../../src/doctor/types.js';
import { DOCTOR_CATEGORIES } from '../../src/doctor/types.js';

/** What the window needs of a checklist row (doctorStore's DoctorRow fits). */
export interface ScrollRow {
  category: DoctorCategory;
  status: string;
  result?: { fix?: string };
}

export type DoctorLine<R extends ScrollRow = ScrollRow> =
  | { kind: 'category'; category: DoctorCategory }
  | { kind: 'row'; row: R }
  /** The dimmed `fix:` hint under a row that resolved with one; `more`: a line it wrapped onto. */
  | { kind: 'fix'; row: R; fix: string; more?: boolean };

/** A fix as lines of at most `width` characters, broken at spaces (a word longer than a line is cut). */
export function wrapFix(fix: string, width: number | undefined): string[] {
  if (width === undefined || fix.length <= width) return [fix];
  const lines: string[] = [];
  let rest = fix;
  while (rest.length > width) {
    const space = rest.lastIndexOf(' ', width);
    const cut = space > width / 3 ? space : width;
    lines.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^ /, '');
  }
  if (rest !== '') lines.push(rest);
  return lines;
}

/**
 * The checklist's lines in display order: each category (the order of report.ts) heading its rows, a fix under its
 * row — whole, wrapped at `fixWidth` (the screen's room for it) rather than cut mid-sentence on a narrow terminal.
 */
export function doctorLines<R extends ScrollRow>(rows: readonly R[], fixWidth?: number): Array<DoctorLine<R>> {
  const lines: Array<DoctorLine<R>> = [];
  for (const category of DOCTOR_CATEGORIES) {
    const inCategory = rows.filter((row) => row.category === category);
    if (inCategory.length === 0) continue;
    lines.push({ kind: 'category', category });
    for (const row of inCategory) {
      lines.push({ kind: 'row', row });
      if (row.result?.fix !== undefined) {
        wrapFix(row.result.fix, fixWidth).forEach((fix, i) =>
          lines.push({ kind: 'fix', row, fix, ...(i > 0 ? { more: true } : {}) }),
        );
      }
    }
  }
  return lines;
}

/** The first line a window of `page` lines may start at, so it never runs past the end. */
export function clampDoctorOffset(offset: number, total: number, page: number): number {
  return Math.max(0, Math.min(offset, total - Math.max(1, page)));
}

/**
 * Where the window opens once a pass is in: on the first failing or warning row (its category heading above it
 * when the row is the first of its group), else at the top.
 */
export function problemOffset(lines: readonly DoctorLine[]): number {
  const index = lines.findIndex(
    (line) => line.kind === 'row' && (line.row.status === 'fail' || line.row.status === 'warn'),
  );
  if (index < 0) return 0;
  return lines[index - 1]?.kind === 'category' ? index - 1 : index;
}

/** The lines a window shows, and where it starts once clamped; `page` undefined shows every line. */
export function doctorWindow<R extends ScrollRow>(
  lines: ReadonlyArray<DoctorLine<R>>,
  offset: number,
  page: number | undefined,
): { first: number; shown: Array<DoctorLine<R>> } {
  if (page === undefined || lines.length <= page) return { first: 0, shown: [...lines] };
  const first = clampDoctorOffset(offset, lines.length, page);
  return { first, shown: lines.slice(first, first + page) };
}
