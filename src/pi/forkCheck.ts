// What an arm's forked session must be before it spends a token: the session the factory declared, written for the
// arm's own worktree, holding every message of the primer. pi writes a fork's file at start-up, header first, so
// all three can be read from `get_state` and the file's first line.
import fs from 'node:fs';
import path from 'node:path';
import type { RpcState } from './rpcProtocol.js';
import { sessionHeader } from '../trace/jsonl.js';

export interface ForkExpectation {
  /** The folder the arm works in (its worktree): the fork's header must name it. */
  cwd: string;
  sessionId: string;
  /** The primer's message count: the fork holds the same messages. */
  messageCount: number;
}

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Why the session pi opened is not the fork that was asked for (one line), or undefined when it is. */
export function forkRefusal(state: RpcState, expected: ForkExpectation): string | undefined {
  if (state.sessionId !== expected.sessionId)
    return `the fork opened session ${state.sessionId}, not the declared ${expected.sessionId}`;
  if (!state.sessionFile) return `pi did not say where the fork ${expected.sessionId} is kept`;
  const header = sessionHeader(state.sessionFile);
  if (!header || header.type !== 'session')
    return `the fork's session file has no session header: ${state.sessionFile}`;
  if (header.id !== expected.sessionId)
    return `the fork's session file is for session ${String(header.id)}, not ${expected.sessionId}`;
  if (typeof header.cwd !== 'string' || real(header.cwd) !== real(expected.cwd)) {
    return `the fork would work in ${String(header.cwd)}, not in its worktree ${expected.cwd}`;
  }
  if (state.messageCount !== expected.messageCount)
    return `the fork holds ${state.messageCount} messages, the primer ${expected.messageCount}`;
  return undefined;
}
