// The scripted model's prompt cache, modelled on what providers do, so that what a shared prefix saves is measured
// (bench P9, the bon tests) rather than assumed. A prompt is read as units in the order a provider reads them: the
// model and its tool list first, then each message. The longest run of leading units already served under the same
// model and cache-routing key (`prompt_cache_key`) is billed as cached input. A prompt enters the cache when its
// response begins to stream, not when its request arrives: like a provider, two requests sent at once both pay the
// full price, and the second of two requests one after the other pays only for what is new.
import { createHash } from 'node:crypto';
import { type ChatRequest, contentText } from './tape.js';

export interface PromptPrefixes {
  /** The cache a prompt may hit: its model and its routing key. */
  namespace: string;
  /** One hash per leading run of units: hashes[i] covers units 0..i. */
  hashes: string[];
  /** Billable characters of units 0..i (the same count the usage numbers use). */
  chars: number[];
}

/** The characters one message bills: its text and its tool calls as JSON (as promptChars counts them). */
function messageChars(message: { content?: unknown; tool_calls?: unknown }): number {
  let chars = contentText(message.content).length;
  if (message.tool_calls !== undefined && message.tool_calls !== null)
    chars += JSON.stringify(message.tool_calls).length;
  return chars;
}

/**
 * A cache marker (`cache_control`, which pi moves to the newest message and the last tool) is an instruction, not
 * content: a provider matches the prefix without it.
 */
const withoutMarkers = (key: string, value: unknown) => (key === 'cache_control' ? undefined : value);

export function promptPrefixes(body: ChatRequest): PromptPrefixes {
  const key = typeof body.prompt_cache_key === 'string' ? body.prompt_cache_key : '';
  const namespace = `${String(body.model ?? '')}\u0000${key}`;
  const tools = Array.isArray(body.tools) && body.tools.length > 0 ? JSON.stringify(body.tools, withoutMarkers) : '';
  const units: { text: string; chars: number }[] = [{ text: tools, chars: tools.length }];
  for (const message of Array.isArray(body.messages) ? body.messages : [])
    units.push({ text: JSON.stringify(message, withoutMarkers), chars: messageChars(message) });
  const hashes: string[] = [];
  const chars: number[] = [];
  let previous = '';
  let total = 0;
  for (const unit of units) {
    previous = createHash('sha256').update(previous).update('\u0000').update(unit.text).digest('hex');
    total += unit.chars;
    hashes.push(previous);
    chars.push(total);
  }
  return { namespace, hashes, chars };
}

export class PromptCache {
  private readonly served = new Map<string, Set<string>>();

  /** Billable characters of the longest leading run of `prefixes` already in the cache (0 on a miss). */
  cachedChars(prefixes: PromptPrefixes): number {
    const known = this.served.get(prefixes.namespace);
    if (!known) return 0;
    for (let i = prefixes.hashes.length - 1; i >= 0; i -= 1)
      if (known.has(prefixes.hashes[i]!)) return prefixes.chars[i]!;
    return 0;
  }

  /** The prompt's response has begun: every leading run of it may now be served from the cache. */
  remember(prefixes: PromptPrefixes): void {
    let known = this.served.get(prefixes.namespace);
    if (!known) {
      known = new Set();
      this.served.set(prefixes.namespace, known);
    }
    for (const hash of prefixes.hashes) known.add(hash);
  }
}

/** Cached input tokens for `cachedChars` of a prompt billed `prompt` tokens: never more than the prompt. */
export function cachedTokens(cachedChars: number, prompt: number): number {
  return Math.min(prompt, Math.floor(cachedChars / 4));
}
