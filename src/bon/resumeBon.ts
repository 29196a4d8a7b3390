// Resuming a best-of-N run (worktree mode): what its first life left that the second one keeps. The primer's
// session file (the arms still to run are forked from it again), the HEAD every arm started from (the next life
// must start from the same one, or the kept patches would be against another tree), and each finished arm — green
// or red — with its verdict, figures and sealed patch. Read from the run's own log and the sessions folder.
import fs from 'node:fs';
import type { ArmRank, RunEvent } from '../contract/events.js';
import { sessionFileOf } from '../trace/ledger.js';
import type { CarriedResult } from '../engine/resumeOptions.js';
import type { BonSession } from './session.js';

export interface BonResume {
  /** The commit the first life's arms started from. */
  head?: string;
  primer?: { sessionId: string; file: string; messages: number; tokens: number; cost: number };
  /** The finished arms, as the harvest ranks them. */
  arms: ArmRank[];
  /** The gates red on HEAD in the first life's baseline, with what they said: the arms still to run meet the same. */
  preexisting: Array<{ gate: string; ending: string; lines: string[] }>;
  /** The first life recorded the baseline (its `baseline` event): not run again. */
  baselineKnown?: boolean;
}

/** Messages pi holds for a session file (what a fork of it holds): its message entries, custom messages included. */
export function sessionMessageCount(file: string): number {
  let count = 0;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const type = (JSON.parse(line) as { type?: unknown }).type;
      if (type === 'message' || type === 'custom_message') count += 1;
    } catch {
      // a torn last line (the cockpit died mid-write): not a message
    }
  }
  return count;
}

function isRank(value: unknown): value is ArmRank {
  return (
    !!value &&
    typeof value === 'object' &&
    typeof (value as ArmRank).arm === 'number' &&
    typeof (value as ArmRank).phase === 'string'
  );
}

/** What the second life of run keeps, or a one-line motif why it cannot be resumed. */
export function bonResumeState(
  events: readonly RunEvent[],
  carried: ReadonlyMap<string, CarriedResult>,
  sessionsDir: string,
): BonResume | { motif: string } {
  const checked = carried.get('check')?.result as { head?: unknown } | undefined;
  const head = typeof checked?.head === 'string' ? checked.head : undefined;
  const state: BonResume = { head, arms: [], preexisting: [] };
  const prime = carried.get('prime');
  if (prime?.sessionId) {
    const file = sessionFileOf(sessionsDir, prime.sessionId);
    if (!file)
      return {
        motif: `its primer's session file (${prime.sessionId}) is gone from ${sessionsDir}: no arm can be forked from it; start a new bon`,
      };
    state.primer = {
      sessionId: prime.sessionId,
      file,
      messages: sessionMessageCount(file),
      tokens: prime.tokens,
      cost: prime.cost,
    };
  }
  const models = new Map<string, string>();
  const patches = new Map<number, Extract<RunEvent, { type: 'arm_patch' }>>();
  for (const e of events) {
    if (e.type === 'attempt_started' && e.model) models.set(e.phase, e.model);
    if (e.type === 'arm_patch') patches.set(e.arm, e);
    if (e.type === 'baseline') {
      state.baselineKnown = true;
      state.preexisting = e.gates
        .filter((g) => !g.ok && g.signature)
        .map((g) => ({ gate: g.gate, ending: g.signature!.ending, lines: [...g.signature!.lines] }));
    }
  }
  for (const [name, done] of carried) {
    if (done.status !== 'failed') {
      if (isRank(done.result)) state.arms.push({ ...done.result });
      continue;
    }
    const arm = Number(/^arm_(\d+)$/.exec(name)?.[1]);
    if (!Number.isInteger(arm)) continue;
    const patch = patches.get(arm);
    state.arms.push({
      arm,
      phase: name,
      model: models.get(name),
      green: false,
      tokens: done.tokens,
      cost: done.cost,
      seconds: done.seconds,
      patchBytes: patch?.bytes ?? 0,
      ...(patch ? { patchFile: patch.patchFile, patchSha256: patch.sha256 } : {}),
      motif: done.motif,
    });
  }
  return state;
}

/**
 * A resumed run starts from what its first life left (below): the primer's session to fork from, and the
 * finished arms (their verdicts and sealed patches), which the runner replays instead of running them again.
 */
export function preloadSession(session: BonSession, state: BonResume): void {
  session.resumedHead = state.head;
  for (const gate of state.preexisting)
    session.baseline.preexisting.set(gate.gate, { ending: gate.ending, lines: new Set(gate.lines) });
  if (state.baselineKnown) session.baseline.known();
  if (state.primer) {
    session.primer = { tokens: state.primer.tokens, cost: state.primer.cost, sessionId: state.primer.sessionId };
    session.primerFile = state.primer.file;
    session.primerMessages = state.primer.messages;
  }
  for (const rank of state.arms) {
    session.arms.set(rank.arm, rank);
    if (!rank.patchFile) continue;
    try {
      session.sealed.set(rank.arm, { file: rank.patchFile, bytes: fs.readFileSync(rank.patchFile) });
    } catch {
      // its patch is gone: the harvest's seal check makes the arm red, it cannot win
    }
  }
}
