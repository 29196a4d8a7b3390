// Which conversation a request of the scripted model belongs to: a tape is played in turns per conversation
// (server.ts), so arms that ask at once each get whole turns of their own.
import type { IncomingMessage } from 'node:http';
import { type ChatRequest, contentText } from './tape.js';

/** The conversation of a fresh request: its system prompt (pi writes the agent's folder in it). */
function systemPromptOf(body: ChatRequest): string {
  const first = Array.isArray(body.messages) ? body.messages[0] : undefined;
  return first && first.role === 'system' ? contentText(first.content) : '';
}

/** The pi session a request names: pi sends its session id in affinity headers when the model's compat asks. */
export function sessionOf(req: IncomingMessage): string | undefined {
  for (const name of ['x-session-affinity', 'x-session-id', 'session_id']) {
    const value = req.headers[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

const hasHistory = (body: ChatRequest) =>
  Array.isArray(body.messages) && body.messages.some((m) => m.role === 'assistant');

export class Conversations {
  /** Each pi session's conversation, fixed by its first request. */
  private readonly sessions = new Map<string, string>();

  /**
   * A request's conversation. A fresh session (a system prompt and asks, no answer yet) joins its system prompt's,
   * so that a new attempt of the same agent in the same folder goes on with the turn its predecessor left. A session
   * that arrives with history is a fork or a clone: a conversation of its own, even when its prompt is byte for byte
   * another's (arms shown at the primer's path). A request without a session id: its system prompt's, as when fresh.
   */
  of(body: ChatRequest, session: string | undefined): string {
    if (!session) return systemPromptOf(body);
    let key = this.sessions.get(session);
    if (key === undefined) {
      key = hasHistory(body) ? `\u0000session ${session}` : systemPromptOf(body);
      this.sessions.set(session, key);
    }
    return key;
  }
}
