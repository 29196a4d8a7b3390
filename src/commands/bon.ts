// `factory bon <spec> [--arms N] [--models a,b,c] [--apply]`: best-of-N by clone in a workspace.
import type { BonArgs } from '../../adws/registry.js';
import fs from 'node:fs';
import { ADW_NAME, bonPhases } from '../../adws/adw_bon.js';
import { BonSession, type BonAdwOptions } from '../bon/session.js';
import { MAX_ARMS, validateArms } from '../bon/check.js';
import { parseUsd, type BonPolicy } from '../bon/spend/watch.js';
import type { JudgeSetup } from '../bon/judge.js';
import { parseDuration } from '../contract/duration.js';
import { UsageError } from '../contract/errors.js';
import { createPiHarness } from '../harness/pi.js';
import { gateCommands, roleConfig, setupCommand } from '../config/roster.js';
import { routeModelFlag } from '../config/routes.js';
import { Run } from '../engine/runner.js';
import type { Sandbox } from '../sandbox/policy.js';
import { preparedRun, type PreparedBon } from './prepared.js';
import { agentSetup, gateEnv, runPi, specFromInvocation, type CommandFlags, type Workspace } from './workspace.js';
import { EXIT } from '../contract/exit.js';

export type { BonArgs } from '../../adws/registry.js';

export function bonArgs(
  spec: string | undefined,
  flags: CommandFlags & {
    arms?: number;
    models?: string;
    apply?: boolean;
    'in-place'?: boolean;
    unsandboxed?: boolean;
    concurrency?: number;
    'max-cost'?: string;
    'stop-after-green'?: number;
    deadline?: string;
    yes?: boolean;
    judge?: boolean;
  },
): BonArgs {
  if (!spec || !spec.trim()) throw new UsageError('missing spec: factory bon <spec.md> [--arms 3] [--models a,b,c]');
  const models = (flags.models ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  const arms = validateArms(flags.arms ?? (models.length > 1 ? models.length : 3));
  const inPlace = Boolean(flags['in-place']);
  const concurrency = flags.concurrency;
  if (concurrency !== undefined) {
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_ARMS) {
      throw new UsageError(
        `--concurrency must be a whole number from 1 to ${MAX_ARMS} (got ${Number.isNaN(concurrency) ? 'not a number' : String(concurrency)})`,
      );
    }
    if (inPlace)
      throw new UsageError('--concurrency and --in-place do not go together: in place, the arms run one after another');
  }
  if (inPlace && flags.unsandboxed)
    throw new UsageError(
      '--unsandboxed and --in-place do not go together: in place, the arms work in your tree, with no sandbox',
    );
  return {
    spec,
    arms,
    models,
    apply: Boolean(flags.apply),
    ...(inPlace ? { inPlace } : {}),
    ...(flags.unsandboxed ? { unsandboxed: true } : {}),
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...policyArgs(flags, arms),
  };
}

/** `--max-cost`, `--stop-after-green`, `--deadline`, `--yes`: each checked before anything runs (zero tokens). */
function policyArgs(
  flags: { 'max-cost'?: string; 'stop-after-green'?: number; deadline?: string; yes?: boolean; judge?: boolean },
  arms: number,
): Partial<BonArgs> {
  const out: Partial<BonArgs> = {};
  if (flags['max-cost'] !== undefined) {
    const usd = parseUsd('--max-cost', flags['max-cost']);
    if (typeof usd !== 'number') throw new UsageError(usd.motif);
    out.maxCost = usd;
  }
  const k = flags['stop-after-green'];
  if (k !== undefined) {
    if (!Number.isInteger(k) || k < 1 || k > arms) {
      throw new UsageError(
        `--stop-after-green takes a whole number of arms from 1 to ${arms} (got ${Number.isNaN(k) ? 'not a number' : String(k)})`,
      );
    }
    out.stopAfterGreen = k;
  }
  if (flags.deadline !== undefined) {
    const ms = parseDuration(flags.deadline);
    if (ms === undefined)
      throw new UsageError(
        `--deadline takes a duration such as 90s, 20m or 1h30m (got ${JSON.stringify(flags.deadline)})`,
      );
    out.deadlineMs = ms;
  }
  if (flags.yes) out.yes = true;
  if (flags.judge) out.judge = true;
  return out;
}

/** The run's policy: the flags, else the roster's `bon:` defaults; an arm's cap is the lower of `bon.arm_max_cost` and the builder's own limit. */
function bonPolicy(args: BonArgs, ws: Workspace, roleCap: number | undefined): BonPolicy {
  const roster = ws.roster.bon ?? {};
  const caps = [roster.armMaxCost, roleCap].filter((c): c is number => c !== undefined);
  const policy: BonPolicy = {
    maxCost: args.maxCost ?? roster.maxCost,
    armMaxCost: caps.length > 0 ? Math.min(...caps) : undefined,
    stopAfterGreen: args.stopAfterGreen ?? roster.stopAfterGreen,
    deadlineMs: args.deadlineMs ?? roster.deadlineMs,
    confirmAbove: roster.confirmAbove,
    yes: args.yes,
  };
  return Object.fromEntries(Object.entries(policy).filter(([, v]) => v !== undefined)) as BonPolicy;
}

export type { PreparedBon } from './prepared.js';

/**
 * The OS sandbox the worktree arms run in. None on this machine: refused in one line (exit 2, zero tokens) unless
 * the user said `--unsandboxed`; then none is used, and the run says so.
 */
async function armSandbox(args: BonArgs, env: NodeJS.ProcessEnv): Promise<Sandbox | undefined> {
  const { detectSandbox } = await import('../sandbox/detect.js');
  const probe = await detectSandbox(env);
  if (probe.ok) return args.unsandboxed ? undefined : probe.sandbox;
  if (args.unsandboxed) return undefined;
  throw new UsageError(
    `the arms run in worktrees inside an OS sandbox, and there is none here: ${probe.motif}; fix: ${probe.fix} — or --unsandboxed to run them without it, or --in-place`,
  );
}

export async function prepareBonRun(
  ws: Workspace,
  args: BonArgs,
  flags: CommandFlags,
  run = new Run(ADW_NAME, ws.root),
): Promise<PreparedBon> {
  if (ws.harnessName !== 'pi') throw new UsageError('factory bon needs the pi harness (clones are a pi RPC feature)');
  const setup = agentSetup(ws, 'builder', flags);
  const direct = roleConfig(ws.roster, 'builder')?.auth?.direct ?? false;
  const models = args.models.map((m) => {
    const routed = routeModelFlag(m, { gateway: ws.roster.gateway, direct });
    if ('motif' in routed) throw new UsageError(routed.motif.replace('--model', '--models'));
    return routed.route;
  });
  // --models and --model checked against what pi offers now, before the primer is paid (zero tokens, one `pi --list-models`).
  const { assertModelsOffered } = await import('../doctor/offeredRoutes.js');
  const pi = await runPi(ws);
  const site = { root: ws.root, env: ws.real, dotenv: ws.dotenv, pi };
  await assertModelsOffered(site, models, '--models');
  if (flags.model !== undefined && setup.profile.route)
    await assertModelsOffered(site, [setup.profile.route], '--model');
  run.args = { ...args };
  const sandbox = args.inPlace ? undefined : await armSandbox(args, ws.real);
  const opts: BonAdwOptions = {
    specPath: specFromInvocation(ws, args.spec),
    arms: args.arms,
    models,
    harness: createPiHarness(pi),
    workspace: ws.paths,
    cwd: ws.root,
    builderModel: models[0] ?? setup.profile.route,
    thinking: setup.profile.thinking,
    tools: setup.profile.tools,
    limits: setup.profile.limits,
    payloadCommands: gateCommands(ws.root, ws.roster),
    env: setup.env,
    gateEnv: gateEnv(ws),
    timeoutMs: setup.profile.timeoutMs,
    inPlace: args.inPlace,
    ...(sandbox ? { sandbox } : {}),
    concurrency: args.concurrency,
    setup: setupCommand(ws.root, ws.roster),
    policy: bonPolicy(args, ws, setup.profile.limits.maxCostUsd),
    ...((args.judge ?? ws.roster.bon?.judge) ? { judge: judgeSetup(ws, flags, pi, setup.profile.route) } : {}),
  };
  const session = new BonSession(run, opts);
  const phases = bonPhases(session);
  // The proposal on stdout — unless a patch was applied already (--apply, or `p` on the board): proposing the
  // winner's patch on top of an applied one would fail, or stack two arms' work.
  const output = () => {
    const harvest = run.results.harvest as { apply_command?: string | null } | undefined;
    return appliedIn.has(session) ? undefined : (harvest?.apply_command ?? undefined);
  };
  const prepared = preparedRun(ws, run, phases, output, () => session.close());
  // The outcome is an `apply` event (the headless log, --json and the trace see it); `report` is for a screen.
  const finish = async (exit: number, report?: (line: string) => void): Promise<number> => {
    if (!args.apply) return exit;
    // Nothing verified the best arm: --apply says it applies nothing (an `apply` event), and the exit stays 1.
    if (exit === EXIT.failed && session.ranking?.arms[0]?.unverified) {
      const refused = await applyWinner(session, ws);
      report?.(refused.line);
      return exit;
    }
    if (exit !== EXIT.green) return exit;
    report?.('applying the winner (--apply): checking its paths, then its gates on HEAD in a scratch worktree…');
    const outcome = await applyWinner(session, ws, undefined, args.yes === true);
    report?.(outcome.line);
    // A winner its guards had to refuse something of, and no --yes: nothing applied, said, exit 2 (as a refusal).
    return outcome.applied ? EXIT.green : outcome.needsConsent ? EXIT.infrastructure : EXIT.failed;
  };
  return { ...prepared, kind: 'bon', session, finish };
}

/** The judge's role (`agents.judge` in the roster: its model, tools, limits), on the builder's model by default. */
function judgeSetup(
  ws: Workspace,
  flags: CommandFlags,
  pi: Parameters<typeof createPiHarness>[0],
  builderRoute: string | undefined,
): JudgeSetup {
  // --model names the builder's route: the judge keeps its own (or the builder's).
  const judge = agentSetup(ws, 'judge', { ...flags, model: undefined });
  return {
    harness: createPiHarness(pi),
    model: judge.profile.route ?? builderRoute,
    thinking: judge.profile.thinking,
    tools: judge.profile.tools,
    limits: judge.profile.limits,
    timeoutMs: judge.profile.timeoutMs,
    env: judge.env,
    retries: 1,
  };
}

/** The bon sessions whose tree has received an arm's patch. */
const appliedIn = new WeakSet<BonSession>();

/**
 * Apply an arm's patch (the winner's by default) after verifying its paths and its gates on the current HEAD.
 * The outcome, applied or not, is an `apply` event of the run.
 */
/**
 * `consent`: the user said yes to an arm its guards had to refuse something of (`--yes`, or `p` twice on the
 * board); without it such an arm is not applied and `needsConsent` says a yes would apply it.
 */
export async function applyWinner(
  session: BonSession,
  ws: Workspace,
  arm?: number,
  consent = false,
): Promise<{ applied: boolean; line: string; needsConsent?: boolean }> {
  const outcome = await verifyAndApply(session, ws, arm, consent);
  if (outcome.applied) appliedIn.add(session);
  session.run.emit({
    type: 'apply',
    adwId: session.run.adwId,
    ts: Date.now(),
    ...(outcome.arm !== undefined ? { arm: outcome.arm } : {}),
    applied: outcome.applied,
    line: outcome.line,
  });
  return { applied: outcome.applied, line: outcome.line, ...(outcome.needsConsent ? { needsConsent: true } : {}) };
}

/**
 * Without an arm named, the harvest's winner (its one ranking: the judge's order and the baseline's credit
 * included), and nothing when there is none: an unverified arm is applied only when the user names it.
 */
async function verifyAndApply(
  session: BonSession,
  ws: Workspace,
  arm: number | undefined,
  consent: boolean,
): Promise<{ applied: boolean; line: string; arm?: number; needsConsent?: boolean }> {
  const { applyLine, applyVerified } = await import('../bon/patch/apply.js');
  const { applyCommand, cautionOf, unverifiedReason } = await import('../bon/harvest/rank.js');
  const ranking = session.ranking;
  const chosen = arm !== undefined ? session.arms.get(arm) : ranking?.winner;
  if (arm === undefined && chosen === undefined) {
    const best = ranking?.arms[0];
    if (best?.unverified)
      return {
        applied: false,
        line: `no verified arm to apply: arm ${best.arm} is unverified (${unverifiedReason(best)}) — name it to apply it anyway`,
      };
    return { applied: false, line: ranking ? 'no green arm to apply' : 'apply waits for the harvest' };
  }
  if (!chosen?.patchFile)
    return {
      applied: false,
      arm,
      line: arm !== undefined ? `arm ${arm} has no patch to apply` : 'no green arm to apply',
    };
  // A red arm (its gates, an act its guards blocked, its cap…) is not applied from the board: the command says how.
  if (!chosen.green && !chosen.unverified) {
    const reason = [chosen.failure, chosen.motif].filter((part) => part !== undefined).join(': ') || 'red';
    return {
      applied: false,
      arm: chosen.arm,
      line: `arm ${chosen.arm} is red (${reason}): not applied — apply it anyway with ${applyCommand(session.run.adwId, chosen.arm)} --force`,
    };
  }
  const caution = cautionOf(chosen);
  if (caution !== undefined && !consent) {
    return {
      applied: false,
      arm: chosen.arm,
      needsConsent: true,
      line: `arm ${chosen.arm}: ${caution} — not applied without a yes: ${applyCommand(session.run.adwId, chosen.arm)} --yes`,
    };
  }
  const { availableSandbox } = await import('../sandbox/detect.js');
  const sandbox = await availableSandbox(ws.real);
  const outcome = await applyVerified({
    ...(sandbox ? { sandbox } : {}),
    cwd: ws.root,
    patchFile: chosen.patchFile,
    sha256: chosen.patchSha256,
    gates: gateCommands(ws.root, ws.roster),
    env: gateEnv(ws),
    runTag: session.run.adwId,
    excuse: session.baseline.preexisting,
  });
  return {
    applied: outcome.applied,
    arm: chosen.arm,
    line: applyLine(
      chosen.arm,
      chosen.patchFile,
      ws.invokedIn,
      outcome,
      chosen.unverified ? unverifiedReason(chosen) : undefined,
    ),
  };
}

export function readArmPatch(session: BonSession, arm: number): string {
  const file = session.arms.get(arm)?.patchFile;
  if (!file) return '';
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
