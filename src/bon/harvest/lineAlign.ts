// Two lists of lines aligned as a diff aligns them (pure): the longest common subsequence of the two is matched line
// for line; between two matches, a line changed on both sides faces its counterpart (the most alike lines are
// paired, the rest in order) and the longer side's surplus faces a blank. The compare view (`s` on the arms board) reads it so
// two arms' hunks of different lengths stay in step: a line one arm added shifts nothing that follows.
//
// The common head and tail are matched first (two arms' patches of one base mostly agree), and the table of the
// middle is bounded: past MAX_CELLS the middle is paired in order, unmatched, rather than costing the screen
// seconds or hundreds of megabytes on two unrelated generated files.

export type AlignedLine =
  | { kind: 'same'; left: number; right: number }
  | { kind: 'changed'; left: number; right: number }
  | { kind: 'left'; left: number }
  | { kind: 'right'; right: number };

/** Cells of the LCS table at most (n × m of the middle): 4 M cells of 4 bytes. */
export const MAX_CELLS = 4_000_000;
/** Cells of a gap's pairing table at most; a larger gap is paired in order. */
const MAX_GAP_CELLS = 40_000;
/** Two differing lines are taken for one line changed when this much of the longer is a shared head and tail. */
const ALIKE = 0.5;

/** How alike two lines are: the share of the longer one that is a common head plus a common tail (0 … 1). */
export function likeness(a: string, b: string): number {
  const longest = Math.max(a.length, b.length);
  if (longest === 0) return 1;
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail])
    tail += 1;
  return (head + tail) / longest;
}

/**
 * The pairs of a gap (a[i0…i1) against b[j0…j1), no line equal) worth facing each other: the most alike in order,
 * as a table maximising the summed likeness of pairs of at least ALIKE.
 */
function alikePairs(
  a: readonly string[],
  b: readonly string[],
  i0: number,
  i1: number,
  j0: number,
  j1: number,
): Array<[number, number]> {
  const n = i1 - i0;
  const m = j1 - j0;
  if (n === 0 || m === 0 || n * m > MAX_GAP_CELLS) return [];
  const width = m + 1;
  const best = new Float64Array((n + 1) * width);
  const alike = (i: number, j: number) => {
    const score = likeness(a[i0 + i]!, b[j0 + j]!);
    return score >= ALIKE ? score : -1;
  };
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      const pair = alike(i, j);
      best[i * width + j] = Math.max(
        best[(i + 1) * width + j]!,
        best[i * width + j + 1]!,
        pair >= 0 ? best[(i + 1) * width + j + 1]! + pair : 0,
      );
    }
  }
  const out: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    const here = best[i * width + j]!;
    const pair = alike(i, j);
    if (pair >= 0 && here === best[(i + 1) * width + j + 1]! + pair) {
      out.push([i0 + i, j0 + j]);
      i += 1;
      j += 1;
    } else if (here === best[(i + 1) * width + j]!) i += 1;
    else j += 1;
  }
  return out;
}

/** Indexes of the matched lines of `a` and `b` (ascending in both), by the LCS of their middles. */
function matches(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) {
    out.push([head, head]);
    head += 1;
  }
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail])
    tail += 1;
  const n = a.length - head - tail;
  const m = b.length - head - tail;
  if (n > 0 && m > 0 && n * m <= MAX_CELLS) {
    // lcs[i * (m + 1) + j]: the LCS length of a[head + i …] and b[head + j …] (the middles' suffixes).
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i -= 1) {
      for (let j = m - 1; j >= 0; j -= 1) {
        lcs[i * width + j] =
          a[head + i] === b[head + j]
            ? lcs[(i + 1) * width + j + 1]! + 1
            : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[head + i] === b[head + j]) {
        out.push([head + i, head + j]);
        i += 1;
        j += 1;
      } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) i += 1;
      else j += 1;
    }
  }
  for (let k = tail; k > 0; k -= 1) out.push([a.length - k, b.length - k]);
  return out;
}

/**
 * `left` and `right` aligned, in order: every index of each side appears once. Lines compare by their text; pass
 * keys (e.g. a hunk header reduced to its base range) to compare by something else.
 */
export function alignLines(left: readonly string[], right: readonly string[]): AlignedLine[] {
  const out: AlignedLine[] = [];
  let i = 0;
  let j = 0;
  const inOrder = (untilLeft: number, untilRight: number) => {
    while (i < untilLeft && j < untilRight) out.push({ kind: 'changed', left: i++, right: j++ });
    while (i < untilLeft) out.push({ kind: 'left', left: i++ });
    while (j < untilRight) out.push({ kind: 'right', right: j++ });
  };
  const gap = (untilLeft: number, untilRight: number) => {
    for (const [l, r] of alikePairs(left, right, i, untilLeft, j, untilRight)) {
      inOrder(l, r);
      out.push({ kind: 'changed', left: i++, right: j++ });
    }
    inOrder(untilLeft, untilRight);
  };
  for (const [l, r] of matches(left, right)) {
    gap(l, r);
    out.push({ kind: 'same', left: i++, right: j++ });
  }
  gap(left.length, right.length);
  return out;
}
