// The roster's YAML, read without traps: the text is bounded (size, nesting) before the parser sees it, errors
// name positions and codes but never the source, and mappings come out as null-prototype objects whose keys
// are checked (no reserved name, no control character), so no lookup can reach an inherited member.
// Imported lazily by roster.ts, like the `yaml` package it loads (see the top of roster.ts).
import { Composer, Lexer, LineCounter, Parser, type Document, type YAMLError } from 'yaml';
import {
  MAX_ROSTER_ALIASES,
  MAX_ROSTER_BYTES,
  MAX_ROSTER_DEPTH,
  MAX_ROSTER_NODES,
  RESERVED_NAMES,
} from './rosterVocabulary.js';
import { UNSAFE_CHARS, formatPath, kindOf, shown } from '../contract/zodIssues.js';
import { FactoryError } from '../contract/errors.js';

export type YamlRead = { ok: true; data: unknown } | { ok: false; motif: string };

/** Thrown inside this module only, to stop a walk; `readRosterYaml` turns it into its motif. */
class Refusal extends FactoryError {
  constructor(message: string) {
    super(message, 'usage');
  }
}

/**
 * yaml's messages that quote nothing from the source, kept as they are. Any other message (many interpolate
 * a token: `Invalid escape sequence \q`, `Unresolved tag: !…`, a plain scalar) is replaced by its code's phrase.
 */
const VERBATIM = new Set([
  'All sequence items must start at the same column',
  'Implicit map keys need to be followed by map values',
  'Implicit keys need to be on a single line',
  'Implicit keys of flow sequence pairs need to be on a single line',
  'Nested mappings are not allowed in compact mappings',
  'A block sequence may not be used as an implicit map key',
  'Map keys must be unique',
  'Missing closing "quote',
  "Missing closing 'quote",
  'Tabs are not allowed as indentation',
  'Comments must be separated from other tokens by white space characters',
  'Tags and anchors must be separated from the next token by white space',
  'Sequence item without - indicator',
  'A node can have at most one anchor',
  'A node can have at most one tag',
  'An alias node must not specify any properties',
  ...['sequence', 'map'].flatMap((kind) => {
    const [name, end] = kind === 'map' ? ['Flow map', '}'] : ['Flow sequence', ']'];
    const fc = `flow ${kind}`;
    return [
      `${name} must end with a ${end}`,
      `${name} in block collection must be sufficiently indented and end with a ${end}`,
      `Missing , between ${fc} items`,
      `Missing , or : between ${fc} items`,
      `Missing space after : in ${fc}`,
      `Unexpected , in ${fc}`,
      `Unexpected empty item in ${fc}`,
    ];
  }),
]);

const PHRASES: Record<string, string> = {
  ALIAS_PROPS: 'an alias cannot carry an anchor or a tag',
  BAD_ALIAS: 'an empty or ambiguous anchor or alias name',
  BAD_COLLECTION_TYPE: 'a tag that does not fit its collection',
  BAD_DIRECTIVE: 'a bad % directive',
  BAD_DQ_ESCAPE: 'an invalid escape sequence in a double-quoted string',
  BAD_INDENT: 'bad indentation',
  BAD_PROP_ORDER: 'an anchor or tag in the wrong place',
  BAD_SCALAR_START: 'a plain value cannot start with this character (quote the value)',
  BLOCK_AS_IMPLICIT_KEY: 'a block collection used as a key',
  BLOCK_IN_FLOW: 'a block collection inside [ ] or { }',
  DUPLICATE_KEY: 'a key written twice in the same mapping',
  KEY_OVER_1024_CHARS: 'a key longer than 1024 characters',
  MISSING_CHAR: 'a missing character (a closing quote or bracket, a comma, a colon or a space)',
  MULTILINE_IMPLICIT_KEY: 'a key spread over several lines',
  MULTIPLE_ANCHORS: 'a value with two anchors',
  MULTIPLE_DOCS: 'more than one YAML document (a second ---)',
  MULTIPLE_TAGS: 'a value with two tags',
  NON_STRING_KEY: 'a key that is not a plain string (a list, a mapping or a tagged value)',
  RESOURCE_EXHAUSTION: 'too deeply nested to read',
  TAB_AS_INDENT: 'tabs used as indentation',
  TAG_RESOLVE_FAILED: 'an unknown tag',
  UNEXPECTED_TOKEN: 'an unexpected character or token',
};

/**
 * `YAML syntax error at line 5, column 3: <what> (CODE)`: the position and the kind, never the line's text.
 * yaml's pretty errors are off (they append a frame of the source); the position comes from the line counter.
 */
function yamlErrorMotif(code: string, message: string, offset: number, lines: LineCounter): string {
  const what = VERBATIM.has(message.trim()) ? message.trim() : (PHRASES[code] ?? 'unreadable YAML');
  const at = lines.linePos(offset);
  return `YAML syntax error at line ${at.line}, column ${at.col}: ${what} (${code})`;
}

const SCALAR = '\x1f'; // the lexer's mark before a scalar's source, which follows as the next token
const FLOW_END = '\x18'; // the lexer ends every open flow collection (an indentation drop inside one)

/**
 * The first line where the nesting estimate passes `max`, or 0. yaml's lexer is linear and iterative, and knows
 * quotes, comments and block scalars, so brackets in a `run:` script count for nothing. The estimate is an upper
 * bound: each block line is one level below the nearest less-indented line (one more at equal indentation, for
 * a sequence under its key) plus one per `-`, `?` or `:` on it; each open flow collection counts two (it and an
 * implicit pair inside). Every lexeme is kept in `lexemes`, so that the parser does not lex the text again.
 */
function tooDeepAt(text: string, max: number, lexemes: string[]): number {
  const open: Array<{ indent: number; depth: number }> = [];
  let current: { indent: number; depth: number } | undefined;
  let flow = 0;
  let line = 1;
  let lineStart = true;
  let indent = 0;
  let skipNext = false;
  const newLine = () => {
    lineStart = true;
    indent = 0;
  };
  const settle = () => {
    if (!lineStart) return;
    lineStart = false;
    if (flow > 0) return; // a flow collection's lines belong to it, whatever their indentation
    while (open.length && open.at(-1)!.indent > indent) open.pop();
    const equal = open.at(-1)?.indent === indent;
    if (equal) open.pop();
    current = { indent, depth: (open.at(-1)?.depth ?? 0) + 1 + (equal ? 1 : 0) };
    open.push(current);
  };
  for (const token of new Lexer().lex(text)) {
    lexemes.push(token);
    for (let i = token.indexOf('\n'); i !== -1; i = token.indexOf('\n', i + 1)) line += 1;
    if (skipNext) {
      skipNext = false;
      if (token.endsWith('\n') && flow === 0) newLine(); // a block scalar's text ends with its last line
      continue;
    }
    const first = token[0];
    if (first === '\n' || first === '\r') {
      if (flow === 0) newLine();
      continue;
    }
    if (first === ' ' || first === '\t') {
      if (lineStart) indent = token.length;
      continue;
    }
    if (first === '#' || token === '\x02' || token === '\uFEFF' || token === '') continue;
    if (token === FLOW_END) {
      flow = 0;
      continue;
    }
    settle();
    if (token === SCALAR) skipNext = true;
    else if (token === '[' || token === '{') flow += 1;
    else if (token === ']' || token === '}') flow = Math.max(0, flow - 1);
    else if ((token === '-' || token === '?' || token === ':') && flow === 0 && current) current.depth += 1;
    if ((current?.depth ?? 0) + 2 * flow > max) return line;
  }
  return 0;
}

/** Own, checked keys into null-prototype objects; depth and count bounded (an alias may point into itself). */
function toPlain(value: unknown, path: Array<string | number>, budget: { nodes: number }): unknown {
  budget.nodes += 1;
  if (budget.nodes > MAX_ROSTER_NODES)
    throw new Refusal(`more than ${MAX_ROSTER_NODES} values once aliases are expanded`);
  if (path.length > MAX_ROSTER_DEPTH)
    throw new Refusal(
      `${formatPath(path.slice(0, 8), 'roster')}…: nested deeper than ${MAX_ROSTER_DEPTH} levels (or an alias inside its own anchor)`,
    );
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item, i) => toPlain(item, [...path, i], budget));
  if (!(value instanceof Map))
    throw new Refusal(
      `${formatPath(path, 'roster')}: a tagged YAML value (!!set, !!binary, !!timestamp…) is not a roster value`,
    );
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, item] of value) {
    if (typeof key !== 'string')
      throw new Refusal(`${formatPath(path, 'roster')}: a key must be a plain string, ${kindOf(key)} found`);
    const named = path.length ? `${formatPath(path, 'roster')}.${shown(key)}` : shown(key);
    if (UNSAFE_CHARS.test(key))
      throw new Refusal(`${named}: a key with a control or line-break character (shown escaped): rename it`);
    if (RESERVED_NAMES.has(key)) {
      const fix = path.length === 1 && path[0] === 'agents' ? 'rename the role' : 'rename or remove the key';
      throw new Refusal(`${named} is a reserved name (it collides with JavaScript object internals): ${fix}`);
    }
    out[key] = toPlain(item, [...path, key], budget);
  }
  return out;
}

/**
 * yaml's own parseDocument, fed the lexemes the pre-scan cut. Also returns where a second document starts:
 * parseDocument makes that an error, so does the caller.
 */
function compose(
  lexemes: readonly string[],
  length: number,
  lines: LineCounter,
): { doc: Document.Parsed; second?: number } {
  const parser = new Parser(lines.addNewLine);
  function* tokens() {
    lines.addNewLine(0);
    for (const lexeme of lexemes) yield* parser.next(lexeme);
    yield* parser.end();
  }
  let doc: Document.Parsed | undefined;
  for (const next of new Composer({ stringKeys: true }).compose(tokens(), true, length)) {
    if (doc) return { doc, second: next.range[0] };
    doc = next;
  }
  return { doc: doc! }; // compose(…, forceDoc = true) yields a document, if an empty one
}

/** A roster's text as plain data, or the one-line motif of why not (without the file: the caller adds it). */
export function readRosterYaml(text: string): YamlRead {
  const bytes = text.length > MAX_ROSTER_BYTES ? text.length : Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_ROSTER_BYTES)
    return {
      ok: false,
      motif: `larger than ${MAX_ROSTER_BYTES / 1024} KB, which no roster needs: is this the roster file?`,
    };
  const lexemes: string[] = [];
  const deepAt = tooDeepAt(text, MAX_ROSTER_DEPTH, lexemes);
  if (deepAt)
    return {
      ok: false,
      motif: `nested too deeply at line ${deepAt} (more than ${MAX_ROSTER_DEPTH} levels): a roster needs a handful`,
    };
  try {
    const lines = new LineCounter();
    const { doc, second } = compose(lexemes, text.length, lines);
    const error: YAMLError | undefined = doc.errors[0];
    if (error) return { ok: false, motif: yamlErrorMotif(error.code, error.message, error.pos[0], lines) };
    if (second !== undefined) return { ok: false, motif: yamlErrorMotif('MULTIPLE_DOCS', '', second, lines) };
    const data = doc.toJS({ mapAsMap: true, maxAliasCount: MAX_ROSTER_ALIASES }) as unknown;
    return { ok: true, data: toPlain(data, [], { nodes: 0 }) };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, motif: error.message };
    // toJS throws ReferenceError for aliases (with the alias's name in the message, not repeated here).
    const message = error instanceof Error ? error.message : '';
    if (/alias count/i.test(message))
      return {
        ok: false,
        motif: `YAML aliases expand too much (more than ${MAX_ROSTER_ALIASES} references): write the values out`,
      };
    if (/unresolved alias/i.test(message))
      return { ok: false, motif: 'YAML syntax error: an alias names no anchor set before it' };
    return { ok: false, motif: `YAML could not be read (${error instanceof Error ? error.name : 'error'})` };
  }
}
