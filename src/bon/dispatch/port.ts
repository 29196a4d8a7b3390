// The port one best-of-N arm goes through. The run hands an arm spec to a dispatcher and gets back the arm's events
// as they happen, a way to stop it and its outcome; it never reaches into how or where the arm works. The local
// dispatcher (./local.ts) runs the arm on this machine (a worktree of its own, or the user's tree in place); a
// dispatcher that sends the spec to another machine needs only what the spec says, so the spec is plain JSON, typed
// by its schema, and names things (a model route, a gate command, a commit) — never a secret, never an environment.
import * as z from '../../contract/zod.js';
import type { FailureKind } from '../../contract/errors.js';
import type { ArmRank, RunEvent } from '../../contract/events.js';

const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** One arm's order: all a machine needs to run it, given the repository at `base` and the primer's session. */
export const ArmSpecSchema = z.strictObject({
  adwId: z.string().regex(/^[0-9A-Za-z_-]{1,64}$/),
  arm: z.number().int().min(1),
  /** Its phase's name in the run (`arm_<n>`). */
  phase: z.string().regex(/^arm_[1-9][0-9]*$/),
  /** A worktree of its own (the default) or the user's tree, one arm after another. */
  place: z.enum(['worktree', 'in-place']),
  /** The commit its tree starts from and its patch is verified against. */
  base: z.string().regex(COMMIT),
  /** The spec it implements, as the agent is told it (relative to the repository's root when inside it). */
  spec: z.string().min(1),
  /** The primer's session it starts from, and how many messages a copy of it must hold. */
  primer: z.strictObject({ sessionId: z.string().min(1), messages: z.number().int().min(0) }),
  /** Its model route as the roster writes it (`provider/model`); absent: the builder's. */
  model: z.string().min(1).optional(),
  /** Its spend cap in US dollars, if it has one. */
  capUsd: z.number().min(0).optional(),
  /** The payload's gate commands, each in a folder relative to the repository's root. */
  gates: z.array(z.strictObject({ run: z.string().min(1), cwd: z.string(), timeoutMs: z.number().int().positive() })),
});
export type ArmSpec = z.infer<typeof ArmSpecSchema>;

/** Why a red arm is red, as plain data: the runner turns it back into the phase's failure. */
export interface ArmFailure {
  motif: string;
  detail?: string;
  kind: FailureKind;
}

/** What an arm came to: its rank (figures, patch, verdict) and, when it is red, why. */
export interface ArmOutcome {
  rank: ArmRank;
  failure?: ArmFailure;
}

/** One dispatched arm: stop it (it ends red, its work so far harvested), and wait for its outcome. */
export interface ArmJob {
  abort(): void;
  /** Its outcome; rejects only with a failure of the batch (an InfrastructureError), never for a red arm. */
  readonly outcome: Promise<ArmOutcome>;
}

export interface ArmDispatcher {
  /** Starts the arm `spec` orders; its events come to `events` in the order they happen, all before its outcome. */
  dispatch(spec: ArmSpec, events: (event: RunEvent) => void): ArmJob;
}

/** The spec as it would travel: parsed from its JSON, so what is not plain data or not in the schema is refused. */
export function armSpec(value: ArmSpec): ArmSpec {
  return ArmSpecSchema.parse(JSON.parse(JSON.stringify(value)));
}
