// factory-context: what a factory agent must know besides its mission, given once per session, and a
// leaner context for every model call.
// - Brief: at `before_agent_start`, a custom message `factory-context` with the role brief
//   (`adws/adw_config/briefs/<role>.md`, role from FACTORY_ROLE; the project's own brief first, else the
//   factory's neutral default in templates/briefs), the writable paths (FACTORY_WRITABLE, else the project folder) and the protected files
//   (`paths.protected` of `.pi/damage-control-rules.yaml`). pi stores it in the session, so a correction
//   sent in the same session (a new pi process on the same session id) still has it; it is injected again
//   only when no such message is left in the live context (none yet, or a compaction summarized it away).
// - Pruning: at pi's `context` event (before each model call, on a copy of the messages), a tool result
//   older than the last K turns and larger than N KB is replaced by its head and its size. The session
//   file keeps the whole result; only the request shrinks. K = FACTORY_PRUNE_TURNS, N = FACTORY_PRUNE_KB.
// Outside a factory node (no FACTORY_PHASE) it does nothing.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent';
import { parse as parseYaml } from 'yaml';
import { joinSocle } from '../lib/socle.js';
import { FLOOR_PROTECTED } from '../lib/path-guard.js';
import { writablePaths } from '../lib/writable.js';

// One reading of FACTORY_WRITABLE for the model and for damage-control, which enforces it.
export { writablePaths };

export const EXTENSION_NAME = 'factory-context';
export const MESSAGE_TYPE = 'factory-context';
/** The same file damage-control enforces; read here (not imported) so each extension loads on its own. */
export const RULES_RELATIVE_PATH = path.join('.pi', 'damage-control-rules.yaml');
export const BRIEFS_RELATIVE_DIR = path.join('adws', 'adw_config', 'briefs');
/** The factory's neutral briefs: what a repository without its own gets (never the factory's house rules). */
export const DEFAULT_BRIEFS_RELATIVE_DIR = path.join('templates', 'briefs');
export const DEFAULT_PRUNE_TURNS = 4;
export const DEFAULT_PRUNE_KB = 8;
/** Characters of a pruned result the model still sees. */
export const PRUNE_HEAD_CHARS = 1024;

/** The factory folder this file belongs to (`<root>/.pi/extensions/factory-context.ts`). */
export function extensionRoot(moduleUrl: string = import.meta.url): string {
  return path.resolve(path.dirname(fileURLToPath(moduleUrl)), '..', '..');
}

/** Where a role's brief may be, in order: the project, then the factory's neutral default. A role that is not a plain name has none. */
export function briefCandidates(role: string, projectDir: string, factoryRoot: string): string[] {
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(role)) return [];
  const files = [
    path.resolve(projectDir, BRIEFS_RELATIVE_DIR, `${role}.md`),
    path.resolve(factoryRoot, DEFAULT_BRIEFS_RELATIVE_DIR, `${role}.md`),
  ];
  return [...new Set(files)];
}

export function loadBrief(
  role: string,
  projectDir: string,
  factoryRoot: string,
): { file: string; text: string } | null {
  for (const file of briefCandidates(role, projectDir, factoryRoot)) {
    if (!existsSync(file)) continue;
    try {
      const text = readFileSync(file, 'utf8').trim();
      if (text !== '') return { file, text };
    } catch {
      // unreadable: try the next place
    }
  }
  return null;
}

/**
 * The protected globs the guard enforces: the project's damage-control rules and the floor in code (which holds
 * whatever the file says), so the agent is told every one; null when the rules cannot be read.
 */
export function protectedPaths(projectDir: string): string[] | null {
  try {
    const parsed = parseYaml(readFileSync(path.join(projectDir, RULES_RELATIVE_PATH), 'utf8')) as {
      paths?: { protected?: unknown };
    } | null;
    const globs = parsed?.paths?.protected ?? [];
    return Array.isArray(globs) && globs.every((g) => typeof g === 'string')
      ? [...new Set([...(globs as string[]), ...FLOOR_PROTECTED])]
      : null;
  } catch {
    return null;
  }
}

export interface ContextFacts {
  role: string;
  brief: { file: string; text: string } | null;
  writable: string[];
  protected: string[] | null;
}

export function contextMessageText(facts: ContextFacts): string {
  const protectedLines =
    facts.protected === null
      ? ['- (the damage-control rules cannot be read: every write, edit and bash call will be refused)']
      : facts.protected.length > 0
        ? facts.protected.map((glob) => `- ${glob}`)
        : ['- (none)'];
  return [
    `# Factory context — role: ${facts.role}`,
    '',
    facts.brief ? facts.brief.text : `(no brief found for the role "${facts.role}")`,
    '',
    '## Where you may write',
    ...facts.writable.map((p) => `- ${p}`),
    '',
    '## Protected files (writes are refused)',
    ...protectedLines,
  ].join('\n');
}

interface LooseEntry {
  type?: string;
  id?: string;
  customType?: string;
  firstKeptEntryId?: string;
}

/**
 * Whether the live context (what the next model call sees) already holds our message: the branch after
 * its last compaction's kept boundary, or the whole branch when it was never compacted.
 */
export function messageInLiveContext(branch: LooseEntry[], customType: string = MESSAGE_TYPE): boolean {
  let from = 0;
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry?.type !== 'compaction') continue;
    const kept = branch.findIndex((e) => e.id === entry.firstKeptEntryId);
    from = kept >= 0 ? kept : i + 1;
    break;
  }
  return branch.slice(from).some((e) => e.type === 'custom_message' && e.customType === customType);
}

// ---------------------------------------------------------------------------------------------
// Pruning

export interface PruneSettings {
  turns: number;
  kb: number;
}

function positive(value: string | undefined, fallback: number, allowZero: boolean): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && (n > 0 || (allowZero && n === 0)) ? n : fallback;
}

/** FACTORY_PRUNE_TURNS (whole turns kept intact, ≥ 0) and FACTORY_PRUNE_KB (size threshold); bad values → defaults. */
export function pruneSettings(env: NodeJS.ProcessEnv): PruneSettings {
  return {
    turns: Math.floor(positive(env.FACTORY_PRUNE_TURNS, DEFAULT_PRUNE_TURNS, true)),
    kb: positive(env.FACTORY_PRUNE_KB, DEFAULT_PRUNE_KB, false),
  };
}

interface LooseMessage {
  role?: string;
  content?: unknown;
  [key: string]: unknown;
}

function textParts(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      part && typeof part === 'object' && (part as { type?: unknown }).type === 'text'
        ? String((part as { text?: unknown }).text ?? '')
        : '',
    )
    .join('');
}

export function prunedText(text: string, bytes: number): string {
  return `${text.slice(0, PRUNE_HEAD_CHARS)}\n[factory-context: tool result pruned for this request — ${bytes} bytes in all; the session keeps it whole]`;
}

/**
 * The messages with every tool result older than the last `turns` assistant turns and larger than `kb`
 * replaced by its head and size. A tool result's turn is the assistant message that called it; its age is
 * how many assistant messages came after that one. Results with images are left alone.
 */
export function pruneMessages<T extends LooseMessage>(
  messages: T[],
  settings: PruneSettings,
): { messages: T[]; pruned: number } {
  const limit = settings.kb * 1024;
  const totalTurns = messages.filter((m) => m.role === 'assistant').length;
  let turn = 0;
  let pruned = 0;
  const out = messages.map((message) => {
    if (message.role === 'assistant') turn += 1;
    if (message.role !== 'toolResult' || totalTurns - turn < settings.turns) return message;
    const content = message.content;
    if (Array.isArray(content) && content.some((part) => (part as { type?: unknown })?.type === 'image'))
      return message;
    const text = textParts(content);
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes <= limit) return message;
    pruned += 1;
    return { ...message, content: [{ type: 'text', text: prunedText(text, bytes) }] };
  });
  return { messages: out, pruned };
}

// ---------------------------------------------------------------------------------------------

export default function factoryContext(pi: ExtensionAPI): void {
  const inNode = Boolean(process.env.FACTORY_PHASE?.trim());
  const factoryRoot = extensionRoot();

  pi.on('before_agent_start', (_event, ctx) => {
    if (!inNode) return undefined;
    try {
      if (messageInLiveContext(ctx.sessionManager.getBranch() as LooseEntry[])) return undefined;
      const role = process.env.FACTORY_ROLE?.trim() || 'unknown';
      const facts: ContextFacts = {
        role,
        brief: loadBrief(role, ctx.cwd, factoryRoot),
        writable: writablePaths(process.env, ctx.cwd),
        protected: protectedPaths(ctx.cwd),
      };
      return {
        message: {
          customType: MESSAGE_TYPE,
          content: contextMessageText(facts),
          display: false,
          details: {
            role,
            brief_file: facts.brief?.file ?? null,
            writable: facts.writable,
            protected: facts.protected,
          },
        },
      };
    } catch {
      return undefined; // a missing context must not stop the phase; the ask still carries the mission
    }
  });

  pi.on('context', (event) => {
    if (!inNode) return undefined;
    const { messages, pruned } = pruneMessages(event.messages as unknown as LooseMessage[], pruneSettings(process.env));
    return pruned > 0 ? { messages: messages as unknown as typeof event.messages } : undefined;
  });

  joinSocle(EXTENSION_NAME);
}
