// `factory build <spec>`: adw_build in a workspace, judged by the roster's payload commands.
import type { BuildArgs } from '../../adws/registry.js';
import { ADW_NAME, buildPhases } from '../../adws/adw_build.js';
import { UsageError } from '../contract/errors.js';
import { gateCommands } from '../config/roster.js';
import { Run } from '../engine/runner.js';
import { preparedRun, type PreparedRun } from './prepared.js';
import {
  agentPhaseOptions,
  agentSetup,
  gateEnv,
  parseRetries,
  specFromInvocation,
  type CommandFlags,
  type Workspace,
} from './workspace.js';

export type { BuildArgs } from '../../adws/registry.js';

export function buildArgs(spec: string | undefined, flags: CommandFlags): BuildArgs {
  if (!spec || !spec.trim()) throw new UsageError('missing spec: factory build <spec.md>');
  return { spec, model: flags.model, retries: parseRetries(flags.retries), harness: flags.harness };
}

export async function prepareBuildRun(
  ws: Workspace,
  args: BuildArgs,
  flags: CommandFlags,
  run = new Run(ADW_NAME, ws.root),
): Promise<PreparedRun> {
  const setup = agentSetup(ws, 'builder', { ...flags, model: args.model });
  // --model checked against `pi --list-models` before any token: pi bills an unknown id as its default model.
  if (args.model !== undefined) await (await import('./workspace.js')).assertModelFlagOffered(ws, setup.profile.route);
  const phases = buildPhases({
    ...(await agentPhaseOptions(ws, setup, args.retries)),
    specPath: specFromInvocation(ws, args.spec),
    // pi's node injects the brief itself (factory-context); claude has no node, so it gets it in the ask.
    brief: ws.harnessName === 'claude' ? setup.brief : undefined,
    payloadCommands: gateCommands(ws.root, ws.roster),
    gateEnv: gateEnv(ws),
  });
  run.args = { ...args };
  return preparedRun(ws, run, phases, () => run.results.build);
}
