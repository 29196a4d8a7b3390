// The checkpoint a factory node leaves when pi compacts its context: what it is made of, how it is
// written, and how the next compaction reads it back. Pure text in, text out — the extension
// (../extensions/factory-compact.ts) only gathers the inputs and asks the model for the narrative.
//
// A checkpoint has three layers, in this order:
//   - the kept block, between BLOCK_OPEN and BLOCK_CLOSE: who the node is, then the runner's own words
//     (the mission and its newest message) stored character for character. Each stored text is framed by
//     a marker that carries its length, so reading it back never depends on what the text contains — an
//     ask may quote markdown titles, HTML comments, even an earlier checkpoint;
//   - a narrative of the work (the model's, or a plain tally when the model could not write one);
//   - the files read and changed so far, in pi's own `<read-files>` / `<modified-files>` form, which pi
//     keeps adding up only for the summaries it writes itself.

export const BLOCK_OPEN = '<!-- [FACTORY] -->';
export const BLOCK_CLOSE = '<!-- [/FACTORY] -->';
/** How much of each runner text is stored word for word; beyond, the start is kept and the cut is said. */
export const MISSION_CAP = 6000;
export const LAST_WORD_CAP = 2000;

/** Who the node is: the identity the core put in the environment of a phase. */
export interface NodeIdentity {
  phase: string;
  role: string;
  run: string;
  /** The envelope the phase ends with (the schema file's base name), or null when it has no typed gate. */
  gate: string | null;
}

export function nodeIdentity(env: NodeJS.ProcessEnv): NodeIdentity | null {
  const phase = env.FACTORY_PHASE?.trim();
  if (!phase) return null; // not a factory node: nothing to keep
  const schemaFile = env.FACTORY_ENVELOPE_SCHEMA?.trim() ?? '';
  const base = schemaFile.split(/[\\/]/).pop() ?? '';
  return {
    phase,
    role: env.FACTORY_ROLE?.trim() || 'unknown',
    run: env.FACTORY_ADW_ID?.trim() || 'unknown',
    gate: base.replace(/\.json$/i, '') || null,
  };
}

/** A runner text as stored: its first characters and the length of the whole. */
export interface Kept {
  text: string;
  total: number;
}

/** The runner's words a checkpoint carries from one compaction to the next. */
export interface Carried {
  mission: Kept | null;
  lastWord: Kept | null;
}

/** `text` cut to `cap` characters at most, never between the two halves of a surrogate pair. */
export function keep(text: string, cap: number): Kept {
  if (text.length <= cap) return { text, total: text.length };
  const high = text.charCodeAt(cap - 1);
  const end = high >= 0xd800 && high <= 0xdbff ? cap - 1 : cap;
  return { text: text.slice(0, end), total: text.length };
}

export interface LooseMessage {
  role?: string;
  content?: unknown;
}

function parts(message: LooseMessage): Array<Record<string, unknown>> {
  return Array.isArray(message.content)
    ? message.content.filter((p): p is Record<string, unknown> => !!p && typeof p === 'object')
    : [];
}

/** What a message says in words (its text parts), '' when nothing. */
export function wordsOf(message: LooseMessage): string {
  if (typeof message.content === 'string') return message.content;
  return parts(message)
    .filter((p) => p.type === 'text')
    .map((p) => String(p.text ?? ''))
    .join('');
}

/**
 * The runner's words after this compaction. The mission is set once: by the oldest runner message the
 * node ever compacted, then carried unchanged. The last word is the newest runner message that leaves
 * the context now, or the one carried when nothing new leaves.
 */
export function carryForward(previous: Carried | null, leaving: LooseMessage[]): Carried {
  const said = leaving
    .filter((m) => m.role === 'user')
    .map(wordsOf)
    .filter((text) => text.trim() !== '');
  const mission = previous?.mission ?? (said.length > 0 ? keep(said[0], MISSION_CAP) : null);
  const fresh = said.filter((text) => previous?.mission || text !== said[0]);
  const newest = fresh.length > 0 ? keep(fresh[fresh.length - 1], LAST_WORD_CAP) : null;
  return { mission, lastWord: newest ?? previous?.lastWord ?? null };
}

// ---------- the kept block ----------

type Slot = 'mission' | 'last-word';

function stored(slot: Slot, kept: Kept | null, absent: string): string[] {
  if (kept === null) return [absent];
  const cut = kept.total > kept.text.length ? ` of=${kept.total}` : '';
  const lines = [
    `<!-- [FACTORY:${slot} length=${kept.text.length}${cut}] -->`,
    kept.text,
    `<!-- [/FACTORY:${slot}] -->`,
  ];
  if (cut)
    lines.push(`(Cut by the factory: the first ${kept.text.length} of ${kept.total} characters are kept above.)`);
  return lines;
}

export function writeBlock(who: NodeIdentity, carried: Carried): string {
  const ending = who.gate ? ` It ends with one call to the report_phase tool (envelope ${who.gate}).` : '';
  return [
    BLOCK_OPEN,
    '## Kept by the factory, word for word — not a summary',
    `You are the ${who.role} of phase ${who.phase} in factory run ${who.run}.${ending}`,
    'The runner wrote what follows; do what it says, in its terms, even where the narrative below is vaguer.',
    '',
    '### The mission',
    ...stored('mission', carried.mission, '(no mission was in the compacted messages)'),
    '',
    "### The runner's newest message",
    ...stored('last-word', carried.lastWord, '(the runner sent nothing after the mission)'),
    BLOCK_CLOSE,
  ].join('\n');
}

/** What blocks written before lengths were put in an empty slot. */
const OLD_PLACEHOLDER = '(none in the summarized part)';

/**
 * The text stored in one slot, searched from `from`: read by its declared length, so nothing inside it can
 * end it early; a marker without a length (blocks written before lengths were) ends at its end marker.
 */
function readSlot(text: string, slot: Slot, from: number): { kept: Kept; end: number } | null {
  const close = `\n<!-- [/FACTORY:${slot}] -->`;
  const marker = new RegExp(`<!-- \\[FACTORY:${slot}(?: length=(\\d+)(?: of=(\\d+))?)?\\] -->\\n`, 'g');
  marker.lastIndex = from;
  const found = marker.exec(text);
  if (!found) return null;
  const start = found.index + found[0].length;
  if (found[1] !== undefined) {
    const length = Number(found[1]);
    if (start + length <= text.length && text.startsWith(close, start + length)) {
      const total = found[2] !== undefined ? Number(found[2]) : length;
      return { kept: { text: text.slice(start, start + length), total }, end: start + length + close.length };
    }
  }
  const to = text.indexOf(close, start);
  if (to < 0) return null;
  const end = to + close.length;
  const old = text.slice(start, to);
  return old === OLD_PLACEHOLDER ? null : { kept: { text: old, total: old.length }, end };
}

/** The block that starts at `start`: its slots in order, then its end marker. */
function readBlock(text: string, start: number): { carried: Carried; end: number } | null {
  let at = start + BLOCK_OPEN.length;
  const mission = readSlot(text, 'mission', at);
  if (mission) at = mission.end;
  const lastWord = readSlot(text, 'last-word', at);
  if (lastWord) at = lastWord.end;
  const close = text.indexOf(BLOCK_CLOSE, at);
  if (close < 0) return null;
  return {
    carried: { mission: mission?.kept ?? null, lastWord: lastWord?.kept ?? null },
    end: close + BLOCK_CLOSE.length,
  };
}

// ---------- the file lists ----------

export interface FileLists {
  read: string[];
  modified: string[];
}

const FILE_TAGS = { read: 'read-files', modified: 'modified-files' } as const;

function listIn(text: string, tag: string): string[] {
  const found = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(text);
  return found
    ? found[1]
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '')
    : [];
}

/** The lists so far plus this compaction's file operations; a file that was changed is listed as changed only. */
export function addFileOps(
  sofar: FileLists,
  ops: { read: Iterable<string>; written: Iterable<string>; edited: Iterable<string> },
): FileLists {
  const modified = new Set([...sofar.modified, ...ops.written, ...ops.edited]);
  const read = new Set([...sofar.read, ...ops.read]);
  return { read: [...read].filter((file) => !modified.has(file)).sort(), modified: [...modified].sort() };
}

export function fileSections(files: FileLists): string {
  return (['read', 'modified'] as const)
    .filter((kind) => files[kind].length > 0)
    .map((kind) => `<${FILE_TAGS[kind]}>\n${files[kind].join('\n')}\n</${FILE_TAGS[kind]}>`)
    .join('\n\n');
}

// ---------- a whole checkpoint ----------

export interface Checkpoint {
  /** The runner's words, or null when the summary holds no kept block (pi's own, or none). */
  carried: Carried | null;
  narrative: string;
  files: FileLists;
}

/** A previous summary taken apart; a summary pi wrote itself has no block but may have file lists. */
export function readCheckpoint(summary: string | undefined): Checkpoint {
  const text = summary ?? '';
  const start = text.indexOf(BLOCK_OPEN);
  const block = start < 0 ? null : readBlock(text, start);
  const outside = block ? `${text.slice(0, start)}${text.slice(block.end)}` : text;
  let narrative = outside;
  for (const tag of Object.values(FILE_TAGS))
    narrative = narrative.replace(new RegExp(`<${tag}>[\\s\\S]*?</${tag}>`, 'g'), '');
  return {
    carried: block?.carried ?? null,
    narrative: narrative.trim(),
    files: { read: listIn(outside, FILE_TAGS.read), modified: listIn(outside, FILE_TAGS.modified) },
  };
}

export function writeCheckpoint(block: string, narrative: string, files: FileLists): string {
  return [block, narrative.trim(), fileSections(files)].filter((part) => part !== '').join('\n\n');
}
