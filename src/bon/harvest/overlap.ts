// What best-of-N arms changed alike (pure, no I/O). Every arm starts from the same base commit, so two arms that
// made the same edit wrote the same removed and added lines, though not always at the same @@ offsets (an earlier
// edit in the file shifts the new side). A hunk is therefore keyed by its file and its +/- lines, never by its
// offsets, and the overlap of the arms is the overlap of those keys.
//
// Only header lines name files, read by patchText's parser (quoted names, renames, /dev/null); hunk bodies are
// walked by their @@ line counts so a removed `-- x` line (`--- x`) is never taken for a header. A patch is
// untrusted model text: nothing here sanitises it for a terminal, the views do (printableLine).

import { alignLines } from './lineAlign.js';
import { parsePatchHeaders } from '../patch/text.js';

export interface Hunk {
  /** Repo-relative path, the new one for a rename or a copy, the old one for a deletion. */
  file: string;
  /** The `@@ … @@` line; for a binary file its `GIT binary patch`/`Binary files` line; else its first mode/rename line. */
  header: string;
  /** The hunk's body lines (` `, `+`, `-`, `\`) as written; a binary file's payload; a header-only change's header lines. */
  lines: string[];
  /** The change, independent of line numbers: the file and the +/- lines, trailing whitespace trimmed. */
  key: string;
}

export interface ArmSummary {
  /** Hunks in the arm's patch. */
  hunks: number;
  /** Of those, how many every arm with a patch made. */
  shared: number;
  /** Of those, how many no other arm made. */
  unique: number;
  files: string[];
  added: number;
  removed: number;
}

export interface Overlap {
  /** Hunks in every arm that has a non-empty patch (none unless at least two arms have one). */
  shared: Hunk[];
  /** Hunks in more than one arm but not in all; `arms` ascending. */
  partial: Array<{ hunk: Hunk; arms: number[] }>;
  /** Per arm (every arm given, an empty list when it has none), the hunks no other arm made. */
  unique: Map<number, Hunk[]>;
  perArm: Map<number, ArmSummary>;
}

export interface DiffStats {
  files: string[];
  added: number;
  removed: number;
}

/** One display line of two patches side by side; a missing side is a blank column. */
export interface Row {
  kind: 'file' | 'same' | 'left' | 'right' | 'both-differ';
  left?: string;
  right?: string;
}

/** One file's part of a patch. */
interface FilePart {
  file: string;
  hunks: Hunk[];
  added: number;
  removed: number;
}

interface Section {
  head: string[];
  hunks: Array<{ header: string; lines: string[] }>;
  binaryHeader?: string;
  binary?: string[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
/** Header lines that say something on their own (a mode change, a rename, an empty new file). */
const MEANINGFUL_HEAD =
  /^(old mode|new mode|new file mode|deleted file mode|rename from|rename to|copy from|copy to|similarity index|dissimilarity index) /;

/** Splits a patch into its files' sections, walking each hunk by its line counts. */
function sections(patch: string): Section[] {
  const out: Section[] = [];
  let current: Section | undefined;
  let hunk: { header: string; lines: string[] } | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  for (const raw of patch.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (oldLeft > 0 || newLeft > 0) {
      // An empty line inside a hunk is a context line whose space was stripped (mail clients, editors).
      if (line === '' || /^[ +\-\\]/.test(line)) {
        hunk!.lines.push(raw);
        if (line.startsWith('+')) newLeft -= 1;
        else if (line.startsWith('-')) oldLeft -= 1;
        else if (!line.startsWith('\\')) {
          oldLeft -= 1;
          newLeft -= 1;
        }
        continue;
      }
      // A hunk shorter than its header claims: git calls it corrupt; here it just ends.
      oldLeft = 0;
      newLeft = 0;
    }
    // `\ No newline at end of file` follows the hunk's last line, after the counts reached zero.
    if (hunk && line.startsWith('\\')) {
      hunk.lines.push(raw);
      continue;
    }
    // A plain unified diff (no `diff --git`) starts a file at `---` once the current one has its own.
    const plainStart =
      line.startsWith('--- ') &&
      (!current || current.hunks.length > 0 || current.head.some((h) => h.startsWith('--- ')));
    if (line.startsWith('diff --git ') || plainStart) {
      current = { head: [line], hunks: [] };
      hunk = undefined;
      out.push(current);
      continue;
    }
    if (!current) continue; // a preamble (a commit message, mail headers) names no change
    if (current.binary) {
      current.binary.push(line);
      continue;
    }
    const counts = HUNK_HEADER.exec(line);
    if (counts) {
      hunk = { header: line, lines: [] };
      current.hunks.push(hunk);
      oldLeft = counts[2] === undefined ? 1 : Number(counts[2]);
      newLeft = counts[4] === undefined ? 1 : Number(counts[4]);
    } else if (line.startsWith('GIT binary patch') || line.startsWith('Binary files ')) {
      current.binaryHeader = line;
      current.binary = [];
    } else if (current.hunks.length === 0) {
      current.head.push(line);
    }
  }
  return out;
}

/** The path a section changes, as git apply reads its headers: `+++`, else `---` (a deletion), else the rename or the `diff --git` name. */
function sectionFile(head: readonly string[]): string {
  const { paths } = parsePatchHeaders(head.join('\n'));
  const last = (source: string) => paths.filter((p) => p.source === source).at(-1)?.path;
  return last('+++') ?? last('---') ?? last('rename to') ?? last('copy to') ?? last('diff --git') ?? '(unknown file)';
}

/** The +/- (and `\`) lines of a hunk, as the part of its key that says what changed. */
function changeText(lines: readonly string[]): string {
  return lines
    .filter((l) => /^[+\-\\]/.test(l))
    .map((l) => l.trimEnd())
    .join('\n');
}

function fileParts(patch: string): FilePart[] {
  const seen = new Map<string, number>();
  // The same change twice in one patch stays two hunks: the second's key says so, so another arm with it once
  // shares one of them, not both.
  const unique = (key: string): string => {
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return n === 1 ? key : `${key}\u0000#${n}`;
  };
  return sections(patch).map((section) => {
    const file = sectionFile(section.head);
    const hunks: Hunk[] = [];
    let added = 0;
    let removed = 0;
    for (const h of section.hunks) {
      for (const l of h.lines) {
        if (l.startsWith('+')) added += 1;
        else if (l.startsWith('-')) removed += 1;
      }
      hunks.push({ file, header: h.header, lines: h.lines, key: unique(`${file}\u0000${changeText(h.lines)}`) });
    }
    if (section.binary) {
      const payload = [...section.binary];
      while (payload.length > 0 && payload.at(-1) === '') payload.pop();
      // Without --binary there is no payload: the blob ids of the `index` line are then what identifies the content.
      const identity =
        payload.length > 0
          ? payload.join('\n')
          : `${section.head.find((h) => h.startsWith('index ')) ?? ''}\n${section.binaryHeader}`;
      hunks.push({
        file,
        header: section.binaryHeader!,
        lines: payload,
        key: unique(`${file}\u0000binary\u0000${identity}`),
      });
    } else if (section.hunks.length === 0) {
      // A pure rename, a mode change, an empty new file: no hunk, yet a change another arm may or may not share.
      const meaningful = section.head.filter((h) => MEANINGFUL_HEAD.test(h));
      if (meaningful.length > 0) {
        hunks.push({
          file,
          header: meaningful[0]!,
          lines: meaningful,
          key: unique(`${file}\u0000head\u0000${meaningful.map((m) => m.trimEnd()).join('\n')}`),
        });
      }
    }
    return { file, hunks, added, removed };
  });
}

/** Every hunk of a patch, in patch order; a binary file is one hunk, a header-only change (rename, mode) one too. */
export function parseHunks(patch: string): Hunk[] {
  return fileParts(patch).flatMap((part) => part.hunks);
}

/** The files a patch touches (in patch order, once each) and its added and removed lines (file headers not counted). */
export function diffStats(patch: string): DiffStats {
  return statsOf(fileParts(patch));
}

function statsOf(parts: readonly FilePart[]): DiffStats {
  return {
    files: [...new Set(parts.map((p) => p.file))],
    added: parts.reduce((sum, p) => sum + p.added, 0),
    removed: parts.reduce((sum, p) => sum + p.removed, 0),
  };
}

/**
 * Which hunks the arms share. An arm whose patch has no hunk takes no part in "every arm": two arms that made the
 * same edit while a third gave up share it. Lists follow the arms' order, then patch order.
 */
export function armOverlap(arms: ReadonlyArray<{ arm: number; patch: string }>): Overlap {
  const parsed = arms.map(({ arm, patch }) => {
    const parts = fileParts(patch);
    return { arm, hunks: parts.flatMap((p) => p.hunks), stats: statsOf(parts) };
  });
  const taking = parsed.filter((p) => p.hunks.length > 0);
  const holders = new Map<string, { hunk: Hunk; arms: number[] }>();
  for (const { arm, hunks } of taking) {
    for (const hunk of hunks) {
      const entry = holders.get(hunk.key);
      if (entry) entry.arms.push(arm);
      else holders.set(hunk.key, { hunk, arms: [arm] });
    }
  }
  const everyone = taking.length >= 2 ? taking.length : Infinity;
  const shared: Hunk[] = [];
  const partial: Array<{ hunk: Hunk; arms: number[] }> = [];
  for (const entry of holders.values()) {
    if (entry.arms.length >= everyone) shared.push(entry.hunk);
    else if (entry.arms.length > 1) partial.push({ hunk: entry.hunk, arms: [...entry.arms].sort((a, b) => a - b) });
  }
  const unique = new Map<number, Hunk[]>();
  const perArm = new Map<number, ArmSummary>();
  for (const { arm, hunks, stats } of parsed) {
    const own = hunks.filter((h) => holders.get(h.key)!.arms.length === 1);
    const sharedCount = hunks.filter((h) => holders.get(h.key)!.arms.length >= everyone).length;
    unique.set(arm, own);
    perArm.set(arm, { hunks: hunks.length, shared: sharedCount, unique: own.length, ...stats });
  }
  return { shared, partial, unique, perArm };
}

// -- side by side ---------------------------------------------------------------------------------------------

/** The old-side lines a hunk covers, [start, end); both patches have the same base, so these compare across arms. */
function oldRange(hunk: Hunk): { start: number; end: number } | undefined {
  const m = HUNK_HEADER.exec(hunk.header);
  if (!m) return undefined;
  const start = Number(m[1]);
  const count = m[2] === undefined ? 1 : Number(m[2]);
  return { start, end: start + Math.max(1, count) };
}

/** The lines a hunk shows: its header, then its body; a binary payload only by its first line (`literal 1234`). */
function shownLines(hunk: Hunk): string[] {
  const binary = hunk.header.startsWith('GIT binary patch') || hunk.header.startsWith('Binary files ');
  if (binary) return [hunk.header, ...hunk.lines.slice(0, 1)];
  return oldRange(hunk) ? [hunk.header, ...hunk.lines] : hunk.lines;
}

/** Hunks of both sides that touch the same base lines (directly or through one another), in base order. */
interface Cluster {
  left: Hunk[];
  right: Hunk[];
}

/**
 * One file's hunks from both sides, clustered: text hunks by their overlapping base ranges (hunks of one patch never
 * overlap, so a cluster pairs the two sides' takes on one place), binary and header-only changes (no range) in one
 * cluster of their own, first.
 */
function fileClusters(left: readonly Hunk[], right: readonly Hunk[]): Cluster[] {
  const unranged: Cluster = { left: left.filter((h) => !oldRange(h)), right: right.filter((h) => !oldRange(h)) };
  const ranged = [
    ...left.map((hunk) => ({ hunk, side: 'left' as const })),
    ...right.map((hunk) => ({ hunk, side: 'right' as const })),
  ]
    .flatMap((entry) => {
      const range = oldRange(entry.hunk);
      return range ? [{ ...entry, range }] : [];
    })
    .sort((a, b) => a.range.start - b.range.start || (a.side === b.side ? 0 : a.side === 'left' ? -1 : 1));
  const clusters: Cluster[] = unranged.left.length + unranged.right.length > 0 ? [unranged] : [];
  let current: (Cluster & { end: number }) | undefined;
  for (const { hunk, side, range } of ranged) {
    if (!current || range.start >= current.end) {
      current = { left: [], right: [], end: range.end };
      clusters.push(current);
    }
    current[side].push(hunk);
    current.end = Math.max(current.end, range.end);
  }
  return clusters.map(({ left: l, right: r }) => ({ left: l, right: r }));
}

/**
 * What a shown line is compared by: a hunk header by its base range and its new length (`@@ -37,7 +…,7`: the same
 * place and size, though an earlier edit moved the new side), any other line by its text.
 */
function alignKey(line: string): string {
  const m = HUNK_HEADER.exec(line);
  return m ? `@@ -${m[1]},${m[2] ?? '1'} +${m[4] ?? '1'}` : line;
}

function clusterRows({ left, right }: Cluster): Row[] {
  const l = left.flatMap(shownLines);
  const r = right.flatMap(shownLines);
  if (left.some((h) => !oldRange(h)) || right.some((h) => !oldRange(h))) {
    // A binary or header-only change shows a stand-in for its content (a size, a mode): alike only when the keys are.
    const kind =
      left.length > 0 && right.length > 0
        ? left.map((h) => h.key).join('\n') === right.map((h) => h.key).join('\n')
          ? 'same'
          : 'both-differ'
        : undefined;
    if (kind === undefined)
      return left.length > 0
        ? l.map((text) => ({ kind: 'left', left: text }))
        : r.map((text) => ({ kind: 'right', right: text }));
    return Array.from({ length: Math.max(l.length, r.length) }, (_, i) => ({ kind, left: l[i], right: r[i] }));
  }
  const isHeader = (line: string | undefined) => line !== undefined && HUNK_HEADER.test(line);
  return alignLines(l.map(alignKey), r.map(alignKey)).flatMap((line): Row[] => {
    switch (line.kind) {
      case 'same':
        return [{ kind: 'same', left: l[line.left], right: r[line.right] }];
      case 'changed':
        // A hunk header never faces a body line: each keeps its own row.
        if (isHeader(l[line.left]) !== isHeader(r[line.right]))
          return [
            { kind: 'left', left: l[line.left] },
            { kind: 'right', right: r[line.right] },
          ];
        return [{ kind: 'both-differ', left: l[line.left], right: r[line.right] }];
      case 'left':
        return [{ kind: 'left', left: l[line.left] }];
      case 'right':
        return [{ kind: 'right', right: r[line.right] }];
    }
  });
}

/**
 * Two patches as rows of two columns: files in path order (git writes them so), a file row naming the file on the
 * side(s) that touch it, then its hunks in base-line order, those of both sides on the same base lines aligned line
 * by line as a diff aligns them (./lineAlign.ts): a line both arms show is 'same', lines between two such that differ
 * face each other as 'both-differ', the longer side's surplus on its own side ('left' / 'right', the other column
 * blank). A hunk only one arm made is all on its side.
 */
export function sideBySide(left: string, right: string): Row[] {
  const byFile = (patch: string) => {
    const files = new Map<string, Hunk[]>();
    for (const part of fileParts(patch)) files.set(part.file, [...(files.get(part.file) ?? []), ...part.hunks]);
    return files;
  };
  const l = byFile(left);
  const r = byFile(right);
  const files = [...new Set([...l.keys(), ...r.keys()])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rows: Row[] = [];
  for (const file of files) {
    rows.push({ kind: 'file', left: l.has(file) ? file : undefined, right: r.has(file) ? file : undefined });
    for (const cluster of fileClusters(l.get(file) ?? [], r.get(file) ?? [])) rows.push(...clusterRows(cluster));
  }
  return rows;
}
