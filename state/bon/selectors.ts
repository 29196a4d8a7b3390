// What the bon views derive from the bon state, as pure functions: the arms with everything the board shows,
// which arm is selected or running, the primer's account, "why #1" and the harvest's proposal. The reducers use
// the same ones, so what a key acts on is what the board highlights.

import type { ArmRank } from '../../src/contract/events.js';
import { cautionOf, primerLine as corePrimerLine, unverifiedReason, whyOf } from '../../src/bon/harvest/rank.js';
import { formatCost, formatTokens } from '../../src/contract/format.js';
import { flatLine } from '../../src/contract/text.js';
import {
  extrasOf,
  HARVEST_PHASE,
  PRIMER_PHASE,
  type ArmExtras,
  type ArmPatch,
  type ArmSpendState,
  type BonState,
} from './state.js';
import { baselineLine, forecastAbove, forecastLine } from '../../src/bon/spend/lines.js';
import { runCapMotif } from '../../src/bon/spend/watch.js';
import { isLive, phaseSeconds } from '../run/selectors.js';
import type { GateReport, PhaseState, RunState } from '../run/state.js';

/** `unverified`: its work ended, but every gate was red on HEAD the same way — nothing verified it (not green). */
export type ArmStatus = 'pending' | 'running' | 'green' | 'unverified' | 'red' | 'aborted' | 'crashed';

export interface ArmView {
  arm: number;
  phase: string;
  model?: string;
  status: ArmStatus;
  /** The abort was asked and the arm still runs. */
  aborting: boolean;
  turns: number;
  tokens: number;
  cost: number;
  /** Measured when finished, ticking while running; undefined before it starts. */
  seconds?: number;
  patch?: ArmPatch;
  gates: GateReport[];
  motif?: string;
  lastTool?: string;
  /** 1-based place in the harvest ranking. */
  rank?: number;
  winner: boolean;
  /** The arm's cap and where it stands against it (told to wrap up, at the cap, paused there, raised). */
  cap?: number;
  spend?: ArmSpendState;
  /** Gates red on HEAD that it turned green. */
  fixed?: string[];
  /** Gates red on HEAD that it left red the same way (not held against it). */
  excused?: string[];
  /** A pending arm that waits for a slot, in words (`waits for a slot: 4 at once on this machine…`). */
  waiting?: string;
  /** Why to apply it only on a yes, as one line (`beyond the spec: …; tried: …`), once the harvest ranked it. */
  tried?: string;
}

function statusOf(phase: PhaseState, extras: ArmExtras, rank: ArmRank | undefined): ArmStatus {
  if (phase.status === 'pending' || phase.status === 'skipped') return 'pending';
  if (isLive(phase)) return 'running';
  // The core's verdict (the harvest's ranking, else the arm's settled result) says nothing verified it.
  if (rank?.unverified || (phase.status === 'ok' && phase.unverified === true && rank?.green !== true))
    return 'unverified';
  // A gate red on HEAD the same way is not held against the arm (the baseline): only the others make it red.
  const heldRed = (phase.gates ?? []).some((gate) => !gate.ok && !gate.preexisting);
  if (phase.status === 'failed' || rank?.green === false || heldRed) {
    if (extras.abortRequested || phase.failure === 'aborted' || phase.failure === 'interrupted') return 'aborted';
    // A red gate is the arm's own failure, whatever its output says (`npm test` exited 1…).
    if (heldRed) return 'red';
    if (phase.failure === 'crashed' || phase.failure === 'exit') return 'crashed';
    return 'red';
  }
  return 'green';
}

function redGateMotif(gates: readonly GateReport[]): string | undefined {
  const red = gates.find((gate) => !gate.ok && !gate.preexisting) ?? gates.find((gate) => !gate.ok);
  if (red === undefined) return undefined;
  return red.motif ? flatLine(red.motif) : `${red.gate} failed`;
}

/** The arms in plan order, with everything the board shows. `now` drives the running arm's clock. */
export function armsOf(state: BonState, now: number): ArmView[] {
  const ranking = state.bon.harvest?.ranking ?? [];
  const views: ArmView[] = [];
  for (const phase of state.phases) {
    const arm = phase.arm;
    if (arm === undefined) continue;
    const extras = extrasOf(state.bon, phase.name);
    const rankIndex = ranking.findIndex((rank) => rank.arm === arm);
    const rank = rankIndex === -1 ? undefined : ranking[rankIndex];
    const status = statusOf(phase, extras, rank);
    const gates = phase.gates ?? [];
    const motif =
      status === 'green' || status === 'pending' || status === 'running'
        ? undefined
        : status === 'unverified'
          ? unverifiedReason({
              excused: rank?.excused ?? gates.filter((gate) => gate.preexisting).map((gate) => gate.gate),
            })
          : flatLine(phase.motif ?? rank?.motif ?? redGateMotif(gates) ?? (status === 'aborted' ? 'aborted' : 'red'));
    views.push({
      arm,
      phase: phase.name,
      model: phase.model ?? rank?.model,
      status,
      aborting: extras.abortRequested && status === 'running',
      turns: extras.turns,
      tokens: phase.tokens,
      cost: phase.cost,
      seconds: phaseSeconds(phase, now),
      patch: extras.patch,
      gates,
      motif,
      lastTool: extras.lastTool,
      rank: rank ? rankIndex + 1 : undefined,
      winner: state.bon.harvest?.winner === arm,
      ...(extras.cap !== undefined ? { cap: extras.cap } : {}),
      ...(extras.spend !== undefined && status === 'running' ? { spend: extras.spend } : {}),
      ...(rank?.fixed?.length ? { fixed: rank.fixed } : {}),
      ...(rank?.excused?.length ? { excused: rank.excused } : {}),
      ...(rank && cautionOf(rank) !== undefined ? { tried: cautionOf(rank) } : {}),
      ...(status === 'pending' && phase.waiting !== undefined ? { waiting: phase.waiting } : {}),
    });
  }
  return views;
}

export function primerOf(state: RunState): PhaseState | undefined {
  return state.phases.find((phase) => phase.name === PRIMER_PHASE);
}

/** The arm the board highlights and `p` / `enter` act on: chosen, else the winner, else the running one, else the first. */
export function selectedArm(state: BonState): number | undefined {
  const arms = state.phases.map((phase) => phase.arm).filter((arm): arm is number => arm !== undefined);
  const chosen = state.bon.ui.selected;
  if (chosen !== undefined && arms.includes(chosen)) return chosen;
  const winner = state.bon.harvest?.winner;
  if (winner !== undefined && arms.includes(winner)) return winner;
  const running = state.phases.find((phase) => phase.arm !== undefined && isLive(phase));
  if (running) return running.arm;
  return arms[0];
}

/** The one arm running now (arms run one after another on the primer's pi process). */
export function runningArm(state: BonState): number | undefined {
  const phase = state.phases.find((p) => p.arm !== undefined && isLive(p));
  return phase?.arm;
}

/** The harvest phase has begun or is over, or its event arrived: the arm list is closed. */
export function harvestBegun(state: BonState): boolean {
  if (state.bon.harvest !== undefined || state.exit !== undefined) return true;
  const harvest = state.phases.find((phase) => phase.name === HARVEST_PHASE);
  return harvest !== undefined && harvest.status !== 'pending';
}

/** The primer paid once (SPEC 3.7): live, its figures; after the harvest, the core's full account. */
export function primerLine(primer: { tokens: number; cost: number }, arms: number, harvested: boolean): string {
  if (!harvested || arms < 2)
    return `primer: ${formatTokens(primer.tokens)} tokens, ${formatCost(primer.cost)}, paid once`;
  return corePrimerLine(primer, arms);
}

/**
 * The primer's line under the board, once the primer has started: its live figures, or after the harvest the
 * core's account. Undefined while the primer waits.
 */
export function primerTextOf(state: BonState, arms: number): string | undefined {
  const harvest = state.bon.harvest;
  const primer = primerOf(state);
  const figures = harvest?.primer ?? (primer !== undefined && primer.status !== 'pending' ? primer : undefined);
  return figures !== undefined ? primerLine(figures, arms, harvest !== undefined) : undefined;
}

/** The one-line "why #1" once the harvest ranked the arms; `green` when there is a winner to apply. */
export interface WhyFirstLine {
  text: string;
  green: boolean;
}

export function whyFirstOf(state: BonState): WhyFirstLine | undefined {
  const ranking = state.bon.harvest?.ranking;
  if (ranking === undefined) return undefined;
  // The harvest's own line: it explains a green first arm, and says there is nothing to apply otherwise.
  return { text: whyOf(state.bon.harvest!), green: ranking[0]?.green === true };
}

/** The harvest's outcome under the board: where it is written and the exact command it proposes. */
export function proposalLine(state: BonState): string | undefined {
  const harvest = state.bon.harvest;
  if (harvest === undefined) return undefined;
  // The command first: on a narrow terminal the line is cut at its end, and the command is what the user types.
  const apply = harvest.applyCommand !== undefined ? `proposal: ${harvest.applyCommand} · ` : '';
  return `${apply}harvest: ${harvest.harvestFile}`;
}

/**
 * The spend lines under the board: the forecast (and its question, while it waits for y/n), the gates' baseline on
 * HEAD, the run's cap once it was neared, and what stopped the batch. Each is one line; none before it is known.
 */
export function spendLinesOf(state: BonState): string[] {
  const { forecast, baseline, stop, runSpend, ui } = state.bon;
  const lines: string[] = [];
  if (forecast) {
    const asks = forecast.confirm === true && !ui.fanOutAnswered && state.exit === undefined;
    // The question first: a narrow terminal cuts the end of the line, never what it asks.
    lines.push(
      asks
        ? `fan out? y / n — ${forecastAbove(forecast)} · ${forecastLine({ ...forecast, confirm: false })}`
        : forecastLine({ ...forecast, confirm: false }),
    );
  }
  if (baseline && baseline.gates.some((gate) => !gate.ok)) {
    lines.push(baselineLine(baseline));
  }
  // Once the calls in flight at the cap are in, the stop line carries the run's final figure (the one `runs` shows).
  if (stop)
    lines.push(
      `${stop.kind === 'budget' && runSpend?.kind === 'capped' ? `${runCapMotif(runSpend.spent, runSpend.cap)} — the batch stopped` : stop.motif}: the harvest ranks what exists`,
    );
  else if (runSpend)
    lines.push(
      `run: ${formatCost(runSpend.spent)} of its ${formatCost(runSpend.cap)} cap${runSpend.kind === 'wrap_up' ? ' — every arm at work was told to wrap up' : ''}`,
    );
  return lines;
}

/** Words wrapped at `width` columns (a word longer than a line is cut into lines of its own). */
function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    for (let rest = word; rest.length > 0; rest = rest.slice(width)) {
      const piece = rest.slice(0, width);
      if (line === '') line = piece;
      else if (line.length + 1 + piece.length <= width) line = `${line} ${piece}`;
      else {
        lines.push(line);
        line = piece;
      }
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * The selected arm's whole verdict, above its patch (enter on the board): the card cuts it at its width, an 80×24
 * terminal mid-sentence. Its status and figures, why it is red, what it tried, its files beyond the spec, each gate
 * with its motif — wrapped, every line marked `#` so the patch's colours never take it.
 */
export function verdictLines(arm: ArmView, width = 76): string[] {
  const out: string[] = [];
  const add = (label: string, text: string) =>
    wrapWords(`${label}${text}`, width - 2).forEach((line, i) => out.push(`${i === 0 ? '# ' : '#   '}${line}`));
  add(
    '',
    `arm_${arm.arm}${arm.model ? ` on ${arm.model}` : ''} · ${arm.status}${arm.rank !== undefined ? ` · #${arm.rank}` : ''} · ${formatCost(arm.cost)} · ${formatTokens(arm.tokens)} tokens`,
  );
  if (arm.motif !== undefined) add('verdict: ', arm.motif);
  if (arm.tried !== undefined) add('', arm.tried);
  // A gate's motif that is the verdict already is not said twice.
  const said = (motif: string) => arm.motif !== undefined && flatLine(motif) === arm.motif;
  for (const gate of arm.gates)
    add(
      `${gate.ok ? '✓' : gate.preexisting ? '~' : '✗'} `,
      `${gate.gate}${gate.ok || !gate.motif || said(gate.motif) ? '' : ` — ${flatLine(gate.motif)}`}`,
    );
  out.push('');
  return out;
}
