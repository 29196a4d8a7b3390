// factory-compact: what a factory node keeps when pi compacts its context.
//
// Why it exists: compaction drops the oldest messages first, and in a phase the oldest message is the
// runner's — the mission, the envelope it must end with, the files it may touch — followed later by the
// runner's corrections. pi's own summary turns them into a line of prose ("then report") and the phase
// fails at its gate a few turns on, with a contract the model no longer has.
//
// What it does: in a factory node (FACTORY_PHASE set) it answers `session_before_compact` with a
// checkpoint of its own (../lib/checkpoint.ts): a block that keeps the runner's words character for
// character and carries them through every later compaction, a narrative the session's model writes about
// the work (a plain tally when that call fails, so compaction never costs the contract), and the files
// read and changed so far. In any other pi session it stays silent and pi compacts as usual.
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent';
import {
  carryForward,
  nodeIdentity,
  readCheckpoint,
  addFileOps,
  writeBlock,
  writeCheckpoint,
  wordsOf,
  type LooseMessage,
} from '../lib/checkpoint.js';
import { joinSocle } from '../lib/socle.js';
import { reserveCall, type CallReservation } from '../lib/spend-gate.js';
import { USAGE_ENTRY } from '../lib/usage-entry.js';

export const EXTENSION_NAME = 'factory-compact';

export const NARRATOR_ROLE =
  'You write progress checkpoints of coding sessions for the model that will carry on the work. ' +
  'Write the checkpoint and nothing else: do not answer, continue or comment on the conversation.';

/** What the narrator is asked: the state of the work — the task itself is kept elsewhere, word for word. */
export function narratorAsk(conversation: string, earlier: string): string {
  const fold = earlier
    ? [
        '',
        'An earlier checkpoint covers what came before these messages:',
        `<earlier-checkpoint>\n${earlier}\n</earlier-checkpoint>`,
        'Write one checkpoint that covers both: keep what is still true, replace what the new messages changed.',
      ]
    : [];
  return [
    `<messages>\n${conversation}\n</messages>`,
    ...fold,
    '',
    "Write a checkpoint of the work so far. Leave out the task and the runner's instructions: the factory keeps them verbatim.",
    'Use these headings, in this order:',
    '## Where the work stands — what is finished (with file paths), what is half done, what is stuck and on what',
    '## Choices made — each decision and its reason, in a line',
    '## Next moves — numbered, concrete',
    '## Exact details — commands, test names, error messages and values the next model must not guess',
  ].join('\n');
}

/** The narrative's stand-in when the model cannot write one: counts only, no tokens spent. */
export function tallyNote(leaving: LooseMessage[], failure: string): string {
  const replies = leaving.filter((m) => m.role === 'assistant');
  const calls = new Map<string, number>();
  for (const reply of replies) {
    if (!Array.isArray(reply.content)) continue;
    for (const part of reply.content as Array<{ type?: unknown; name?: unknown }>) {
      if (part && typeof part === 'object' && part.type === 'toolCall') {
        const name = typeof part.name === 'string' ? part.name : '?';
        calls.set(name, (calls.get(name) ?? 0) + 1);
      }
    }
  }
  const total = [...calls.values()].reduce((sum, n) => sum + n, 0);
  const byTool = [...calls].map(([name, n]) => `${name} ${n}`).join(', ');
  const lastSaid = [...replies]
    .reverse()
    .map(wordsOf)
    .find((text) => text.trim() !== '');
  return [
    `## No narrative this time — the checkpoint call failed: ${failure.split('\n')[0]}`,
    `- Compacted away: ${replies.length} assistant message(s), ${total} tool call(s)${byTool ? ` (${byTool})` : ''}.`,
    ...(lastSaid
      ? [`- The assistant's last words before the cut: ${JSON.stringify(lastSaid.trim().slice(0, 240))}`]
      : []),
    '- The newest messages follow unchanged: read them again before the next step.',
  ].join('\n');
}

/** Messages as text for the narrator, when pi's own serializer is not reachable (tests outside pi). */
export function plainTranscript(messages: LooseMessage[]): string {
  return messages.map((m) => `[${m.role ?? 'message'}] ${wordsOf(m).slice(0, 2000)}`).join('\n');
}

/** pi's serializer is a runtime value of its SDK: imported inside pi, absent under plain Node. */
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

/** A usage figure from pi's `Usage` (tokens, cost.total), read defensively: a bad figure counts as nothing. */
function callFigures(usage: unknown): {
  tokens: number;
  cost: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
} {
  const u = (usage ?? {}) as {
    totalTokens?: unknown;
    input?: unknown;
    output?: unknown;
    cacheRead?: unknown;
    cacheWrite?: unknown;
    cost?: { total?: unknown };
  };
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  return {
    tokens: n(u.totalTokens),
    cost: n(u.cost?.total),
    input: n(u.input),
    output: n(u.output),
    cacheRead: n(u.cacheRead),
    cacheWrite: n(u.cacheWrite),
  };
}

export default function factoryCompact(pi: ExtensionAPI): void {
  pi.on('session_before_compact', async (event, ctx) => {
    const who = nodeIdentity(process.env);
    if (!who) return undefined;
    const { preparation, signal } = event;
    // When pi splits a turn, the turn's first part leaves with the history: one checkpoint covers both.
    const leaving = [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages] as LooseMessage[];
    const before = readCheckpoint(preparation.previousSummary);
    const carried = carryForward(before.carried, leaving);
    const files = addFileOps(before.files, preparation.fileOps);

    let narrative: string;
    let usage: unknown;
    let written: 'model' | 'tally' = 'model';
    let gate: CallReservation | undefined;
    try {
      if (!ctx.model) throw new Error('the session has no model');
      // The narrator's call is a model call like a turn's: in a best-of-N node it takes its reservation from the
      // run's budget first (pi's turn_start never sees it); refused, the tally is written and nothing is spent.
      gate = await reserveCall(process.env, 'compaction');
      if (!gate.ok) throw new Error(gate.reason);
      const ask = narratorAsk(await transcript(leaving), before.narrative);
      const reply = await ctx.modelRegistry.complete(
        ctx.model,
        {
          systemPrompt: NARRATOR_ROLE,
          messages: [{ role: 'user', content: [{ type: 'text', text: ask }], timestamp: Date.now() }],
        },
        // Room for the checkpoint, inside what pi reserves for compaction.
        { maxTokens: Math.min(4096, Math.max(512, Math.floor(preparation.settings.reserveTokens * 0.8))), signal },
      );
      if (reply.stopReason === 'error' || reply.stopReason === 'aborted')
        throw new Error(reply.errorMessage ?? reply.stopReason);
      usage = reply.usage;
      // What the call cost, paid whatever its answer: given back to the gate, and streamed for the cockpit's figures.
      const figures = callFigures(reply.usage);
      await gate.settle(figures.cost);
      if (figures.tokens > 0 || figures.cost > 0) pi.appendEntry(USAGE_ENTRY, { what: 'compaction', ...figures });
      narrative = reply.content
        .flatMap((part) => (part.type === 'text' ? [part.text] : []))
        .join('\n')
        .trim();
      if (!narrative) throw new Error('the model wrote an empty checkpoint');
    } catch (error) {
      if (gate?.ok) await gate.settle(0); // a call that failed before its usage came back holds nothing any more
      if (signal.aborted) return undefined; // pi cancelled this compaction: nothing to provide
      written = 'tally';
      narrative = tallyNote(leaving, error instanceof Error ? error.message : String(error));
    }

    return {
      compaction: {
        summary: writeCheckpoint(writeBlock(who, carried), narrative, files),
        firstKeptEntryId: preparation.firstKeptEntryId,
        tokensBefore: preparation.tokensBefore,
        ...(usage ? { usage: usage as never } : {}),
        details: { factory: who, narrative: written, readFiles: files.read, modifiedFiles: files.modified },
      },
    };
  });

  joinSocle(EXTENSION_NAME);
}
