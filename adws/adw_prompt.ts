// adw_prompt: the smallest complete workflow. One agent phase sends the user's ask through the harness port
// and owes an envelope through the typed gate; one code phase disposes of it, deterministically.
import { agentPhase, fromWorkflow, type AgentWorkflowOptions } from '../src/engine/agentPhase.js';
import type { Phase } from '../src/engine/runner.js';
import { PhaseFailure } from '../src/contract/errors.js';

export const ADW_NAME = 'adw_prompt';

/** Read-only exploration tools: a prompt answers, it does not edit. */
export const PROMPT_TOOLS = ['read', 'grep', 'find', 'ls', 'bash'];

export interface PromptAdwOptions extends AgentWorkflowOptions {
  ask: string;
}

export function promptPhases(opts: PromptAdwOptions): Phase[] {
  return [
    agentPhase({
      name: 'prompt',
      role: 'prompter',
      envelope: 'Envelope',
      ask: () => opts.ask,
      ...fromWorkflow(opts, { tools: PROMPT_TOOLS, timeoutMs: 10 * 60_000 }),
    }),
    {
      name: 'dispose',
      kind: 'code',
      action(run) {
        const envelope = run.results.prompt as { status: string; summary?: string };
        if (envelope.status !== 'success') {
          throw new PhaseFailure(`the agent reports a failure: ${JSON.stringify(envelope.summary ?? '')}`);
        }
        return envelope;
      },
    },
  ];
}
