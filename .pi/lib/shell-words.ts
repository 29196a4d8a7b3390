// A light reader of bash command lines, for damage-control: enough of the shell's grammar to find the
// simple commands, their words after quote removal, their redirections and the command lines nested in them
// ($(...), backquotes, <(...), here-documents), so the guard judges what a command does rather than how it is
// spelled. It is no full parser: what it cannot read (a variable, a glob, a substitution) is marked unknown
// from that point of the word, and the guard decides what an unknown part means for each rule.

export interface Word {
  /** The word after quote removal; `~`, `$HOME` and `${HOME}` expanded; unknown parts kept as written. */
  text: string;
  /** The part of `text` before the first unknown part (all of it when `known`). */
  prefix: string;
  /** Nothing in the word is unknown. */
  known: boolean;
  /** The first unknown part is a glob or brace pattern (so the word names files in the prefix's folder). */
  glob: boolean;
}

export interface Redirect {
  /** The operator as written without its descriptor: >, >>, >|, &>, &>>, <>, >&, <, <<, <<-, <<<, <&. */
  op: string;
  target: Word;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** Command lines this one runs on its own: substitutions inside its words and redirections. */
  nested: string[];
  /** The bodies of its here-documents (a shell reading one runs it). */
  heredocs: string[];
  /** The operator before it: '' first, ';', '&&', '||', '|', '&', '\n', '(' or ')'. */
  after: string;
}

interface Builder {
  text: string;
  prefix: string | null;
  glob: boolean;
  quoted: boolean;
}

const SEPARATOR_CHARS = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);

/** The index just past the `)` that closes an opening at `start` (which is just past the `(`). */
function closingParen(src: string, start: number): number {
  let depth = 1;
  for (let i = start; i < src.length; i += 1) {
    const c = src[i];
    if (c === '\\') i += 1;
    else if (c === "'") {
      const end = src.indexOf("'", i + 1);
      i = end < 0 ? src.length : end;
    } else if (c === '"') {
      for (i += 1; i < src.length && src[i] !== '"'; i += 1) if (src[i] === '\\') i += 1;
    } else if (c === '(') depth += 1;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return src.length;
}

function decodeAnsiC(body: string): string {
  const simple: Record<string, string> = {
    n: '\n',
    t: '\t',
    r: '\r',
    a: '\x07',
    b: '\b',
    e: '\x1b',
    E: '\x1b',
    f: '\f',
    v: '\v',
    '\\': '\\',
    "'": "'",
    '"': '"',
    '?': '?',
  };
  return body.replace(/\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)/gs, (_all, esc: string) => {
    if (esc.startsWith('x')) return String.fromCharCode(parseInt(esc.slice(1), 16));
    if (/^[0-7]+$/.test(esc)) return String.fromCharCode(parseInt(esc, 8));
    return simple[esc] ?? `\\${esc}`;
  });
}

/** What a sticky regex matches at `at` ('' when nothing): no copy of the rest of the line per character. */
function matchAt(sticky: RegExp, src: string, at: number): string {
  sticky.lastIndex = at;
  return sticky.exec(src)?.[0] ?? '';
}

/** `~` expands at a word's start, and after the `=` of a word shaped like an assignment (`of=~/x`, as bash does). */
function tildeHere(word: Builder | null): boolean {
  return word === null || (word.prefix === null && /^[A-Za-z_][A-Za-z0-9_]*=$/.test(word.text));
}

/** Splits a bash command line into its simple commands. `home` expands `~` and `$HOME`. */
export function parseShell(src: string, home: string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  const fresh = (after: string): SimpleCommand => ({ words: [], redirects: [], nested: [], heredocs: [], after });
  let current = fresh('');
  let word: Builder | null = null;
  let redirectOp: string | null = null;
  const heredocs: { delimiter: string; strip: boolean; owner: SimpleCommand }[] = [];
  let i = 0;

  const start = (): Builder => (word ??= { text: '', prefix: null, glob: false, quoted: false });
  const literal = (s: string) => {
    start().text += s;
  };
  const unknown = (raw: string, glob = false) => {
    const w = start();
    if (w.prefix === null) {
      w.prefix = w.text;
      w.glob = glob;
    }
    w.text += raw;
  };
  const finishWord = () => {
    if (word === null) return;
    const done: Word = {
      text: word.text,
      prefix: word.prefix ?? word.text,
      known: word.prefix === null,
      glob: word.glob,
    };
    word = null;
    if (redirectOp === null) {
      current.words.push(done);
      return;
    }
    current.redirects.push({ op: redirectOp, target: done });
    if (redirectOp === '<<' || redirectOp === '<<-')
      heredocs.push({ delimiter: done.text, strip: redirectOp === '<<-', owner: current });
    redirectOp = null;
  };
  const endCommand = (sep: string) => {
    finishWord();
    redirectOp = null;
    if (current.words.length > 0 || current.redirects.length > 0 || current.nested.length > 0) commands.push(current);
    current = fresh(sep);
  };
  const readHeredocs = () => {
    for (const doc of heredocs.splice(0)) {
      const lines: string[] = [];
      while (i < src.length) {
        const end = src.indexOf('\n', i);
        const line = src.slice(i, end < 0 ? src.length : end);
        i = end < 0 ? src.length : end + 1;
        if ((doc.strip ? line.replace(/^\t+/, '') : line) === doc.delimiter) break;
        lines.push(line);
      }
      doc.owner.heredocs.push(lines.join('\n'));
    }
  };
  const dollar = () => {
    const next = src[i + 1];
    if (next === '(') {
      const end = closingParen(src, i + 2);
      if (src[i + 2] !== '(') current.nested.push(src.slice(i + 2, Math.max(i + 2, end - 1)));
      unknown(src.slice(i, end));
      i = end;
    } else if (next === '{') {
      const close = src.indexOf('}', i + 2);
      const end = close < 0 ? src.length : close + 1;
      const name = src.slice(i + 2, end - 1);
      if (name === 'HOME') literal(home);
      else unknown(src.slice(i, end));
      i = end;
    } else if (next !== undefined && /[A-Za-z_]/.test(next)) {
      const name = matchAt(/[A-Za-z_][A-Za-z0-9_]*/y, src, i + 1);
      if (name === 'HOME') literal(home);
      else unknown(`$${name}`);
      i += 1 + name.length;
    } else if (next !== undefined && /[0-9@*#?$!-]/.test(next)) {
      unknown(src.slice(i, i + 2));
      i += 2;
    } else {
      literal('$');
      i += 1;
    }
  };
  const backquote = () => {
    let j = i + 1;
    let body = '';
    for (; j < src.length && src[j] !== '`'; j += 1) {
      if (src[j] === '\\' && j + 1 < src.length) body += src[++j];
      else body += src[j];
    }
    current.nested.push(body);
    unknown(src.slice(i, j + 1));
    i = j + 1;
  };

  while (i < src.length) {
    const c = src[i];
    const next = src[i + 1];
    if (c === ' ' || c === '\t') {
      finishWord();
      i += 1;
    } else if (c === '\n') {
      endCommand('\n');
      i += 1;
      readHeredocs();
    } else if (c === '#' && word === null) {
      const end = src.indexOf('\n', i);
      i = end < 0 ? src.length : end;
    } else if (c === '\\') {
      if (next === '\n') i += 2;
      else {
        start().quoted = true;
        literal(next ?? '');
        i += 2;
      }
    } else if (c === "'") {
      const end = src.indexOf("'", i + 1);
      start().quoted = true;
      literal(src.slice(i + 1, end < 0 ? src.length : end));
      i = end < 0 ? src.length : end + 1;
    } else if (c === '$' && next === "'") {
      let j = i + 2;
      for (; j < src.length && src[j] !== "'"; j += 1) if (src[j] === '\\') j += 1;
      start().quoted = true;
      literal(decodeAnsiC(src.slice(i + 2, j)));
      i = j + 1;
    } else if (c === '"' || (c === '$' && next === '"')) {
      start().quoted = true;
      i += c === '$' ? 2 : 1;
      while (i < src.length && src[i] !== '"') {
        const d = src[i];
        if (d === '\\' && i + 1 < src.length) {
          const e = src[i + 1];
          if (e !== '\n') literal('$`"\\'.includes(e) ? e : `\\${e}`);
          i += 2;
        } else if (d === '$') dollar();
        else if (d === '`') backquote();
        else {
          literal(d);
          i += 1;
        }
      }
      i += 1;
    } else if (c === '$') {
      start().quoted = true;
      dollar();
    } else if (c === '`') {
      start().quoted = true;
      backquote();
    } else if ((c === '<' || c === '>') && next === '(') {
      const end = closingParen(src, i + 2);
      current.nested.push(src.slice(i + 2, Math.max(i + 2, end - 1)));
      unknown(src.slice(i, end));
      i = end;
    } else if (c === '<' || c === '>' || (c === '&' && next === '>')) {
      // A word of plain digits right before the operator is its descriptor (2>file), not an argument.
      const pending = word as Builder | null; // set by the closures above, which TypeScript does not follow
      if (pending !== null && !(pending.prefix === null && !pending.quoted && /^\d+$/.test(pending.text))) finishWord();
      word = null;
      const op =
        ['&>>', '&>', '>>', '>|', '>&', '<<<', '<<-', '<<', '<>', '<&', '>', '<'].find((o) => src.startsWith(o, i)) ??
        c;
      redirectOp = op;
      i += op.length;
    } else if (c === '&' || c === '|' || c === ';') {
      const two = src.slice(i, i + 2);
      const op = ['&&', '||', ';;', ';&', '|&'].includes(two) ? two : c;
      endCommand(op === '|&' ? '|' : op.startsWith(';') ? ';' : op);
      i += op.length;
    } else if (c === '(' || c === ')') {
      endCommand(c);
      i += 1;
    } else if (c === '~' && tildeHere(word as Builder | null)) {
      const name = matchAt(/[^\s/;&|<>()'"`$]*/y, src, i + 1);
      if (name === '') literal(home);
      else if (name === '+' || name === '-') unknown(`~${name}`);
      else literal(`${home.replace(/[\\/][^\\/]*$/, '')}/${name}`);
      i += 1 + name.length;
    } else if (
      (c === '*' || c === '?' || c === '[') &&
      !(c === '[' && word === null && (next === ' ' || next === '['))
    ) {
      unknown(c, true);
      i += 1;
    } else if (
      c === '{' &&
      !(word === null && (next === undefined || SEPARATOR_CHARS.has(next))) &&
      matchAt(/\{[^}\s]*(,|\.\.)[^}\s]*\}/y, src, i) !== ''
    ) {
      unknown(c, true);
      i += 1;
    } else {
      literal(c);
      i += 1;
    }
  }
  endCommand('');
  return commands;
}

/** `NAME=value` before a command word: an assignment, not the command. */
export function isAssignment(word: Word): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(word.text);
}
