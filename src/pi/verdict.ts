// The verdict on one pi attempt, from its stream summary and its exit. Pure, and ordered on purpose:
// 1. the socle must prove it was loaded (otherwise the typed gate, the guard and damage control may have
//    been skipped silently, so even a valid envelope is refused); 2. the gate's envelope wins;
// 3. a turn that ended in error/aborted fails with the provider's words (pi exits 0 in json mode);
// 4. a non-zero exit without text fails with stderr; 5. no text at all is 'empty'; 6. the text.
// Last, an accepted result must come from the model that was asked for.

import { clip, type FailureKind } from '../contract/errors.js';
import { compareVersions } from './piCommand.js';
import { isKeyRejection, missingKeyMotif, missingKeyProvider, rejectedKeyMotif } from './providerKeys.js';
import type { StreamSummary } from './stream.js';

export type VerdictKind = Extract<
  FailureKind,
  'auth' | 'socle' | 'version' | 'guard' | 'model_error' | 'aborted' | 'exit' | 'empty' | 'model_mismatch'
>;

export type Verdict =
  | { ok: true; source: 'gate'; envelope: Record<string, unknown> }
  | { ok: true; source: 'text'; text: string }
  | { ok: false; kind: VerdictKind; motif: string };

export interface VerdictContext {
  exitCode: number | null;
  signal?: string | null;
  /** The route pi was asked to use (`provider/id`); unset = pi's default, nothing to compare. */
  requestedModel?: string;
  /** Names of the extensions every factory node must have loaded. */
  expectedSocle: string[];
  stderrTail: string;
  minVersion: string;
}

/** Collapses a (possibly multi-line) evidence text to one line of bounded length. */
function line(text: string, max = 300): string {
  // \s has no U+0085 (NEL): named apart, so every Unicode line break becomes a space.
  return clip(text.replace(/[\s\u0085]+/gu, ' ').trim(), max);
}

/** The last non-empty lines of stderr, most telling at the end. */
function stderrEvidence(tail: string): string {
  const lines = tail
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.length === 0 ? 'no stderr' : line(lines.slice(-3).join(' | '));
}

function socleRefusal(summary: StreamSummary, ctx: VerdictContext): Verdict | undefined {
  const inventory = summary.inventory;
  if (!inventory) {
    return {
      ok: false,
      kind: 'socle',
      motif:
        "no factory-inventory entry in pi's stream: the node's extensions were not loaded " +
        '(missing --approve, or .pi/settings.json / .pi/extensions absent in this folder)',
    };
  }
  const missing = new Set(inventory.missing);
  for (const name of ctx.expectedSocle) if (!inventory.present.includes(name)) missing.add(name);
  if (missing.size > 0) {
    const names = [...missing].join(', ');
    return {
      ok: false,
      kind: 'socle',
      motif: `socle incomplete: extension${missing.size > 1 ? 's' : ''} ${names} not loaded by pi`,
    };
  }
  if (!/^v?\d+(\.\d+)*/u.test(inventory.pi_version)) {
    return {
      ok: false,
      kind: 'version',
      motif: `pi version unknown in the inventory (need ${ctx.minVersion} or newer) — run \`pi update\``,
    };
  }
  if (compareVersions(inventory.pi_version, ctx.minVersion) < 0) {
    return {
      ok: false,
      kind: 'version',
      motif: `pi ${inventory.pi_version} is older than ${ctx.minVersion} — run \`pi update\``,
    };
  }
  return undefined;
}

/**
 * A missing or refused provider key, said first: pi stops before loading any extension when it has no key, so
 * the socle check would otherwise blame the node. The provider's own words are left out: a 401 may quote the key.
 */
function keyRefusal(summary: StreamSummary, ctx: VerdictContext): Verdict | undefined {
  const missing = missingKeyProvider(ctx.stderrTail);
  if (missing && !summary.envelope) return { ok: false, kind: 'auth', motif: missingKeyMotif(missing) };
  if (summary.stopReason === 'error' && summary.errorMessage && isKeyRejection(summary.errorMessage)) {
    const provider = ctx.requestedModel?.split('/')[0] || 'the provider';
    const status = /\b(401|403)\b/.exec(summary.errorMessage)?.[1];
    return { ok: false, kind: 'auth', motif: rejectedKeyMotif(provider, status) };
  }
  return undefined;
}

function outcome(summary: StreamSummary, ctx: VerdictContext): Verdict {
  const key = keyRefusal(summary, ctx);
  if (key) return key;
  const refused = socleRefusal(summary, ctx);
  if (refused) return refused;
  if (summary.envelope) return { ok: true, source: 'gate', envelope: summary.envelope };
  // factory-guard aborts the agent; pi then reports a bare "This operation was aborted": the guard's reason
  // is the real motif.
  // pi ≥ 1.1 says outright that the run was aborted (agent_settled.aborted): an abort between turns may leave an
  // errored assistant message (0.85–1.5: "This operation was aborted") or none at all.
  const aborted = summary.stopReason === 'aborted' || summary.settledAborted === true;
  if (summary.guardTrip && (summary.stopReason === 'error' || aborted)) {
    return { ok: false, kind: 'guard', motif: line(summary.guardTrip) };
  }
  if (summary.settledAborted === true && summary.stopReason !== 'aborted') {
    return {
      ok: false,
      kind: 'aborted',
      motif: `turn aborted${summary.errorMessage ? `: ${line(summary.errorMessage)}` : ''}`,
    };
  }
  if (summary.stopReason === 'error') {
    return {
      ok: false,
      kind: 'model_error',
      motif: `model error: ${line(summary.errorMessage ?? '') || 'no error message from the provider'}`,
    };
  }
  if (summary.stopReason === 'aborted') {
    return {
      ok: false,
      kind: 'aborted',
      motif: `turn aborted${summary.errorMessage ? `: ${line(summary.errorMessage)}` : ''}`,
    };
  }
  const text = summary.text.trim();
  const failedExit = (ctx.exitCode !== null && ctx.exitCode !== 0) || Boolean(ctx.signal);
  if (failedExit && text === '') {
    const how = ctx.signal ? `was killed by ${ctx.signal}` : `exited with code ${ctx.exitCode}`;
    return { ok: false, kind: 'exit', motif: `pi ${how}: ${stderrEvidence(ctx.stderrTail)}` };
  }
  if (text === '')
    return { ok: false, kind: 'empty', motif: 'the agent answered with neither an envelope nor any text' };
  return { ok: true, source: 'text', text: summary.text };
}

export function verdict(summary: StreamSummary, ctx: VerdictContext): Verdict {
  const judged = outcome(summary, ctx);
  if (!judged.ok || !ctx.requestedModel) return judged;
  if (summary.model !== ctx.requestedModel) {
    return {
      ok: false,
      kind: 'model_mismatch',
      motif: `model mismatch: requested ${ctx.requestedModel}, pi answered with ${summary.model ?? 'no observed model'}`,
    };
  }
  return judged;
}
