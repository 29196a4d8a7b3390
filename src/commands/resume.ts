// `factory resume <adw_id>`: continue a failed or interrupted run in the live session of the phase it stopped
// in, from the same folder only (pi would silently fork a twin session elsewhere).
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../contract/errors.js';
import { readLedger, sessionFileOf } from '../trace/ledger.js';
import type { BonArgs } from '../../adws/registry.js';
import type { RunEvent } from '../contract/events.js';
import { CONTINUE_ASK, pendingApply, planResume, type ResumePlan } from '../engine/resume.js';
import { Run } from '../engine/runner.js';
import { readRunLog, runLogPath } from '../trace/runLog.js';
import { prepareBuildRun } from './build.js';
import type { PreparedRun } from './prepared.js';
import { preparePromptRun } from './prompt.js';
import type { CommandFlags, Workspace } from './workspace.js';

/** Whether pi wrote the session file (it does so lazily, at the first assistant message). */
function sessionHasHistory(ws: Workspace, sessionId: string): boolean {
  return sessionFileOf(ws.paths.sessionsDir, sessionId) !== undefined;
}

/**
 * A run another cockpit is still driving must not be resumed (two writers on one session, its processes killed):
 * its recorded owner is alive, or a process of the run still has a live, untagged parent (the cockpit).
 */
async function refuseLiveRun(ws: Workspace, adwId: string): Promise<void> {
  const { taggedProcesses, parentOf } = await import('../process/supervisor.js');
  const tagged = taggedProcesses(adwId);
  // An orphan's parent is init or a subreaper (systemd --user, tmux…): only a factory cockpit counts as an owner.
  const isCockpit = (pid: number) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('factory');
    } catch {
      return false;
    }
  };
  const owner = tagged
    .map(parentOf)
    .find(
      (ppid) => ppid !== undefined && ppid > 1 && !tagged.includes(ppid) && ppid !== process.pid && isCockpit(ppid),
    );
  let livePid = owner;
  if (livePid === undefined) {
    try {
      const { openSyncedStore } = await import('./runs.js');
      const store = await openSyncedStore(ws.paths);
      try {
        livePid = store.listRuns(100_000).find((r) => r.adwId === adwId)?.livePid;
      } finally {
        store.close();
      }
    } catch {
      // no trace store: the process check above is all there is
    }
  }
  if (livePid !== undefined)
    throw new UsageError(`run ${adwId} is still running (cockpit pid ${livePid}): stop it first, then resume`);
}

/**
 * `factory resume <id>` of a green best-of-N run whose asked apply never happened: the winner applied now, exactly
 * once (its outcome joins the run's log), re-verified on HEAD as `factory apply` does. Undefined when none is owed.
 */
export async function resumeApply(
  ws: Workspace,
  adwId: string | undefined,
  json: boolean,
): Promise<{ stdout: string; exit: number } | undefined> {
  if (!adwId || !/^[0-9a-f]{8}$/.test(adwId)) return undefined;
  const events = readRunLog(runLogPath(ws.paths, adwId));
  const pending = pendingApply(events);
  if (!pending) return undefined;
  await refuseLiveRun(ws, adwId);
  const { applyOutput } = await import('./apply.js');
  process.stderr.write(
    `factory: run ${adwId} is green, but the apply it asked for (--apply) never happened: applying its winner now\n`,
  );
  return applyOutput(ws, { adwId, ...(pending.yes ? { yes: true } : {}) }, json);
}

export async function prepareResumeRun(
  ws: Workspace,
  adwId: string | undefined,
  flags: CommandFlags,
): Promise<PreparedRun> {
  if (!adwId || !/^[0-9a-f]{8}$/.test(adwId))
    throw new UsageError(`factory resume needs a run id of 8 hex characters (got ${JSON.stringify(adwId ?? '')})`);
  const events = readRunLog(runLogPath(ws.paths, adwId));
  if (events.length === 0) throw new UsageError(`no run ${adwId} recorded in ${ws.paths.dataDir}`);
  const decision = planResume(adwId, events, readLedger(ws.paths.ledgerFile));
  if (!decision.ok) throw new UsageError(decision.motif);
  const { plan } = decision;
  if (path.resolve(plan.cwd) !== path.resolve(ws.root)) {
    throw new UsageError(`run ${adwId} was born in ${plan.cwd}; resume it from there (here: ${ws.root})`);
  }
  const { readResumable } = await import('../../adws/registry.js');
  const recorded = readResumable(plan.adwName, plan.args);
  if ('motif' in recorded) throw new UsageError(`run ${adwId} is ${recorded.motif}`);
  const harness = 'harness' in recorded.args ? recorded.args.harness : undefined;
  if (harness !== undefined && harness !== ws.harnessName) {
    // Its sessions belong to that harness: continuing them on another would silently start over.
    if (flags.harness !== undefined)
      throw new UsageError(`run ${adwId} ran on ${harness}; it cannot be resumed on ${flags.harness}`);
    ws.harnessName = harness as Workspace['harnessName'];
  }
  await refuseLiveRun(ws, adwId);
  const { endTagged } = await import('../process/supervisor.js');
  const leftovers = await endTagged(adwId);
  if (leftovers > 0)
    process.stderr.write(
      `factory: ended ${leftovers} process(es) left running by the stopped cockpit of run ${adwId}\n`,
    );
  const run = new Run(plan.adwName, ws.root, adwId);
  // What the stopped phase already cost stays on the run's bill.
  run.charge(plan.phase, plan.spent.tokens, plan.spent.cost);
  if (plan.sessionId) run.sessions[plan.phase] = plan.sessionId;
  const resumedFlags = { ...flags, model: undefined };
  if (recorded.adwName === 'adw_bon') return resumeBon(ws, recorded.args, resumedFlags, run, plan, events);
  const prepared: PreparedRun =
    recorded.adwName === 'adw_prompt'
      ? await preparePromptRun(ws, recorded.args, resumedFlags, run)
      : await prepareBuildRun(ws, recorded.args, resumedFlags, run);
  const continuation = plan.sessionId && sessionHasHistory(ws, plan.sessionId) ? CONTINUE_ASK : undefined;
  return { ...prepared, resume: { carried: plan.carried, phase: plan.phase, continuation } };
}

/**
 * A best-of-N run again: the check runs again (and must find the same HEAD), the primer is kept when it finished (the
 * arms still to run fork its session file again), every finished arm keeps its verdict and sealed patch, the others
 * run, then the harvest ranks them all. An in-place run cannot: its arms were clones inside one pi process.
 */
async function resumeBon(
  ws: Workspace,
  args: BonArgs,
  flags: CommandFlags,
  run: Run,
  plan: ResumePlan,
  events: RunEvent[],
): Promise<PreparedRun> {
  if (args.inPlace)
    throw new UsageError(
      `run ${run.adwId} ran --in-place: its arms were clones inside one pi process that is gone; start it again`,
    );
  const { bonResumeState, preloadSession } = await import('../bon/resumeBon.js');
  const state = bonResumeState(events, plan.carried, ws.paths.sessionsDir);
  if ('motif' in state) throw new UsageError(`run ${run.adwId} cannot be resumed: ${state.motif}`);
  const { prepareBonRun } = await import('./bon.js');
  const prepared = await prepareBonRun(ws, args, flags, run);
  preloadSession(prepared.session, state);
  prepared.session.planArms(args.arms + plan.planned.filter((p) => p.arm !== undefined).length);
  // The check and the harvest always run again; the primer and the finished arms are replayed.
  const carried = new Map([...plan.carried].filter(([name]) => name !== 'check' && name !== 'harvest'));
  if (!state.primer) carried.delete('prime');
  return { ...prepared, phases: prepared.session.phases, resume: { carried, phase: 'check', anywhere: true } };
}
