// Text for one line of a terminal, measured the way a terminal draws it: in columns (string-width, the measure
// Ink itself uses), a CJK character or an emoji taking two, a combining mark none. Cuts fall between whole
// characters (grapheme clusters), never inside an emoji or before its combining marks. For plain text: escape
// sequences take no column in `displayWidth` but would be cut like text.
//
// Start-up: string-width loads ICU's segmentation data (tens of milliseconds, Ink pays it anyway): modules on the
// path to a headless `factory prompt`'s pi spawn (errors.ts, format.ts, pi/, the headless printer) do not import it.
import stringWidth from 'string-width';

const ELLIPSIS = '…';

export interface FitOptions {
  /** What marks a cut (default `…`); it counts in the columns. */
  ellipsis?: string;
}

let segmenter: Intl.Segmenter | undefined;

function graphemes(text: string): Intl.Segments {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return segmenter.segment(text);
}

/** Columns `text` takes on a terminal: two for CJK and emoji, none for combining marks and escape sequences. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** The longest start of `text` in at most `columns` columns. */
function head(text: string, columns: number): string {
  let used = 0;
  let end = 0;
  for (const { segment, index } of graphemes(text)) {
    used += stringWidth(segment);
    if (used > columns) break;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

/** The longest end of `text` in at most `columns` columns. */
function tail(text: string, columns: number): string {
  const segments = [...graphemes(text)];
  let used = 0;
  let start = text.length;
  for (let i = segments.length - 1; i >= 0; i -= 1) {
    used += stringWidth(segments[i]!.segment);
    if (used > columns) break;
    start = segments[i]!.index;
  }
  return text.slice(start);
}

/** `text` in at most `columns` columns: as it is when it fits, else its start and the ellipsis. */
export function fit(text: string, columns: number, opts: FitOptions = {}): string {
  if (columns <= 0) return '';
  if (stringWidth(text) <= columns) return text;
  const ellipsis = opts.ellipsis ?? ELLIPSIS;
  const room = columns - stringWidth(ellipsis);
  return room < 0 ? head(ellipsis, columns) : `${head(text, room)}${ellipsis}`;
}

/** `text` in at most `columns` columns, keeping its end: as it is when it fits, else the ellipsis and its end. */
export function fitStart(text: string, columns: number, opts: FitOptions = {}): string {
  if (columns <= 0) return '';
  if (stringWidth(text) <= columns) return text;
  const ellipsis = opts.ellipsis ?? ELLIPSIS;
  const room = columns - stringWidth(ellipsis);
  return room < 0 ? head(ellipsis, columns) : `${ellipsis}${tail(text, room)}`;
}

/** `text` padded with spaces to `columns` columns (never cut): spaces after it, or before it for `right`. */
export function pad(text: string, columns: number, align: 'left' | 'right' = 'left'): string {
  const room = ' '.repeat(Math.max(0, columns - stringWidth(text)));
  return align === 'right' ? `${room}${text}` : `${text}${room}`;
}

/** A table cell: `text` cut to `columns` with an ellipsis, then padded on the side its alignment asks. */
export function fitCell(text: string, columns: number, align: 'left' | 'right' = 'left'): string {
  return pad(fit(text, columns), columns, align);
}

/** Every run of whitespace (newlines included) one space, the ends trimmed; then fitted when `columns` is given. */
export function flatLine(text: string, columns?: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return columns === undefined ? flat : fit(flat, columns);
}

/** The last non-blank line of `text`, trimmed and fitted (evidence short enough for a one-line motif). */
export function lastLine(text: string, columns: number, opts: FitOptions = {}): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return fit(lines.at(-1) ?? '', columns, opts);
}
