// `factory resume <adw_id>`: continue a failed or interrupted run in the live session of the phase it stopped
// in, from the same folder only (pi would silently fork a twin session elsewhere).
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { readLedger } from '../ledger.js';
import { CONTINUE_ASK, planResume } from '../resume.js';
import { Run } from '../runner.js';
import { readRunLog, runLogPath } from '../trace/runLog.js';
import { prepareBuildRun, type BuildArgs } from './build.js';
import type { PreparedRun } from './prepared.js';
import { preparePromptRun, type PromptArgs } from './prompt.js';
import type { CommandFlags, Workspace } from './workspace.js';

/** Whether pi wrote the session file (it does so lazily, at the first assistant message). */
function sessionHasHistory(ws: Workspace, sessionId: string): boolean {
  try {
    return fs.readdirSync(ws.paths.sessionsDir).some((name) => name.endsWith(`_${sessionId}.jsonl`));
  } catch {
    return false;
  }
}

export async function prepareResumeRun(ws: Workspace, adwId: string | undefined, flags: CommandFlags): Promise<PreparedRun> {
  if (!adwId || !/^[0-9a-f]{8}$/.test(adwId)) throw new UsageError(`factory resume needs a run id of 8 hex characters (got ${JSON.stringify(adwId ?? '')})`);
  const events = readRunLog(runLogPath(ws.paths, adwId));
  if (events.length === 0) throw new UsageError(`no run ${adwId} recorded in ${ws.paths.dataDir}`);
  const decision = planResume(adwId, events, readLedger(ws.paths.ledgerFile));
  if (!decision.ok) throw new UsageError(decision.motif);
  const { plan } = decision;
  if (path.resolve(plan.cwd) !== path.resolve(ws.root)) {
    throw new UsageError(`run ${adwId} was born in ${plan.cwd}; resume it from there (here: ${ws.root})`);
  }
  const { endTagged } = await import('../process/supervisor.js');
  const leftovers = await endTagged(adwId);
  if (leftovers > 0) process.stderr.write(`factory: ended ${leftovers} process(es) left running by the stopped cockpit of run ${adwId}\n`);
  const run = new Run(plan.adwName, ws.root, adwId);
  // What the stopped phase already cost stays on the run's bill.
  run.charge(plan.phase, plan.spent.tokens, plan.spent.cost);
  if (plan.sessionId) run.sessions[plan.phase] = plan.sessionId;
  const resumedFlags = { ...flags, model: undefined };
  let prepared: PreparedRun;
  switch (plan.adwName) {
    case 'adw_prompt':
      prepared = await preparePromptRun(ws, plan.args as unknown as PromptArgs, resumedFlags, run);
      break;
    case 'adw_build':
      prepared = await prepareBuildRun(ws, plan.args as unknown as BuildArgs, resumedFlags, run);
      break;
    default:
      throw new UsageError(`run ${adwId} is a ${plan.adwName || 'run of unknown kind'}: it cannot be resumed`);
  }
  const continuation = plan.sessionId && sessionHasHistory(ws, plan.sessionId) ? CONTINUE_ASK : undefined;
  return { ...prepared, resume: { carried: plan.carried, phase: plan.phase, continuation } };
}
