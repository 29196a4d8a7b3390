// A run's CI report: its events folded into one plain structure (collectReport), written as the Markdown that
// GitHub shows for a job ($GITHUB_STEP_SUMMARY) and as JUnit XML that test reporters read (ciReportFormat.ts).
// The fold is pure and reads the run log as it is: a run cut short (no harvest, no run_finished) still reports
// what happened, and fields it does not know of are ignored, or read generically when they say something.
import fs from 'node:fs';
import path from 'node:path';
import { cautionOf, unverifiedReason, whyOf } from '../bon/harvest/rank.js';
import type { ArmRank, PhasePlan, RunEvent } from '../contract/events.js';
import {
  junitReport,
  markdownReport,
  type ArmReport,
  type BonReport,
  type CiReport,
  type GateGroup,
  type GateRow,
  type PhaseReport,
  type Verdict,
} from './ciReportFormat.js';
import { finiteCost, finiteCount } from '../contract/numbers.js';
import { EXIT } from '../contract/exit.js';

export { junitReport, markdownReport } from './ciReportFormat.js';
export type {
  ArmReport,
  ArmStatus,
  BonReport,
  CiReport,
  GateGroup,
  GateRow,
  PhaseReport,
  PhaseStatus,
  Verdict,
} from './ciReportFormat.js';

export type ReportKind = 'md' | 'junit';

type Of<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

/** Seconds are clamped like costs: a log edited by hand (or torn) must not print NaN or Infinity. */
const seconds = finiteCost;

/** A field newer cores may add to an event: read without trusting its type. */
function extra(event: RunEvent, key: string): unknown {
  return (event as unknown as Record<string, unknown>)[key];
}

interface PhaseState extends PhaseReport {
  /** Started and not settled yet: at the end of the log it did not finish. */
  open: boolean;
}

function newPhase(name: string, plan?: Partial<PhasePlan>): PhaseState {
  return {
    name,
    kind: plan?.kind ?? 'agent',
    status: 'skipped',
    attempts: 0,
    maxAttempts: finiteCount(plan?.attempts) || 1,
    seconds: 0,
    tokens: 0,
    cost: 0,
    ...(plan?.model ? { model: plan.model } : {}),
    ...(plan?.arm !== undefined ? { arm: plan.arm } : {}),
    open: false,
  };
}

/** The run's events folded into the report: pure, in one pass, whatever order of phases the run took. */
export function collectReport(events: readonly RunEvent[]): CiReport {
  const phases = new Map<string, PhaseState>();
  const order: string[] = [];
  const gates = new Map<string, Map<string, GateRow>>();
  const patches = new Map<number, Of<'arm_patch'>>();
  let started: Of<'run_started'> | undefined;
  let finished: Of<'run_finished'> | undefined;
  let harvest: Of<'harvest'> | undefined;
  let proposal: string | undefined;
  const applies: BonReport['applies'] = [];

  const phase = (name: string, plan?: Partial<PhasePlan>): PhaseState => {
    let p = phases.get(name);
    if (!p) {
      p = newPhase(name, plan);
      phases.set(name, p);
      order.push(name);
    }
    return p;
  };
  const attempted = (p: PhaseState, attempt: unknown) => (p.attempts = Math.max(p.attempts, finiteCount(attempt)));

  for (const e of events) {
    switch (e.type) {
      case 'run_started':
        started = e;
        for (const plan of e.phases ?? []) phase(plan.name, plan);
        break;
      case 'phase_planned': {
        // An arm added live goes before the phase it was planned before (the harvest), as the board shows it.
        if (phases.has(e.phase.name)) break;
        phase(e.phase.name, e.phase);
        const at = e.before === undefined ? -1 : order.indexOf(e.before);
        if (at >= 0) order.splice(at, 0, order.pop()!);
        break;
      }
      case 'phase_started': {
        // A phase sent back by its judge starts again: its last settle is its verdict.
        const p = phase(e.phase, { kind: e.kind });
        p.kind = e.kind;
        p.open = true;
        break;
      }
      case 'attempt_started': {
        const p = phase(e.phase);
        attempted(p, e.attempt);
        p.maxAttempts = Math.max(p.maxAttempts, finiteCount(e.attempts));
        if (e.model) p.model = e.model;
        break;
      }
      case 'attempt_failed':
        attempted(phase(e.phase), e.attempt);
        break;
      case 'fallback':
        // The relaunch runs on the fallback: the model that finishes the phase is the one to show.
        phase(e.phase).model = e.to;
        break;
      case 'phase_ok':
      case 'phase_failed': {
        const p = phase(e.phase, { kind: e.kind });
        p.kind = e.kind;
        p.open = false;
        // Figures are the phase's running totals (every attempt, every send-back); seconds are per settle.
        p.seconds = seconds(p.seconds + seconds(e.seconds));
        p.tokens = finiteCount(e.tokens);
        p.cost = finiteCost(e.cost);
        if (e.type === 'phase_ok') {
          p.status = 'ok';
          attempted(p, e.attempt);
          delete p.motif;
          delete p.failure;
        } else {
          p.status = 'failed';
          p.motif = String(e.motif ?? 'failed');
          if (e.failure) p.failure = e.failure;
          else delete p.failure;
        }
        break;
      }
      case 'gate_result': {
        // A gate runs again after a send-back: the report keeps its last verdict, and how often it ran.
        const group = gates.get(e.phase) ?? new Map<string, GateRow>();
        gates.set(e.phase, group);
        const runs = (group.get(e.gate)?.runs ?? 0) + 1;
        group.delete(e.gate);
        const preexisting = extra(e, 'preexisting');
        group.set(e.gate, {
          gate: e.gate,
          ok: e.ok === true,
          seconds: seconds(e.seconds),
          runs,
          ...(e.motif ? { motif: String(e.motif) } : {}),
          ...(typeof preexisting === 'boolean' ? { preexisting } : {}),
        });
        break;
      }
      case 'arm_patch':
        patches.set(e.arm, e);
        phase(e.phase).arm ??= e.arm;
        break;
      case 'harvest':
        harvest = e;
        for (const rank of e.ranking ?? []) phase(rank.phase).arm ??= rank.arm;
        break;
      case 'proposal':
        proposal = e.command;
        break;
      case 'apply':
        applies.push({ ...(e.arm !== undefined ? { arm: e.arm } : {}), applied: e.applied, line: String(e.line) });
        break;
      case 'run_finished':
        finished = e;
        break;
      default:
        break;
    }
  }

  const list: PhaseReport[] = order.map((name) => {
    const { open, ...p } = phases.get(name)!;
    // Started and never settled: the log ends inside it (a killed cockpit). Not green, so not skipped either.
    return open ? { ...p, status: 'failed', motif: 'unfinished: the run log ends while this phase ran' } : p;
  });
  const tokens = finished ? finiteCount(finished.tokens) : list.reduce((sum, p) => finiteCount(sum + p.tokens), 0);
  const cost = finished ? finiteCost(finished.cost) : list.reduce((sum, p) => finiteCost(sum + p.cost), 0);
  const budget = finished ? extra(finished, 'budget') : undefined;
  const report: CiReport = {
    adwId: started?.adwId ?? events[0]?.adwId ?? '',
    adwName: started?.adwName ?? '',
    cwd: started?.cwd ?? '',
    verdict: verdictOf(finished, budget),
    ...(finished ? { exit: finished.exit, seconds: seconds(finished.seconds) } : {}),
    tokens,
    cost,
    interrupted: finished?.interrupted === true,
    ...(finished?.failedPhase ? { failedPhase: finished.failedPhase } : {}),
    ...(typeof budget === 'string' && budget ? { budget } : {}),
    phases: list,
    gates: [...gates].map(([name, rows]): GateGroup => ({ phase: name, gates: [...rows.values()] })),
  };
  const bon = bonOf(report.phases, patches, harvest, { proposal, applies });
  if (bon) report.bon = bon;
  return report;
}

/** No run_finished: the log ends mid-run. A budget stop says so even when the core also marks it interrupted. */
function verdictOf(finished: Of<'run_finished'> | undefined, budget: unknown): Verdict {
  if (!finished) return 'unfinished';
  if (typeof budget === 'string' && budget) return 'budget';
  if (finished.interrupted) return 'interrupted';
  return finished.exit === EXIT.green ? 'green' : 'failed';
}

/** The arm as its phase left it, for a run that never reached (or never finished) its harvest. */
function armFromPhase(p: PhaseReport, patch: Of<'arm_patch'> | undefined): ArmReport {
  // A race policy (enough arms green, the deadline) stopped it: not a fault of the arm, like the user's interrupt.
  const stopped = p.failure === 'interrupted' || p.failure === 'race' || p.motif?.startsWith('unfinished:');
  const status = p.status === 'ok' ? 'green' : p.status === 'skipped' ? 'not-run' : stopped ? 'interrupted' : 'red';
  return {
    arm: p.arm!,
    phase: p.name,
    ...(p.model ? { model: p.model } : {}),
    status,
    ...(p.motif ? { motif: p.motif } : {}),
    ...(p.failure ? { failure: p.failure } : {}),
    tokens: p.tokens,
    cost: p.cost,
    seconds: p.seconds,
    patchBytes: finiteCount(patch?.bytes),
    files: patch ? [...(patch.files ?? [])] : [],
    winner: false,
  };
}

function armFromRank(
  rank: ArmRank,
  i: number,
  p: PhaseReport | undefined,
  patch: Of<'arm_patch'> | undefined,
  winner: number | undefined,
): ArmReport {
  // The harvest's verdict stands (it may turn a green arm red: a patch changed after it was judged); the failure
  // kind says whether a red arm was stopped rather than judged: the rank's own (newer cores put it there, and the
  // files too: read as plain data when present), else its phase's.
  const own = rank as { failure?: unknown; files?: unknown };
  const failure = typeof own.failure === 'string' ? own.failure : p?.failure;
  const files = Array.isArray(own.files) ? own.files.map(String) : [...(patch?.files ?? [])];
  const status = rank.green
    ? 'green'
    : rank.unverified
      ? 'unverified'
      : failure === 'interrupted' || failure === 'race'
        ? 'interrupted'
        : 'red';
  return {
    arm: rank.arm,
    phase: rank.phase,
    ...(rank.model || p?.model ? { model: rank.model ?? p?.model } : {}),
    status,
    ...(rank.motif ? { motif: String(rank.motif) } : rank.unverified ? { motif: unverifiedReason(rank) } : {}),
    ...(failure && !rank.green ? { failure } : {}),
    tokens: finiteCount(rank.tokens),
    cost: finiteCost(rank.cost),
    seconds: seconds(rank.seconds),
    patchBytes: finiteCount(rank.patchBytes),
    files,
    ...(rank.patchFile ? { patchFile: rank.patchFile } : {}),
    rank: i + 1,
    winner: winner !== undefined && rank.arm === winner,
    ...(cautionOf(rank, 5) !== undefined ? { tried: cautionOf(rank, 5) } : {}),
  };
}

function bonOf(
  phases: readonly PhaseReport[],
  patches: ReadonlyMap<number, Of<'arm_patch'>>,
  harvest: Of<'harvest'> | undefined,
  outcome: { proposal?: string; applies: BonReport['applies'] },
): BonReport | undefined {
  const armPhases = phases.filter((p) => p.arm !== undefined);
  if (armPhases.length === 0 && !harvest && patches.size === 0) return undefined;
  const byName = new Map(phases.map((p) => [p.name, p]));
  const ranking = harvest?.ranking ?? [];
  const arms = ranking.map((rank, i) =>
    armFromRank(rank, i, byName.get(rank.phase), patches.get(rank.arm), harvest?.winner),
  );
  // Arms the harvest did not rank (never started, or no harvest at all) follow, in plan order; an arm_patch
  // names its phase as an arm (see the fold), so an arm known only by its patch is among them.
  for (const p of armPhases) if (!arms.some((a) => a.arm === p.arm)) arms.push(armFromPhase(p, patches.get(p.arm!)));
  const prime = byName.get('prime');
  const primer = harvest ? harvest.primer : prime ? { tokens: prime.tokens, cost: prime.cost } : undefined;
  const applyCommand = harvest?.applyCommand ?? outcome.proposal;
  return {
    harvested: harvest !== undefined,
    arms,
    ...(harvest?.winner !== undefined ? { winner: harvest.winner } : {}),
    // The harvest's own why: the judge's reason when its order stood (the ranking follows it).
    ...(harvest ? { why: whyOf({ ...harvest, ranking }) } : {}),
    ...(primer ? { primer: { tokens: finiteCount(primer.tokens), cost: finiteCost(primer.cost) } } : {}),
    ...(applyCommand ? { applyCommand } : {}),
    ...(harvest?.harvestFile ? { harvestFile: harvest.harvestFile } : {}),
    applies: outcome.applies,
  };
}

/** Write the asked reports into dir (created if missing): `report.md`, `junit.xml`. Returns their paths. */
export function writeReports(kinds: readonly ReportKind[], report: CiReport, dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  return kinds.map((kind) => {
    const file = path.join(dir, kind === 'md' ? 'report.md' : 'junit.xml');
    fs.writeFileSync(file, kind === 'md' ? markdownReport(report) : junitReport(report));
    return file;
  });
}

const KINDS: readonly ReportKind[] = ['md', 'junit'];

/** `--report md,junit`: comma-separated, trimmed, deduplicated; an empty or unknown kind is refused in one line. */
export function parseReportKinds(value: string): ReportKind[] | { motif: string } {
  const kinds: ReportKind[] = [];
  for (const part of value.split(',').map((s) => s.trim())) {
    if (!(KINDS as readonly string[]).includes(part))
      return { motif: `--report takes md, junit or both (got ${JSON.stringify(part === '' ? value : part)})` };
    if (!kinds.includes(part as ReportKind)) kinds.push(part as ReportKind);
  }
  return kinds;
}
