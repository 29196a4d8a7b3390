// An agent phase as ADWs declare it: the ask on attempt 1, the exact correction in the same live session on
// later attempts, the envelope parsed from the typed gate (or the text fallback). Shared by every ADW.
import { randomUUID } from 'node:crypto';
import { envelopeCard, loadEnvelopes } from '../envelope/catalog.js';
import { HarnessError, InfrastructureError, isInfrastructure, PhaseFailure } from '../contract/errors.js';
import { sessionHoldsAsk } from '../trace/ledger.js';
import type { Harness, Limits } from '../harness/types.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../contract/agent.js';
import type { WorkspacePaths } from '../config/paths.js';
import type { Phase, Run } from './runner.js';

/** Harness failures that a retry in the same session cannot mend: the node or the installation is at fault. */
export interface AgentPhaseSpec {
  name: string;
  role: string;
  retries: number;
  /** Title of the envelope type the phase owes (see ENVELOPE_TYPES). */
  envelope: string;
  /** The mission of attempt 1 (the contract is appended here). */
  ask: (run: Run) => string;
  harness: Harness;
  workspace: WorkspacePaths;
  cwd: string;
  model?: string;
  /** Route to relaunch on when the provider is down (else FACTORY_FALLBACK_MODEL from the env). */
  fallbackModel?: string;
  thinking?: string;
  tools?: string[];
  limits?: Limits;
  timeoutMs: number;
  idleTimeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

/** What a workflow's agent phase is given by its command: where it runs, on which route, with what budget. */
export interface AgentWorkflowOptions {
  harness: Harness;
  workspace: WorkspacePaths;
  /** The work tree the agent works in (and the gates judge). */
  cwd: string;
  /** Extra attempts, in the same live session. */
  retries: number;
  model?: string;
  /** Route to relaunch on, in the same session, when the provider is down. */
  fallbackModel?: string;
  thinking?: string;
  /** Defaults to the workflow's own tool set. */
  tools?: string[];
  limits?: Limits;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  /** The agent's environment (the harness builds pi's from it). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The part of an agent phase's spec that a workflow takes from its command as is: where it runs, on which route,
 * with what budget. `defaults` are the workflow's own: its tool set and its turn's deadline.
 */
export function fromWorkflow(
  opts: AgentWorkflowOptions,
  defaults: { tools: string[]; timeoutMs: number },
): Omit<AgentPhaseSpec, 'name' | 'role' | 'envelope' | 'ask'> {
  return {
    retries: opts.retries,
    harness: opts.harness,
    workspace: opts.workspace,
    cwd: opts.cwd,
    model: opts.model,
    fallbackModel: opts.fallbackModel,
    thinking: opts.thinking,
    tools: opts.tools && opts.tools.length > 0 ? opts.tools : defaults.tools,
    limits: opts.limits,
    timeoutMs: opts.timeoutMs ?? defaults.timeoutMs,
    idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    env: opts.env,
  };
}

/** The budget of the one relaunch after a tripped breaker: enough to report, not to start the work again. */
export function wrapUpLimits(limits: Limits | undefined): Limits {
  return {
    maxTurns: 3,
    maxToolCalls: 2,
    ...(limits?.maxCostUsd !== undefined ? { maxCostUsd: limits.maxCostUsd / 4 } : {}),
  };
}

/** The ask of that relaunch: the limit named, the mission kept (it is in the session), a report now. */
export function wrapUpAsk(motif: string, contract: string): string {
  return [
    `The circuit breaker stopped your last turn: ${motif}.`,
    'Start no new work. With what you have done so far, report now: status "success" if the task is done, "fail" with',
    'what is left otherwise.',
    '',
    contract,
  ].join('\n');
}

export function agentPhase(spec: AgentPhaseSpec): Phase {
  // The runs (by id) whose breaker has had its one relaunch: a second trip fails the phase.
  const relaunched = new Set<string>();
  return {
    name: spec.name,
    kind: 'agent',
    retries: spec.retries,
    async action(run, ctx) {
      // The session id is chosen before the call, so every error (and the retry) carries it.
      const sessionId = run.sessions[spec.name] ?? randomUUID();
      run.sessions[spec.name] = sessionId;
      const card = await envelopeCard(spec.envelope);
      let prompt: string;
      if (ctx.continuation) {
        prompt = `${ctx.continuation}\n\n${card.contract}`;
      } else if (ctx.attempt === 0) {
        prompt = `${spec.ask(run)}\n\n${card.contract}`;
      } else if (!sessionHoldsAsk(spec.workspace.sessionsDir, sessionId)) {
        // The last attempt died before pi wrote the session (stalled or killed in its first turn): this attempt
        // starts an empty session, so it gets the whole mission again, with why the last one ended.
        prompt = `${spec.ask(run)}\n\n(A first attempt ended before it could answer: ${ctx.lastMotif ?? 'it stopped'}.)\n\n${card.contract}`;
      } else {
        const { correction, envelopeType } = await loadEnvelopes();
        prompt = correction(ctx.lastMotif ?? 'the previous answer was not accepted', envelopeType(spec.envelope));
      }
      run.attemptStarted(spec.name, ctx.attempt + 1, ctx.attempts, { sessionId, model: spec.model });
      // zod loads while pi works: the parser is needed only once pi is done.
      const envelopes = loadEnvelopes();
      let result;
      const call = (text: string, limits: Limits | undefined) =>
        spec.harness.run({
          prompt: text,
          cwd: spec.cwd,
          workspace: spec.workspace,
          sessionId,
          model: spec.model,
          fallbackModel: spec.fallbackModel ?? (spec.env ?? process.env).FACTORY_FALLBACK_MODEL,
          thinking: spec.thinking,
          tools: spec.tools,
          envelopeSchema: { title: card.title, schema: card.schema },
          identity: { adwId: run.adwId, phase: spec.name, role: spec.role },
          limits,
          timeoutMs: spec.timeoutMs,
          idleTimeoutMs: spec.idleTimeoutMs,
          env: spec.env,
          signal: ctx.signal,
          onActivity: (activity) => run.activity(spec.name, activity),
          onUsage: ({ tokens, cost }) => run.liveUsage(spec.name, tokens, cost),
          onFallback: (f) => run.emit({ type: 'fallback', adwId: run.adwId, ts: Date.now(), phase: spec.name, ...f }),
        });
      try {
        try {
          result = await call(prompt, spec.limits);
        } catch (error) {
          // A tripped breaker gets one motivated relaunch in the same session, on a wrap-up budget.
          if (!(error instanceof HarnessError) || error.evidence.kind !== 'guard' || relaunched.has(run.adwId))
            throw error;
          relaunched.add(run.adwId);
          run.charge(spec.name, error.evidence.tokens ?? 0, error.evidence.cost ?? 0);
          run.activity(spec.name, {
            kind: 'note',
            text: `circuit breaker: ${error.message} — one relaunch in the same session to report`,
          });
          result = await call(wrapUpAsk(error.message, card.contract), wrapUpLimits(spec.limits));
        }
      } catch (error) {
        if (!(error instanceof HarnessError)) throw error;
        run.charge(spec.name, error.evidence.tokens ?? 0, error.evidence.cost ?? 0);
        const kind = error.evidence.kind ?? 'error';
        if (isInfrastructure(kind)) throw new InfrastructureError(error.message, kind);
        // Not retried when the kind says another attempt cannot mend it (a tripped circuit breaker: a retry
        // would hand the agent a fresh budget).
        throw new PhaseFailure(error.message, undefined, kind);
      }
      run.charge(spec.name, result.tokens, result.cost);
      // A harness may continue under another id (an old claude CLI renames a resumed session): follow it.
      run.sessions[spec.name] = result.sessionId;
      const { parse, EnvelopeError, envelopeType } = await envelopes;
      try {
        return parse(result.payload, envelopeType(spec.envelope));
      } catch (error) {
        if (error instanceof EnvelopeError) throw new PhaseFailure(`envelope refused: ${error.message}`);
        throw error;
      }
    },
  };
}
