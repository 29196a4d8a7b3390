// An agent phase as ADWs declare it: the ask on attempt 1, the exact correction in the same live session on
// later attempts, the envelope parsed from the typed gate (or the text fallback). Shared by every ADW.
import { randomUUID } from 'node:crypto';
import { contract, correction, EnvelopeError, parse, schema, type EnvelopeType } from './envelopes.js';
import { HarnessError, InfrastructureError } from './errors.js';
import type { Harness, Limits } from './harness/types.js';
import type { WorkspacePaths } from './paths.js';
import { PhaseFailure, type Phase, type Run } from './runner.js';

/** Harness failures that a retry in the same session cannot mend: the node or the installation is at fault. */
const NOT_RETRYABLE = new Set(['socle', 'version', 'resume', 'spawn', 'model_mismatch']);

export interface AgentPhaseSpec<T> {
  name: string;
  role: string;
  retries: number;
  envelope: EnvelopeType<T>;
  /** The mission of attempt 1 (the contract is appended here). */
  ask: (run: Run) => string;
  harness: Harness;
  workspace: WorkspacePaths;
  cwd: string;
  model?: string;
  thinking?: string;
  tools?: string[];
  limits?: Limits;
  timeoutMs: number;
  idleTimeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

export function agentPhase<T>(spec: AgentPhaseSpec<T>): Phase {
  const jsonSchema = schema(spec.envelope) as { title: string };
  return {
    name: spec.name,
    kind: 'agent',
    retries: spec.retries,
    async action(run, ctx) {
      // The session id is chosen before the call, so every error (and the retry) carries it.
      const sessionId = run.sessions[spec.name] ?? randomUUID();
      run.sessions[spec.name] = sessionId;
      const prompt =
        ctx.attempt === 0
          ? `${spec.ask(run)}\n\n${contract(spec.envelope)}`
          : correction(ctx.lastMotif ?? 'the previous answer was not accepted', spec.envelope);
      run.attemptStarted(spec.name, ctx.attempt + 1, ctx.attempts, { sessionId, model: spec.model });
      let result;
      try {
        result = await spec.harness.run({
          prompt,
          cwd: spec.cwd,
          workspace: spec.workspace,
          sessionId,
          model: spec.model,
          thinking: spec.thinking,
          tools: spec.tools,
          envelopeSchema: { title: jsonSchema.title, schema: jsonSchema },
          identity: { adwId: run.adwId, phase: spec.name, role: spec.role },
          limits: spec.limits,
          timeoutMs: spec.timeoutMs,
          idleTimeoutMs: spec.idleTimeoutMs,
          env: spec.env,
          signal: ctx.signal,
          onActivity: (activity) => run.activity(spec.name, activity),
          onUsage: ({ tokens, cost }) => run.liveUsage(spec.name, tokens, cost),
        });
      } catch (error) {
        if (!(error instanceof HarnessError)) throw error;
        run.charge(spec.name, error.evidence.tokens ?? 0, error.evidence.cost ?? 0);
        if (NOT_RETRYABLE.has(error.evidence.kind ?? '')) throw new InfrastructureError(error.message);
        throw new PhaseFailure(error.message);
      }
      run.charge(spec.name, result.tokens, result.cost);
      try {
        return parse(result.payload, spec.envelope);
      } catch (error) {
        if (error instanceof EnvelopeError) throw new PhaseFailure(`envelope refused: ${error.message}`);
        throw error;
      }
    },
  };
}
