// What an arm tried that its guards refused or contained: a call damage-control blocked and a write the OS sandbox
// refused, read from its own tool stream (each named with the call that did it), and a branch of the user's it made
// or moved in its own git (../git/own.ts). Nothing happened (the guards held), so the arm is not red for it; but it is
// named everywhere the arm is (card, log, harvest.json, --json, reports), ranks below an arm equal on the gates that
// tried nothing, and applying it asks first.
import type { Activity } from '../../contract/events.js';
import { flatLine } from '../../contract/text.js';

/** How many acts an arm's record keeps as lines (the count keeps them all). */
export const TRIED_KEPT = 5;
const CALL_MAX = 100;

export interface Tried {
  acts: string[];
  count: number;
}

/** A tool call's end as an act its guards refused, named with the call (`bash git config core.hooksPath …`). */
export function triedAct(end: Extract<Activity, { kind: 'tool_end' }>, call: string | undefined): string | undefined {
  const subject = call ?? end.tool;
  if (end.denied !== undefined) return `${subject} — refused by the sandbox (${end.denied})`;
  if (end.isError && /^Blocked by damage-control\b/.test(end.detail)) return `${subject} — blocked by damage-control`;
  return undefined;
}

function callLine(start: Extract<Activity, { kind: 'tool_start' }>): string {
  const line = flatLine(`${start.tool} ${start.detail}`.trim());
  return line.length > CALL_MAX ? `${line.slice(0, CALL_MAX - 1)}…` : line;
}

/** The acts of every phase of a run, as its streams go; each phase's calls paired by pi's call id (else the last). */
export class TriedLog {
  private readonly calls = new Map<string, string>();
  private readonly byPhase = new Map<string, Tried>();

  /** One activity of `phase`; returns the act when this one is a refused call. */
  see(phase: string, activity: Activity): string | undefined {
    if (activity.kind === 'tool_start') {
      this.calls.set(`${phase}\0${activity.callId ?? ''}`, callLine(activity));
      return undefined;
    }
    if (activity.kind !== 'tool_end') return undefined;
    const key = `${phase}\0${activity.callId ?? ''}`;
    const call = this.calls.get(key);
    this.calls.delete(key);
    const act = triedAct(activity, call);
    if (act !== undefined) this.add(phase, act);
    return act;
  }

  /** An act of `phase` found otherwise (a ref its own git contained, ../git/own.ts). */
  add(phase: string, act: string): void {
    const tried = this.byPhase.get(phase) ?? { acts: [], count: 0 };
    if (tried.acts.length < TRIED_KEPT) tried.acts.push(act);
    tried.count += 1;
    this.byPhase.set(phase, tried);
  }

  of(phase: string): Tried | undefined {
    const tried = this.byPhase.get(phase);
    return tried ? { acts: [...tried.acts], count: tried.count } : undefined;
  }
}

/** The acts as one line: the first few, then how many more (`tried: a; b (+3 more)`). */
export function triedLine(
  tried: { tried?: readonly string[]; triedCount?: number },
  shown = TRIED_KEPT,
): string | undefined {
  const acts = tried.tried ?? [];
  if (acts.length === 0) return undefined;
  const count = Math.max(tried.triedCount ?? acts.length, acts.length);
  const more = count - Math.min(shown, acts.length);
  return `tried: ${acts.slice(0, shown).join('; ')}${more > 0 ? ` (+${more} more)` : ''}`;
}
