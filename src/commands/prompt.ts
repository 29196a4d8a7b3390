// `factory prompt "<ask>"`: adw_prompt in a workspace.
import { ADW_NAME, promptPhases } from '../../adws/adw_prompt.js';
import type { PromptArgs } from '../../adws/registry.js';
import { UsageError } from '../errors.js';
import { Run } from '../runner.js';
import { agentPhaseOptions, agentSetup, parseRetries, type CommandFlags, type Workspace } from './workspace.js';
import { preparedRun, type PreparedRun } from './prepared.js';

export type { PromptArgs } from '../../adws/registry.js';

export function promptArgs(ask: string, flags: CommandFlags): PromptArgs {
  if (!ask.trim()) throw new UsageError('empty ask: factory prompt "<what you want to know>"');
  return { ask, model: flags.model, retries: parseRetries(flags.retries), harness: flags.harness };
}

export async function preparePromptRun(ws: Workspace, args: PromptArgs, flags: CommandFlags, run = new Run(ADW_NAME, ws.root)): Promise<PreparedRun> {
  const setup = agentSetup(ws, 'prompter', { ...flags, model: args.model });
  const phases = promptPhases({ ask: args.ask, ...(await agentPhaseOptions(ws, setup, args.retries)) });
  run.args = { ...args };
  return preparedRun(ws, run, phases, () => run.results.dispose);
}
