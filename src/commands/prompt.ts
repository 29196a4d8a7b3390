// `factory prompt "<ask>"`: adw_prompt in a workspace.
import { ADW_NAME, promptPhases } from '../../adws/adw_prompt.js';
import type { PromptArgs } from '../../adws/registry.js';
import { UsageError } from '../contract/errors.js';
import { Run } from '../engine/runner.js';
import { agentPhaseOptions, agentSetup, parseRetries, type CommandFlags, type Workspace } from './workspace.js';
import { preparedRun, type PreparedRun } from './prepared.js';

export type { PromptArgs } from '../../adws/registry.js';

/** The most of stdin an ask is read from: an ask is a paragraph, and a runaway pipe must not fill memory. */
export const MAX_STDIN_ASK = 1024 * 1024;

/**
 * The ask as typed: the words after `prompt`, or stdin when the only word is `-` or when there are none and stdin
 * is not a terminal (`git diff | factory prompt`). A longer stdin is refused in one line.
 */
export async function askFrom(words: string[], input?: NodeJS.ReadableStream & { isTTY?: boolean }): Promise<string> {
  // process.stdin is only touched when the words send there: building that stream costs a few ms before pi starts.
  const stdin = () => input ?? process.stdin;
  const fromStdin = (words.length === 1 && words[0] === '-') || (words.length === 0 && !stdin().isTTY);
  if (!fromStdin) return words.join(' ');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin()) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > MAX_STDIN_ASK)
      throw new UsageError(
        `the ask on stdin is longer than ${MAX_STDIN_ASK / 1024} KB: put it in a spec file (factory build <spec.md>)`,
      );
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function promptArgs(ask: string, flags: CommandFlags): PromptArgs {
  if (!ask.trim()) throw new UsageError('empty ask: factory prompt "<what you want to know>"');
  return { ask, model: flags.model, retries: parseRetries(flags.retries), harness: flags.harness };
}

export async function preparePromptRun(
  ws: Workspace,
  args: PromptArgs,
  flags: CommandFlags,
  run = new Run(ADW_NAME, ws.root),
): Promise<PreparedRun> {
  const setup = agentSetup(ws, 'prompter', { ...flags, model: args.model });
  // --model checked against `pi --list-models` before any token: pi bills an unknown id as its default model.
  if (args.model !== undefined) await (await import('./workspace.js')).assertModelFlagOffered(ws, setup.profile.route);
  const phases = promptPhases({ ask: args.ask, ...(await agentPhaseOptions(ws, setup, args.retries)) });
  run.args = { ...args };
  return preparedRun(ws, run, phases, () => run.results.dispose);
}
