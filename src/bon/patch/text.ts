// Reading the paths a patch touches, before git does (pure). Only header lines name paths: hunk bodies are
// skipped by their line counts, so a removed SQL comment (`-- x` → `--- x`) is never mistaken for a file
// header. Binary hunks are base85 lines without spaces, so no header pattern (all have a space) matches them.

export interface PatchPath {
  /** As written in the patch, unquoted (with its a/ b/ prefix for `diff --git`, `---`, `+++`). */
  raw: string;
  /** Repo-relative, as git apply will use it (the prefix stripped). */
  path: string;
  /** The header line kind that named it. */
  source: string;
}

export interface PatchHeaders {
  paths: PatchPath[];
  /** A path whose mode line names a symlink or a submodule (in any spelling git parses), if any. */
  symlinkCreated?: string;
  /** The first such mode line, as written (for the motif). */
  specialMode?: string;
}

/** git's mode bits for a symlink and a submodule (gitlink); the type is `mode & 0o170000`. */
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFGITLINK = 0o160000;

/**
 * The file type of a mode as git reads it: `strtoul(…, 8)` on leading octal digits, so `120777`, `0120000` and
 * `1120000` are all symlinks. Only the last six digits can reach the type bits. undefined: not a mode git takes.
 */
export function modeType(text: string): number | undefined {
  const digits = /^[0-7]+/.exec(text.trimStart())?.[0];
  if (!digits) return undefined;
  return parseInt(digits.slice(-6), 8) & S_IFMT;
}

/** Whether a mode (as written) is one an arm may never create or change: a symlink or a submodule. */
export function isSpecialMode(text: string): boolean {
  const type = modeType(text);
  return type === S_IFLNK || type === S_IFGITLINK;
}

/** The header lines that name paths, in every spelling git's apply.c accepts (`rename old` = `rename from`). */
const MOVED = /^(rename from|rename to|rename old|rename new|copy from|copy to) (.*)$/;
/** The header lines that carry a mode; `index <a>..<b> <mode>` sets both modes when present. */
const MODED = /^(old mode|new mode|deleted file mode|new file mode) (.*)$|^index [0-9a-fA-F]+\.\.[0-9a-fA-F]+ (.*)$/;

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** A C-quoted git path (`"a/x\tb"`, octal bytes for non-ASCII) → its text and the rest of the line. */
export function unquote(text: string): { value: string; rest: string } | undefined {
  if (!text.startsWith('"')) return undefined;
  const bytes: number[] = [];
  for (let i = 1; i < text.length; i += 1) {
    const ch = text[i]!;
    if (ch === '"') return { value: Buffer.from(bytes).toString('utf8'), rest: text.slice(i + 1) };
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) return undefined;
    if (/[0-7]/.test(next)) {
      const oct = /^[0-7]{1,3}/.exec(text.slice(i + 1))![0];
      bytes.push(parseInt(oct, 8) & 0xff);
      i += oct.length;
    } else if (next in ESCAPES) {
      bytes.push(ESCAPES[next]!);
      i += 1;
    } else {
      return undefined;
    }
  }
  return undefined; // no closing quote
}

/** Drops git's first path component (`a/x` → `x`), as `git apply -p1` does. */
function stripPrefix(raw: string): string {
  const slash = raw.indexOf('/');
  return slash === -1 ? raw : raw.slice(slash + 1);
}

/** A `---`/`+++` name: quoted, or up to a tab (timestamps of non-git diffs). */
function headerName(rest: string): string {
  const quoted = unquote(rest);
  if (quoted) return quoted.value;
  const tab = rest.indexOf('\t');
  return (tab === -1 ? rest : rest.slice(0, tab)).replace(/\r$/, '');
}

/** The two names of `diff --git <a> <b>`; unquoted names with spaces are split where both halves agree. */
function gitLineNames(rest: string): string[] {
  const first = unquote(rest);
  if (first) {
    const tail = first.rest.trimStart();
    const second = unquote(tail);
    return [first.value, second ? second.value : tail];
  }
  const secondQuoted = rest.indexOf(' "');
  if (secondQuoted !== -1) {
    const second = unquote(rest.slice(secondQuoted + 1));
    if (second) return [rest.slice(0, secondQuoted), second.value];
  }
  for (let i = rest.indexOf(' '); i !== -1; i = rest.indexOf(' ', i + 1)) {
    const a = rest.slice(0, i);
    const b = rest.slice(i + 1);
    if (stripPrefix(a) === stripPrefix(b)) return [a, b];
  }
  // A rename with spaces: the rename lines name it precisely; here every space-separated word is checked.
  return rest.split(' ');
}

/** Every path named by the patch's headers, in order, and the first mode line naming a symlink or submodule. */
export function parsePatchHeaders(text: string): PatchHeaders {
  const paths: PatchPath[] = [];
  let symlinkCreated: string | undefined;
  let specialMode: string | undefined;
  let current: string | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  const add = (raw: string, source: string, prefixed: boolean): void => {
    const p = prefixed ? stripPrefix(raw) : raw;
    paths.push({ raw, path: p, source });
    current = p;
  };
  for (const line of text.split('\n').map((l) => l.replace(/\r$/, ''))) {
    // A line no hunk can hold ends the hunk early: git calls such a patch corrupt, and a header must never
    // hide behind a hunk that claims more lines than it has.
    if ((oldLeft > 0 || newLeft > 0) && line !== '' && !/^[ +\-\\]/.test(line)) {
      oldLeft = 0;
      newLeft = 0;
    }
    if (oldLeft > 0 || newLeft > 0) {
      // Inside a hunk: ' ' (or an empty line) counts on both sides, '-' old, '+' new, '\' (no newline at end) neither.
      if (line.startsWith('\\')) continue;
      if (line.startsWith('-')) oldLeft -= 1;
      else if (line.startsWith('+')) newLeft -= 1;
      else {
        oldLeft -= 1;
        newLeft -= 1;
      }
      continue;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
    } else if (line.startsWith('diff --git ')) {
      for (const name of gitLineNames(line.slice('diff --git '.length))) add(name, 'diff --git', true);
    } else if (line.startsWith('--- ') || line.startsWith('+++ ')) {
      const name = headerName(line.slice(4));
      if (name !== '/dev/null') add(name, line.slice(0, 3), true);
    } else {
      const moved = MOVED.exec(line);
      const moded = moved ? null : MODED.exec(line);
      if (moved) add(unquote(moved[2]!)?.value ?? moved[2]!, moved[1]!, false);
      else if (moded && isSpecialMode(moded[2] ?? moded[3]!) && symlinkCreated === undefined) {
        symlinkCreated = current ?? '(unknown path)';
        specialMode = line;
      }
    }
  }
  return { paths, symlinkCreated, specialMode };
}
