// `factory prompt "<ask>"`: adw_prompt in a workspace.
import { ADW_NAME, promptPhases } from '../../adws/adw_prompt.js';
import { UsageError } from '../errors.js';
import { Run } from '../runner.js';
import { agentSetup, harnessFor, parseRetries, type CommandFlags, type Workspace } from './workspace.js';
import { preparedRun, type PreparedRun } from './prepared.js';

export interface PromptArgs {
  ask: string;
  model?: string;
  retries: number;
  harness?: string;
}

export function promptArgs(ask: string, flags: CommandFlags): PromptArgs {
  if (!ask.trim()) throw new UsageError('empty ask: factory prompt "<what you want to know>"');
  return { ask, model: flags.model, retries: parseRetries(flags.retries), harness: flags.harness };
}

export async function preparePromptRun(ws: Workspace, args: PromptArgs, flags: CommandFlags, run = new Run(ADW_NAME, ws.root)): Promise<PreparedRun> {
  const setup = agentSetup(ws, 'prompter', { ...flags, model: args.model });
  const harness = await harnessFor(ws);
  run.args = { ...args };
  const phases = promptPhases({
    ask: args.ask,
    harness,
    workspace: ws.paths,
    cwd: ws.root,
    retries: args.retries,
    model: setup.profile.route,
    fallbackModel: setup.fallbackModel,
    thinking: setup.profile.thinking,
    tools: setup.profile.tools,
    limits: setup.profile.limits,
    timeoutMs: setup.profile.timeoutMs,
    env: setup.env,
  });
  return preparedRun(ws, run, phases, () => run.results.dispose);
}
