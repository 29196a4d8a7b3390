// Typed events emitted by the core. The TUI store, the headless printer and (later) the trace store
// all consume this one union, so a new consumer never needs to reach into the runner.
import type { FailureKind } from './errors.js';

export type { FailureKind } from './errors.js';

export type PhaseKind = 'agent' | 'code';

/** One line of live activity inside an agent phase, distilled from pi's event stream. */
export type Activity =
  | {
      kind: 'tool_start';
      tool: string;
      detail: string /** pi's toolCallId: pairs the end with its start. */;
      callId?: string;
    }
  | {
      kind: 'tool_end';
      tool: string;
      isError: boolean;
      detail: string /** A line of its output where the OS sandbox refused a write. */;
      denied?: string;
      callId?: string;
    }
  | { kind: 'text'; text: string }
  | { kind: 'retry'; attempt: number; message: string }
  | { kind: 'note'; text: string };

export interface PhasePlan {
  name: string;
  kind: PhaseKind;
  /** Total attempts allowed (1 + retries for agent phases, 1 for code phases). */
  attempts: number;
  /** The model the phase is planned on, when known before it starts (a best-of-N arm). */
  model?: string;
  /** The arm number of a best-of-N arm phase (the phase's name is for people: nothing parses it). */
  arm?: number;
}

/** One arm of a best-of-N run as the harvest ranks it. */
export interface ArmRank {
  arm: number;
  phase: string;
  model?: string;
  green: boolean;
  /** Why the arm is red (envelope refused, a gate, aborted, crashed). */
  motif?: string;
  /** The arm's own tokens and cost (its message_end usage, the primer excluded). */
  tokens: number;
  cost: number;
  seconds: number;
  patchFile?: string;
  patchBytes: number;
  /** The patch's seal (sha256 of its bytes at harvest). */
  patchSha256?: string;
  /** Why a red arm is red, as a kind (`budget`: a cap ended it; `race`: a race policy did; `gate`…). */
  failure?: FailureKind;
  /** The patch's size in lines and the files it touches. */
  added?: number;
  removed?: number;
  files?: string[];
  /** Gates red on HEAD before the fan-out that this arm's work turned green (../gates/baseline.ts). */
  fixed?: string[];
  /** Gates red on HEAD that this arm left red the same way: not held against it, but not proof of its work either. */
  excused?: string[];
  /**
   * Every gate that ran was excused (red on HEAD the same way): nothing verified the arm. It is not green (`green` is
   * false), never wins, and is applied only when the user names it (../bon/harvest/rank.ts verdictOf says `unverified`).
   */
  unverified?: boolean;
  /**
   * What the arm tried that its guards refused or contained (a call damage-control blocked, a write the sandbox
   * refused), the first few as lines (../bon/harvest/tried.ts); `triedCount` counts them all. An arm that tried something
   * ranks below one equal on the gates that tried nothing, and applying it asks first.
   */
  tried?: string[];
  triedCount?: number;
  /** The files of its patch beyond the spec's scope (what the spec and the primer's plan name; ../bon/harvest/scope.ts). */
  beyond?: string[];
  /** It waited for a slot before it started: it ran under another load than the arms before it (its time is not theirs). */
  waited?: boolean;
}

/** A best-of-N judge's order of the green arms, as the code accepted it (../bon/judge.ts). */
export interface JudgeOrder {
  ranking: Array<{ arm: number; reason: string }>;
  tokens: number;
  cost: number;
  model?: string;
}

/** The spend forecast of a fan-out, from the primer's own figures (../bon/spend/forecast.ts): dollars, low–high. */
export interface SpendForecast {
  arms: number;
  perArm: Array<{ arm: number; model?: string; low: number; mid: number; high: number }>;
  total: { low: number; mid: number; high: number };
  /** What the primer paid (already spent, in the total's figures). */
  primer: number;
  /** How it was reckoned, in one line (for people). */
  basis: string;
  /** How many arms of this repo's past runs it went by (0: the primer alone, a repo's first run). */
  pastArms?: number;
}

interface Base {
  adwId: string;
  /** Milliseconds since the epoch. */
  ts: number;
}

export type RunEvent =
  /** `args`: the command's inputs (ask, spec, model…), enough for `factory resume` to rebuild the phases. */
  | (Base & { type: 'run_started'; adwName: string; phases: PhasePlan[]; cwd: string; args?: Record<string, unknown> })
  | (Base & { type: 'phase_started'; phase: string; kind: PhaseKind })
  /** `modelFrom`: where its model comes from when that is not plain (best-of-N's primer: `the first of --models`). */
  | (Base & {
      type: 'attempt_started';
      phase: string;
      attempt: number;
      attempts: number;
      sessionId?: string;
      model?: string;
      modelFrom?: string;
    })
  | (Base & { type: 'activity'; phase: string; activity: Activity })
  /** Running figures of the attempt in flight (after each assistant message); earlier attempts are settled. */
  | (Base & { type: 'usage'; phase: string; tokens: number; cost: number })
  | (Base & {
      type: 'attempt_failed';
      phase: string;
      attempt: number;
      attempts: number;
      motif: string;
      failure?: FailureKind;
      willRetry: boolean;
    })
  /** `result`: what the phase handed to the next ones (an envelope, a gate report): the trace keeps it for resume. */
  | (Base & {
      type: 'phase_ok';
      phase: string;
      kind: PhaseKind;
      attempt: number;
      attempts: number;
      seconds: number;
      tokens: number;
      cost: number;
      sessionId?: string;
      result?: unknown;
    })
  /** One zero-token gate of a code phase (changed files exist, a payload command exits 0). */
  /** `preexisting`: the gate was red on HEAD already (the baseline): not held against the arm. */
  | (Base & {
      type: 'gate_result';
      phase: string;
      gate: string;
      ok: boolean;
      motif?: string;
      seconds: number;
      preexisting?: boolean;
    })
  | (Base & {
      type: 'phase_failed';
      phase: string;
      kind: PhaseKind;
      attempts: number;
      motif: string;
      failure?: FailureKind;
      seconds: number;
      tokens: number;
      cost: number;
      sessionId?: string;
    })
  /** A phase of a group that runs at once (best-of-N arms) waits for a slot: `limit` at once, `why` that many. */
  | (Base & { type: 'phase_waiting'; phase: string; limit: number; why?: string })
  /** A phase added while the run goes (best-of-N: one more arm cloned from the primer), placed before `before`. */
  | (Base & { type: 'phase_planned'; phase: PhasePlan; before?: string })
  /** Best-of-N: an arm's patch, harvested from the work tree (then reset) whatever the arm's verdict. */
  | (Base & {
      type: 'arm_patch';
      phase: string;
      arm: number;
      patchFile: string;
      bytes: number;
      sha256?: string;
      files: string[];
      strays?: number;
      added?: number;
      removed?: number;
    })
  /** Best-of-N: the ranking (green first, then cheapest, then fastest), the primer paid once, the proposal. */
  /** `judge`: the judge's order of the green arms, which the ranking follows (its cost is its own, in no arm's). */
  /** `why`: the ranking's one line on why #1 is first (absent from the logs of runs before it was carried). */
  | (Base & {
      type: 'harvest';
      ranking: ArmRank[];
      winner?: number;
      why?: string;
      primer: { tokens: number; cost: number; sessionId?: string };
      harvestFile: string;
      applyCommand?: string;
      judge?: JudgeOrder;
    })
  /** `budget`: the spend cap that stopped the run (it exits 3). */
  | (Base & {
      type: 'run_finished';
      exit: number;
      seconds: number;
      tokens: number;
      cost: number;
      failedPhase?: string;
      interrupted?: boolean;
      budget?: string;
    })
  /** Best-of-N spend: an arm or the run near its cap (`wrap_up`: the agent was steered), at it, paused, raised. */
  | (Base & {
      type: 'spend';
      phase?: string;
      arm?: number;
      kind: 'wrap_up' | 'capped' | 'paused' | 'raised';
      spent: number;
      cap: number;
      scope: 'arm' | 'run';
      motif?: string;
    })
  /** Best-of-N: one more arm asked for (`c` on the board) and refused, with why: no `phase_planned` will follow. */
  | (Base & { type: 'clone_refused'; motif: string })
  /** Best-of-N: a cap or a race policy ended the batch; the arms still at work stop, the harvest ranks what exists. */
  | (Base & { type: 'race_stop'; motif: string; kind: 'aborted' | 'budget' | 'race' })
  /** Best-of-N: what the fan-out is expected to cost, before the arms start; `confirm`: it waits for a yes. */
  /** `cap`: the run's cap (--max-cost) when the forecast is above it: it waits for a yes as above `threshold`. */
  | (Base & { type: 'forecast'; forecast: SpendForecast; threshold?: number; confirm?: boolean; cap?: number })
  /** Best-of-N: the gates on HEAD before the fan-out; a red one is pre-existing and not held against the arms. */
  /** `setup`: the gate could not run on HEAD (its program missing): no test result, the run stops on it (exit 2). */
  | (Base & {
      type: 'baseline';
      gates: Array<{
        gate: string;
        ok: boolean;
        motif?: string;
        signature?: { ending: string; lines: string[] };
        setup?: boolean;
      }>;
      seconds: number;
    })
  /** The provider was down: the attempt is relaunched on `to` in the same session. */
  | (Base & { type: 'fallback'; phase: string; from: string; to: string; reason: string })
  /** The run's result, as printed on stdout (already masked): the disposed envelope. */
  | (Base & { type: 'envelope'; envelope: unknown })
  /** The run's result when it is a command to run: the verified apply of a best-of-N winner. */
  | (Base & { type: 'proposal'; command: string })
  /** An arm's patch was applied to the user's tree (--apply, or `p` on the board), or refused, and why. */
  | (Base & { type: 'apply'; arm?: number; applied: boolean; line: string });

export type RunEventType = RunEvent['type'];

/**
 * The version of this union as `--json` prints it (every line carries `schemaVersion`). A field added is not a new
 * version; a field removed, renamed or whose meaning changes is.
 */
export const EVENT_SCHEMA_VERSION = 1;

export type RunEventListener = (event: RunEvent) => void;
