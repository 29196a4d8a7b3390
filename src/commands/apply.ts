// `factory apply <adw_id> [arm]`: apply a finished best-of-N run's patch (the winner's, or the arm named), the
// way the board's `p` and `--apply` do: the sealed bytes only (the sha256 harvest.json recorded when the arms
// had ended), paths and modes checked, the gates green on the current HEAD in a scratch worktree, then
// `git apply --index`. The outcome joins the run's log as an `apply` event, so `factory show` tells it.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError, errorMessage } from '../contract/errors.js';
import type { RunEvent } from '../contract/events.js';
import { gateCommands } from '../config/roster.js';
import { armPatchFile } from '../bon/patch/patch.js';
import { applyCommand, cautionOf, unverifiedReason } from '../bon/harvest/rank.js';
import type { GateSignature } from '../gates/baseline.js';
import { redactDeep } from '../contract/redact.js';
import { runLogPath } from '../trace/runLog.js';
import { gateEnv, type Workspace } from './workspace.js';
import { harvestFile } from '../config/paths.js';
import { EXIT } from '../contract/exit.js';

const ADW_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const SHA256 = /^[0-9a-f]{64}$/;

export interface ApplyArgs {
  adwId: string;
  arm?: number;
  /** `--force`: apply an arm that ended red (its gates, an act, its cap…) — only ever when named. */
  force?: boolean;
  /** `--yes`: apply an arm its guards had to refuse something of (harvest.json's `tried`). */
  yes?: boolean;
}

/** The command's arguments, or a UsageError (exit 2) naming what is wrong. Pure. */
export function applyArgs(args: string[], flags: { force?: boolean; yes?: boolean } = {}): ApplyArgs {
  if (args.length < 1 || args.length > 2) throw new UsageError('usage: factory apply <adw_id> [arm] [--force]');
  const [adwId, armText] = args as [string, string | undefined];
  if (!ADW_ID.test(adwId)) throw new UsageError(`not an adw id: ${JSON.stringify(adwId)}`);
  const yes = flags.yes ? { yes: true } : {};
  if (armText === undefined) {
    if (flags.force)
      throw new UsageError(`--force applies a red arm only when it is named: factory apply ${adwId} <arm> --force`);
    return { adwId, ...yes };
  }
  const arm = /^[1-9]\d?$/.test(armText) ? Number(armText) : NaN;
  if (!Number.isInteger(arm)) throw new UsageError(`not an arm number: ${JSON.stringify(armText)} (arms are 1, 2, 3…)`);
  return { adwId, arm, ...(flags.force ? { force: true } : {}), ...yes };
}

/** Why a harvested arm is red, in a few words: its failure kind and its motif, as harvest.json keeps them. */
export function redReason(entry: { failure?: unknown; motif?: unknown }): string {
  const kind = typeof entry.failure === 'string' ? entry.failure : undefined;
  const motif = typeof entry.motif === 'string' ? entry.motif : undefined;
  return [kind, motif].filter((part) => part !== undefined).join(': ') || 'red';
}

interface SealedArm {
  arm: number;
  green: boolean;
  /** harvest.json's verdict word says nothing verified it (it is applied only because it was named). */
  unverified: boolean;
  patchFile: string;
  sha256: string;
}

type HarvestArmEntry = Record<string, unknown>;

function armEntry(arms: unknown, arm: unknown): HarvestArmEntry | undefined {
  const list = Array.isArray(arms) ? (arms as unknown[]) : [];
  return list.find(
    (a): a is HarvestArmEntry => a !== null && typeof a === 'object' && (a as { arm?: unknown }).arm === arm,
  );
}

/** Without an arm named and no winner: why (an unverified best arm is named, with the command that applies it). */
function noWinner(adwId: string, arms: unknown): UsageError {
  const first = Array.isArray(arms) ? (arms as unknown[])[0] : undefined;
  const best = first !== null && typeof first === 'object' ? (first as HarvestArmEntry) : undefined;
  if (best?.verdict === 'unverified' && typeof best.arm === 'number') {
    const excused = Array.isArray(best.excused) ? best.excused.filter((g): g is string => typeof g === 'string') : [];
    return new UsageError(
      `run ${adwId} has no verified arm: arm ${best.arm} is unverified (${unverifiedReason({ excused })}); apply it only knowingly: factory apply ${adwId} ${best.arm}`,
    );
  }
  return new UsageError(`run ${adwId} has no green arm to apply: name one (factory apply ${adwId} <arm>)`);
}

/** The baseline harvest.json recorded (gates red on HEAD, with what they said), read defensively. */
export function baselineOf(harvest: unknown): Map<string, GateSignature> {
  const out = new Map<string, GateSignature>();
  const list =
    harvest !== null && typeof harvest === 'object' ? (harvest as { baseline?: unknown }).baseline : undefined;
  for (const g of Array.isArray(list) ? (list as unknown[]) : []) {
    const { gate, ending, lines } = (g ?? {}) as { gate?: unknown; ending?: unknown; lines?: unknown };
    if (typeof gate !== 'string' || typeof ending !== 'string' || !Array.isArray(lines)) continue;
    out.set(gate, { ending, lines: new Set(lines.filter((l): l is string => typeof l === 'string')) });
  }
  return out;
}

/** The arm to apply, as harvest.json seals it; a UsageError for anything missing, malformed or out of place. */
export function sealedArm(bonDir: string, harvest: unknown, args: ApplyArgs): SealedArm {
  const file = harvestFile(bonDir);
  if (harvest === null || typeof harvest !== 'object' || Array.isArray(harvest))
    throw new UsageError(`${file} is not a harvest record`);
  const record = harvest as { adw_id?: unknown; winner?: unknown; arms?: unknown };
  if (record.adw_id !== args.adwId)
    throw new UsageError(`${file} belongs to another run (${JSON.stringify(record.adw_id)})`);
  // The harvest's one ranking decided the winner; without an arm named, only that one (never an unverified arm).
  const wanted = args.arm ?? record.winner;
  if (typeof wanted !== 'number') throw noWinner(args.adwId, record.arms);
  const entry = armEntry(record.arms, wanted);
  if (!entry) throw new UsageError(`run ${args.adwId} has no arm ${wanted}`);
  if (typeof entry.patch_file !== 'string' || entry.patch_bytes === 0)
    throw new UsageError(`arm ${wanted} of run ${args.adwId} has no patch to apply`);
  // harvest.json is a file on disk: it may only point at the arm's own patch in the run's own folder.
  const expected = armPatchFile(bonDir, wanted);
  if (path.resolve(entry.patch_file) !== path.resolve(expected))
    throw new UsageError(`${file} names a patch outside the run's folder for arm ${wanted}: refused`);
  if (typeof entry.patch_sha256 !== 'string' || !SHA256.test(entry.patch_sha256)) {
    throw new UsageError(
      `arm ${wanted} of run ${args.adwId} has no seal (sha256) in ${file}: it was harvested by an older factory; run the spec again`,
    );
  }
  // A red arm (gates, an act its guards blocked, its cap…) is applied only on purpose; unverified is not red.
  const red = entry.verdict === 'red' || (entry.verdict === undefined && entry.green !== true);
  if (red && !args.force) {
    throw new UsageError(
      `arm ${wanted} of run ${args.adwId} is red (${redReason(entry)}): not applied — apply it anyway with ${applyCommand(args.adwId, wanted)} --force`,
    );
  }
  // An arm its guards had to refuse something of, or whose files go beyond the spec: applied on a yes only.
  const strings = (list: unknown) =>
    Array.isArray(list) ? list.filter((t): t is string => typeof t === 'string') : [];
  const tried = strings(entry.tried);
  const caution = cautionOf({
    tried,
    triedCount: typeof entry.tried_count === 'number' ? entry.tried_count : tried.length,
    beyond: strings(entry.beyond_spec),
  });
  if (caution !== undefined && !args.yes && !args.force) {
    throw new UsageError(
      `arm ${wanted} of run ${args.adwId}: ${caution} — not applied without a yes: ${applyCommand(args.adwId, wanted)} --yes`,
    );
  }
  return {
    arm: wanted,
    green: entry.green === true,
    unverified: entry.verdict === 'unverified',
    patchFile: expected,
    sha256: entry.patch_sha256,
  };
}

function readHarvest(bonDir: string, adwId: string): unknown {
  const file = harvestFile(bonDir);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(
      `no harvest for run ${adwId} (${file} is missing): factory apply takes the id of a finished factory bon run`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${file} is not valid JSON: ${errorMessage(error)}`);
  }
}

/** The outcome joins the run's log; the trace index picks it up at its next sync. */
function recordApply(ws: Workspace, adwId: string, event: RunEvent): void {
  const file = runLogPath(ws.paths, adwId);
  if (fs.existsSync(file)) fs.appendFileSync(file, `${JSON.stringify(event)}\n`);
}

export async function applyOutput(
  ws: Workspace,
  args: ApplyArgs,
  json = false,
): Promise<{ stdout: string; exit: number }> {
  const bonDir = path.join(ws.paths.dataDir, 'bon', args.adwId);
  const harvest = readHarvest(bonDir, args.adwId);
  const chosen = sealedArm(bonDir, harvest, args);
  const [{ applyLine, applyVerified }, { availableSandbox }] = await Promise.all([
    import('../bon/patch/apply.js'),
    import('../sandbox/detect.js'),
  ]);
  const sandbox = await availableSandbox(ws.real);
  const outcome = await applyVerified({
    ...(sandbox ? { sandbox } : {}),
    cwd: ws.root,
    patchFile: chosen.patchFile,
    sha256: chosen.sha256,
    gates: gateCommands(ws.root, ws.roster),
    env: gateEnv(ws),
    runTag: args.adwId,
    excuse: baselineOf(harvest),
  });
  // A gate's motif may quote what a test printed: through the workspace's redactor like every line shown or kept.
  const line = ws.redact(
    applyLine(
      chosen.arm,
      chosen.patchFile,
      ws.invokedIn,
      outcome,
      chosen.unverified ? unverifiedReason({ excused: outcome.excused }) : undefined,
    ),
  );
  recordApply(ws, args.adwId, {
    type: 'apply',
    adwId: args.adwId,
    ts: Date.now(),
    arm: chosen.arm,
    applied: outcome.applied,
    line,
  });
  const stdout = json
    ? `${JSON.stringify(redactDeep(ws.redact, { adw_id: args.adwId, arm: chosen.arm, applied: outcome.applied, line, gates: outcome.gates }))}\n`
    : `${line}\n`;
  // A gate that could not run (its program missing, not executable) says nothing of the patch: the machine's
  // failure, exit 2 as bon and build give it before any token, not the red of a patch its gates refused.
  const setup = !outcome.applied && outcome.gates?.some((g) => g.outcome === 'setup');
  return { stdout, exit: outcome.applied ? EXIT.green : setup ? EXIT.infrastructure : EXIT.failed };
}
