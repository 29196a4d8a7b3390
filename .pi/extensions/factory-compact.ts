// factory-compact: structured compaction for a factory node. When pi compacts a long phase, the oldest
// messages go first — and the oldest are the runner's: the mission with its contract, then its last
// correction. A free summary paraphrases them ("then report") and the gate fails two turns later.
// So the summary pi stores is built in three parts:
//   1. a `[FACTORY]` block written by CODE: phase, role, run, gate, and the mission and the runner's last
//      word copied verbatim between HTML-comment fences (capped, the cut announced). On the next
//      compaction the mission is no longer among the messages: it is read back from the previous block,
//      so it survives any number of compactions unchanged;
//   2. a narrative written by the session's model (a dry, zero-token inventory when that call fails);
//   3. the cumulated read/modified files (pi cumulates them only for its own summaries).
// Outside a factory node (no FACTORY_PHASE) it returns nothing and pi's default compaction applies.
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent';
import { joinSocle } from '../lib/socle.js';

export const EXTENSION_NAME = 'factory-compact';
export const BLOCK_OPEN = '<!-- [FACTORY] -->';
export const BLOCK_CLOSE = '<!-- [/FACTORY] -->';
/** Characters kept verbatim; beyond, the text is cut and the cut is said. */
export const MISSION_CAP = 6000;
export const LAST_WORD_CAP = 2000;

export interface FactoryFacts {
  phase: string;
  role: string;
  adwId: string;
  /** The gate's envelope title (the schema file's name without `.json`), or null. */
  gate: string | null;
}

/** The phase identity the core put in the environment; null outside a factory node. */
export function readFactoryFacts(env: NodeJS.ProcessEnv): FactoryFacts | null {
  const phase = env.FACTORY_PHASE?.trim();
  if (!phase) return null;
  const schema = env.FACTORY_ENVELOPE_SCHEMA?.trim();
  const gate = schema ? (schema.split(/[\\/]/).pop() ?? '').replace(/\.json$/i, '') || null : null;
  return { phase, role: env.FACTORY_ROLE?.trim() || 'unknown', adwId: env.FACTORY_ADW_ID?.trim() || 'unknown', gate };
}

export interface LooseMessage {
  role?: string;
  content?: unknown;
}

/** The text parts of a message, joined. */
export function messageText(message: LooseMessage): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => part && typeof part === 'object' && (part as { type?: unknown }).type === 'text')
    .map((part) => String((part as { text?: unknown }).text ?? ''))
    .join('');
}

/** `text` up to `limit` characters, with a line announcing the cut when there is one. */
export function capVerbatim(text: string, limit: number): string {
  if (text.length <= limit) return text;
  // Idempotent: a text read back from a previous block already carries its announcement.
  const announced = /\n\[factory-compact: truncated, (\d+) of \d+ characters kept\]$/.exec(text);
  if (announced && Number(announced[1]) === limit && announced.index === limit) return text;
  return `${text.slice(0, limit)}\n[factory-compact: truncated, ${limit} of ${text.length} characters kept]`;
}

export interface Anchors {
  /** The first user message of the phase: the runner's ask (mission, handoff, contract). */
  mission: string | null;
  /** The last user message leaving the context after the mission (a correction), if any. */
  lastWord: string | null;
}

/** Which runner words to keep: the previous block's mission wins; the newest later user message wins. */
export function pickAnchors(messages: LooseMessage[], previous: Anchors | null): Anchors {
  const userTexts = messages
    .filter((m) => m.role === 'user')
    .map(messageText)
    .filter((text) => text.trim() !== '');
  const mission = previous?.mission ?? userTexts[0] ?? null;
  const later = userTexts.filter((text) => text !== mission);
  return { mission, lastWord: later.at(-1) ?? previous?.lastWord ?? null };
}

const EMPTY_ANCHOR = '(none in the summarized part)';

function fence(name: string, text: string | null): string[] {
  return [`<!-- [FACTORY:${name}] -->`, text ?? EMPTY_ANCHOR, `<!-- [/FACTORY:${name}] -->`];
}

/** The code-built block; anchors are fenced one by one because asks hold markdown titles of their own. */
export function buildFactoryBlock(facts: FactoryFacts, anchors: Anchors): string {
  const identity = `- phase: ${facts.phase} · role: ${facts.role} · run: ${facts.adwId}` + (facts.gate ? ` · gate: ${facts.gate} (report_phase tool)` : '');
  return [
    BLOCK_OPEN,
    '## Factory contract (copied verbatim by the factory — do not paraphrase)',
    identity,
    '- The code decides: finish exactly as the mission below asks.',
    '',
    '### Mission (verbatim)',
    ...fence('mission', anchors.mission === null ? null : capVerbatim(anchors.mission, MISSION_CAP)),
    '',
    "### The runner's last word (verbatim)",
    ...fence('last-word', anchors.lastWord === null ? null : capVerbatim(anchors.lastWord, LAST_WORD_CAP)),
    BLOCK_CLOSE,
  ].join('\n');
}

/** A previous summary cut into its block (null when it has none) and the rest (narrative + files). */
export function splitSummary(summary: string | undefined): { block: string | null; rest: string } {
  if (!summary) return { block: null, rest: '' };
  const start = summary.indexOf(BLOCK_OPEN);
  const end = summary.indexOf(BLOCK_CLOSE, start);
  if (start < 0 || end < 0) return { block: null, rest: summary.trim() };
  const block = summary.slice(start, end + BLOCK_CLOSE.length);
  return { block, rest: `${summary.slice(0, start)}${summary.slice(end + BLOCK_CLOSE.length)}`.trim() };
}

function fencedText(block: string, name: string): string | null {
  const open = `<!-- [FACTORY:${name}] -->\n`;
  const close = `\n<!-- [/FACTORY:${name}] -->`;
  const from = block.indexOf(open);
  const to = from < 0 ? -1 : block.indexOf(close, from + open.length);
  if (from < 0 || to < 0) return null;
  const text = block.slice(from + open.length, to);
  return text === EMPTY_ANCHOR ? null : text;
}

/** The anchors stored in a block, exactly as they were written (so a second pass copies them unchanged). */
export function readAnchors(block: string | null): Anchors | null {
  if (block === null) return null;
  return { mission: fencedText(block, 'mission'), lastWord: fencedText(block, 'last-word') };
}

export interface FileLists {
  read: string[];
  modified: string[];
}

/** The `<read-files>` / `<modified-files>` lists of a summary (pi's own tag format). */
export function parseFileLists(text: string): FileLists {
  const list = (tag: string): string[] => {
    const match = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(text);
    return match ? match[1].split('\n').map((line) => line.trim()).filter((line) => line !== '') : [];
  };
  return { read: list('read-files'), modified: list('modified-files') };
}

/** Previous lists plus this pass's file operations; a file both read and modified counts as modified. */
export function mergeFileLists(previous: FileLists, ops: { read: Iterable<string>; written: Iterable<string>; edited: Iterable<string> }): FileLists {
  const modified = new Set([...previous.modified, ...ops.written, ...ops.edited]);
  const read = new Set([...previous.read, ...ops.read].filter((file) => !modified.has(file)));
  return { read: [...read].sort(), modified: [...modified].sort() };
}

export function formatFileLists(files: FileLists): string {
  const parts: string[] = [];
  if (files.read.length > 0) parts.push(`<read-files>\n${files.read.join('\n')}\n</read-files>`);
  if (files.modified.length > 0) parts.push(`<modified-files>\n${files.modified.join('\n')}\n</modified-files>`);
  return parts.join('\n\n');
}

/** The previous narrative alone: the rest of a summary without its file lists. */
export function narrativeOf(rest: string): string {
  return rest.replace(/<read-files>[\s\S]*?<\/read-files>/g, '').replace(/<modified-files>[\s\S]*?<\/modified-files>/g, '').trim();
}

/** A deterministic account of what left the context, for when the model cannot summarize. Zero tokens. */
export function dryInventory(messages: LooseMessage[], motive: string): string {
  const answers = messages.filter((m) => m.role === 'assistant');
  const toolNames = answers.flatMap((m) =>
    Array.isArray(m.content)
      ? m.content.filter((part) => part && typeof part === 'object' && (part as { type?: unknown }).type === 'toolCall').map((part) => String((part as { name?: unknown }).name ?? '?'))
      : [],
  );
  const counts = new Map<string, number>();
  for (const name of toolNames) counts.set(name, (counts.get(name) ?? 0) + 1);
  const used = [...counts].map(([name, n]) => `${name} ×${n}`).join(', ') || 'none';
  return [
    '## Narrative unavailable (dry compaction)',
    `- why: ${motive.split('\n')[0]}`,
    `- ${answers.length} assistant answers and ${toolNames.length} tool calls left the context (tools: ${used}).`,
    '- The recent messages are kept as they were: read them again before going on.',
  ].join('\n');
}

export const NARRATIVE_SYSTEM =
  'You summarize a coding session as a checkpoint for another model. Output only the requested structure; never continue the conversation.';

/** The model's task: progress only — the mission and the runner's words are kept elsewhere, verbatim. */
export function narrativePrompt(conversation: string, previousNarrative: string): string {
  const previous = previousNarrative
    ? `\n\n<previous-summary>\n${previousNarrative}\n</previous-summary>\nFold the new messages into this previous summary: keep what still holds, update what changed.`
    : '';
  return [
    `<conversation>\n${conversation}\n</conversation>${previous}`,
    '',
    'Write a context checkpoint. The task and the runner\'s instructions are preserved verbatim elsewhere: do not restate them.',
    'Sections, in this order: "## Progress" (### Done, ### In Progress, ### Blocked), "## Key Decisions", "## Next Steps",',
    '"## Critical Context" (exact commands, test names, error messages needed to continue).',
  ].join('\n');
}

/** A plain transcript of messages, used when pi's own serializer cannot be loaded. */
export function plainTranscript(messages: LooseMessage[]): string {
  return messages.map((m) => `[${m.role ?? 'message'}]: ${messageText(m).slice(0, 2000)}`).join('\n');
}

export function composeSummary(block: string, narrative: string, files: string): string {
  return [block, narrative.trim(), files].filter((part) => part !== '').join('\n\n');
}

// ---------------------------------------------------------------------------------------------

/** pi's serializer is a runtime value of the SDK: loaded inside pi only (vitest on Node 20 cannot). */
async function transcript(messages: LooseMessage[]): Promise<string> {
  try {
    const sdk = (await import('@earendil-works/pi-coding-agent')) as unknown as {
      serializeConversation(m: unknown): string;
      convertToLlm(m: unknown): unknown;
    };
    return sdk.serializeConversation(sdk.convertToLlm(messages));
  } catch {
    return plainTranscript(messages);
  }
}

export default function factoryCompact(pi: ExtensionAPI): void {
  pi.on('session_before_compact', async (event, ctx) => {
    const facts = readFactoryFacts(process.env);
    if (!facts) return undefined; // a workstation session: pi's default compaction
    const { preparation, signal } = event;
    // A split turn's prefix joins the history: one narrative covers both.
    const messages = [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages] as LooseMessage[];
    const previous = splitSummary(preparation.previousSummary);
    const anchors = pickAnchors(messages, readAnchors(previous.block));
    const block = buildFactoryBlock(facts, anchors);
    const files = mergeFileLists(parseFileLists(previous.rest), preparation.fileOps);

    let narrative: string;
    let usage: unknown;
    let mode: 'model' | 'dry' = 'model';
    try {
      if (!ctx.model) throw new Error('the session has no model');
      const reply = await ctx.modelRegistry.complete(
        ctx.model,
        {
          systemPrompt: NARRATIVE_SYSTEM,
          messages: [{ role: 'user', content: [{ type: 'text', text: narrativePrompt(await transcript(messages), narrativeOf(previous.rest)) }], timestamp: Date.now() }],
        },
        { maxTokens: Math.max(512, Math.min(4096, Math.floor(preparation.settings.reserveTokens * 0.8))), signal },
      );
      if (reply.stopReason === 'error' || reply.stopReason === 'aborted') throw new Error(reply.errorMessage ?? reply.stopReason);
      narrative = reply.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n').trim();
      if (narrative === '') throw new Error('the model returned an empty summary');
      usage = reply.usage;
    } catch (error) {
      if (signal.aborted) return undefined; // pi cancelled the compaction itself
      mode = 'dry';
      narrative = dryInventory(messages, error instanceof Error ? error.message : String(error));
    }

    return {
      compaction: {
        summary: composeSummary(block, narrative, formatFileLists(files)),
        firstKeptEntryId: preparation.firstKeptEntryId,
        tokensBefore: preparation.tokensBefore,
        ...(usage ? { usage: usage as never } : {}),
        details: { factory: facts, mode, readFiles: files.read, modifiedFiles: files.modified },
      },
    };
  });

  joinSocle(EXTENSION_NAME);
}
