// The harvest's judgement, pure: arms ranked green first, then cheapest, then fastest — three keys in order, no
// composite score, so "why #1" is always one comparison a human can check. Ranked once (rankHarvest): the harvest
// event, harvest.json, the board, `--apply`, `factory apply` and `factory show` all read that one Ranking. Plus the
// lines and the file the harvest shows and writes, and the exact command it proposes.
import type { ArmRank, JudgeOrder } from '../../contract/events.js';
import { formatCost, formatSeconds, formatTokens } from '../../contract/format.js';
import { beyondLine } from './scope.js';
import { triedLine } from './tried.js';

/** An arm's verdict in one word: `unverified` when every gate it ran was red on HEAD the same way (nothing verified it). */
export type ArmVerdictWord = 'green' | 'unverified' | 'red';

export function verdictOf(arm: Pick<ArmRank, 'green' | 'unverified'>): ArmVerdictWord {
  return arm.green ? 'green' : arm.unverified ? 'unverified' : 'red';
}

const VERDICT_ORDER: Readonly<Record<ArmVerdictWord, number>> = { green: 2, unverified: 1, red: 0 };

/**
 * Green before unverified before red; among the green, one that turned more of HEAD's red gates green first (its credit: an arm that
 * left them red the same way is not held to them, but it did not do what they ask); among the red, an arm that ran
 * a turn before one that never did (0 tokens: it is not cheap, it did nothing); then lower cost, then fewer seconds;
 * arms equal on all of these keep their order.
 */
export function rankArms(arms: readonly ArmRank[]): ArmRank[] {
  const ran = (arm: ArmRank) => Number(arm.tokens > 0);
  const credit = (arm: ArmRank) => (arm.green ? (arm.fixed?.length ?? 0) : 0);
  // An arm whose guards had to refuse something ranks below one equal on the gates that tried nothing, whatever
  // a cent or a second says: what it tried is what it would try again in the user's tree.
  const clean = (arm: ArmRank) => Number(triedCount(arm) === 0);
  // The same for an arm whose patch changes files beyond the spec's scope (./scope.ts): the change asked, no more.
  const inScope = (arm: ArmRank) => Number((arm.beyond?.length ?? 0) === 0);
  // Array.prototype.sort is stable: equal arms stay in run order (the earlier arm first).
  const verdict = (arm: ArmRank) => VERDICT_ORDER[verdictOf(arm)];
  return [...arms].sort(
    (a, b) =>
      verdict(b) - verdict(a) ||
      credit(b) - credit(a) ||
      clean(b) - clean(a) ||
      inScope(b) - inScope(a) ||
      ran(b) - ran(a) ||
      a.cost - b.cost ||
      fasterOf(a, b),
  );
}

/** Times closer than this share of the longer one are the same time: a machine's noise, not the arms'. */
export const TIME_NOISE = 0.1;

/**
 * Time decides only between arms that ran under the same load (neither waited for a slot: an arm started once
 * another ended runs beside fewer, and its wall time is not theirs) and only past the noise band; else a tie.
 */
export function fasterOf(a: Pick<ArmRank, 'seconds' | 'waited'>, b: Pick<ArmRank, 'seconds' | 'waited'>): number {
  if (a.waited || b.waited) return 0;
  return Math.abs(a.seconds - b.seconds) <= TIME_NOISE * Math.max(a.seconds, b.seconds) ? 0 : a.seconds - b.seconds;
}

/**
 * What makes an arm one to apply only on a yes, in one line: its files beyond the spec, what its guards refused.
 * Undefined for an arm that stayed in scope and tried nothing.
 */
export function cautionOf(arm: Pick<ArmRank, 'tried' | 'triedCount' | 'beyond'>, shown = 2): string | undefined {
  const parts = [beyondLine(arm.beyond, shown), triedLine(arm, shown)].filter((part) => part !== undefined);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** How many acts the arm's guards refused or contained (./tried.ts). */
export function triedCount(arm: Pick<ArmRank, 'tried' | 'triedCount'>): number {
  return Math.max(arm.triedCount ?? 0, arm.tried?.length ?? 0);
}

/** The winner: the first ranked arm if it is green, otherwise none (an unverified arm never wins). */
export function winnerOf(ranked: readonly ArmRank[]): ArmRank | undefined {
  const first = ranked[0];
  return first?.green ? first : undefined;
}

/** One line that says why the first arm is first, by the first key that separates it from the second. */
function armLabel(rank: ArmRank): string {
  return rank.model ? `arm_${rank.arm} (${rank.model})` : `arm_${rank.arm}`;
}

/**
 * The one line that says why #1 won, from the ranking's own order (green first, then cheapest, then fastest):
 * against the runner-up when there is a green one, else as the only green arm.
 */
export function whyFirst(ranked: readonly ArmRank[]): string {
  const first = ranked[0];
  if (first === undefined) return 'no arm ran: nothing to apply';
  if (first.unverified) {
    return `no verified arm: nothing to apply unless you name one (the best ranked, arm_${first.arm}, is unverified: ${unverifiedReason(first)})`;
  }
  if (!first.green)
    return `no green arm: nothing to apply (the best ranked, arm_${first.arm}, is red${first.motif ? `: ${first.motif}` : ''})`;
  const others = ranked.slice(1);
  const unverified = others.filter((rank) => rank.unverified).length;
  const reds = others.filter((rank) => !rank.green && !rank.unverified).length;
  const notes = [...(unverified > 0 ? [`${unverified} unverified`] : []), ...(reds > 0 ? [`${reds} red`] : [])];
  const redNote = notes.length > 0 ? ` (${notes.join(', ')})` : '';
  const second = others.find((rank) => rank.green);
  if (second === undefined) return `why #1: ${armLabel(first)} is the only green arm${redNote}`;
  const vs = `arm_${second.arm}`;
  const fixed = (arm: ArmRank) => arm.fixed?.length ?? 0;
  if (fixed(first) > fixed(second)) {
    return `why #1: ${armLabel(first)} is green and made green what was red on HEAD (${first.fixed!.join(', ')}); ${vs} did not${fixed(second) > 0 ? ' as much' : ''}${redNote}`;
  }
  if (triedCount(first) === 0 && triedCount(second) > 0) {
    return `why #1: ${armLabel(first)} is green and tried nothing its guards refused; ${vs} ${triedLine(second, 1) ?? 'tried'}${redNote}`;
  }
  if (!first.beyond?.length && second.beyond?.length) {
    return `why #1: ${armLabel(first)} is green and stayed in the spec's scope; ${vs} changed files ${beyondLine(second.beyond, 2) ?? 'beyond it'}${redNote}`;
  }
  if (first.cost < second.cost) {
    const saved = second.cost > 0 ? Math.round((1 - first.cost / second.cost) * 100) : 0;
    return `why #1: ${armLabel(first)} is green and cheapest: ${formatCost(first.cost)} vs ${formatCost(second.cost)} for ${vs} (-${saved}%)${redNote}`;
  }
  if (fasterOf(first, second) < 0) {
    return `why #1: ${armLabel(first)} is green, as cheap as ${vs} (${formatCost(first.cost)}) and faster: ${formatSeconds(first.seconds)} vs ${formatSeconds(second.seconds)}${redNote}`;
  }
  const waited = [first, second].filter((arm) => arm.waited).map((arm) => `arm_${arm.arm}`);
  if (waited.length > 0) {
    return `why #1: ${armLabel(first)} is green and as cheap as ${vs}; their times are not comparable (${waited.join(' and ')} waited for a slot): first in plan order${redNote}`;
  }
  return `why #1: ${armLabel(first)} is green and ties ${vs} on cost and time (within ${Math.round(TIME_NOISE * 100)} %): first in plan order${redNote}`;
}

/** Why an unverified arm is not green, in words (its verdict's tail). */
export function unverifiedReason(arm: Pick<ArmRank, 'excused'>): string {
  return `${(arm.excused ?? []).join(', ') || 'every gate'} red on HEAD the same way — nothing verified it`;
}

/**
 * The harvest's one ranking. Every consumer reads this value (or harvest.json, written from it): the order, the
 * winner (the first arm when it is green: what `--apply`, `p` without a selection and `factory apply <id>` take)
 * and the one line that says why.
 */
export interface Ranking {
  /** Best first: the green (in the judge's order when the code accepted one), then the unverified, then the red. */
  arms: ArmRank[];
  winner?: ArmRank;
  why: string;
  judge?: JudgeOrder;
}

export function rankHarvest(arms: readonly ArmRank[], judge?: JudgeOrder): Ranking {
  const ranked = judged(rankArms(arms), judge);
  return {
    arms: ranked,
    winner: winnerOf(ranked),
    why: judge ? whyJudged(ranked, judge) : whyFirst(ranked),
    ...(judge ? { judge } : {}),
  };
}

/** The why of a harvest as its event carries it; a run logged before the event carried it is explained the same way. */
export function whyOf(harvest: { ranking: readonly ArmRank[]; why?: string; judge?: JudgeOrder }): string {
  return harvest.why ?? (harvest.judge ? whyJudged(harvest.ranking, harvest.judge) : whyFirst(harvest.ranking));
}

export interface PrimerFigures {
  tokens: number;
  cost: number;
}

/**
 * The primer's account: paid once and shared by every arm; a cold start per arm would have paid it again
 * for each arm after the first.
 */
export function primerLine(primer: PrimerFigures, armsCount: number): string {
  const more = primer.tokens * Math.max(0, armsCount - 1);
  return (
    `primer: ${formatTokens(primer.tokens)} tokens, ${formatCost(primer.cost)}, paid once — ` +
    `cold it would have been paid ${armsCount} times: ~${formatTokens(more)} more tokens`
  );
}

/**
 * The exact command the harvest proposes: `factory apply <adw_id>`, which applies the sealed winner the way the
 * board's `p` does (seal, paths and modes, gates on HEAD in a scratch worktree). A raw `git apply` would take the
 * patch file as it is on disk, unverified; `factory apply` finds the repository root from any subfolder.
 */
export function applyCommand(adwId: string, arm?: number): string {
  return `factory apply ${adwId}${arm !== undefined ? ` ${arm}` : ''}`;
}

/** Why #1, when a judge ordered the green arms: its reason, and what the code's own order would have said. */
export function whyJudged(ranked: readonly ArmRank[], judge: JudgeOrder): string {
  const first = ranked[0];
  if (!first?.green) return whyFirst(ranked);
  const reason = judge.ranking.find((r) => r.arm === first.arm)?.reason ?? '';
  return `why #1: the judge ranked ${armLabel(first)} first among the green — ${reason}`.trimEnd();
}

/** The harvest as lines (the headless log and `factory show` alike): the ranking, the primer line, the winner. */
export function harvestReport(event: {
  adwId?: string;
  ranking: readonly ArmRank[];
  primer: PrimerFigures;
  winner?: number;
  applyCommand?: string;
  harvestFile: string;
  judge?: JudgeOrder;
}): string[] {
  const lines = [
    event.judge
      ? "harvest — ranked (green first, in the judge's order, then the red):"
      : 'harvest — ranked (green first, then cheapest, then fastest):',
  ];
  event.ranking.forEach((arm, i) => {
    const credit =
      (arm.fixed?.length ? ` (and made green what was red on HEAD: ${arm.fixed.join(', ')})` : '') +
      (arm.excused?.length
        ? ` (${arm.excused.join(', ')} red on HEAD the same way: not held against it, not proof either)`
        : '');
    const verdict = arm.green
      ? `green${credit}`
      : arm.unverified
        ? `unverified (${unverifiedReason(arm)})`
        : `red: ${arm.motif ?? '?'}`;
    const size =
      arm.added !== undefined ? ` (+${arm.added} −${arm.removed ?? 0}, ${arm.files?.length ?? 0} file(s))` : '';
    lines.push(
      `  #${i + 1} arm ${arm.arm} ${arm.model ?? ''} — ${verdict} — ${arm.tokens} tokens, ${formatCost(arm.cost)}, ${arm.seconds.toFixed(1)} s, patch ${arm.patchBytes} bytes${size}`,
    );
    const caution = cautionOf(arm, 5);
    if (caution !== undefined) lines.push(`     ${caution}`);
  });
  lines.push(primerLine(event.primer, event.ranking.length));
  if (event.judge) {
    const first = event.judge.ranking[0];
    lines.push(
      `judge${event.judge.model ? ` (${event.judge.model})` : ''}: ${event.judge.tokens} tokens, ${formatCost(event.judge.cost)}, its own line — ${first ? `arm ${first.arm} first: ${first.reason}` : 'no order'}`,
    );
  }
  const best = event.ranking[0];
  if (event.winner !== undefined) lines.push(`winner: arm ${event.winner} — apply with: ${event.applyCommand ?? '?'}`);
  else if (best?.unverified)
    lines.push(
      `no verified arm: nothing applied unless you name one — arm ${best.arm} is the best unverified${event.adwId ? ` (${applyCommand(event.adwId, best.arm)})` : ''}; see ${event.harvestFile}`,
    );
  else lines.push(`no green arm — see ${event.harvestFile}`);
  return lines;
}

export interface HarvestArmJson {
  rank: number;
  arm: number;
  phase: string;
  model: string | null;
  /** `green`, `unverified` (every gate red on HEAD the same way: applied only when named) or `red`. */
  verdict: ArmVerdictWord;
  green: boolean;
  motif: string | null;
  tokens: number;
  cost_usd: number;
  seconds: number;
  patch_file: string | null;
  patch_bytes: number;
  /** sha256 of the patch's bytes when it was harvested: `factory apply` refuses a file that hashes otherwise. */
  patch_sha256: string | null;
  /** Why a red arm is red, as a kind (budget, race, gate…). */
  failure: string | null;
  lines_added: number | null;
  lines_removed: number | null;
  files: string[];
  /** Gates red on HEAD before the fan-out that this arm turned green. */
  fixed: string[];
  /** Gates red on HEAD that it left red the same way (not held against it). */
  excused: string[];
  /** What its guards refused or contained (the first few), and how many in all (./tried.ts): applying it asks first. */
  tried: string[];
  tried_count: number;
  /** Its patch's files beyond the spec's scope (./scope.ts): applying it asks first. */
  beyond_spec: string[];
}

/** The shape of `bon/<adw_id>/harvest.json` (snake_case, like the trace). */
export interface HarvestJson {
  adw_id: string;
  spec: string | null;
  head: string | null;
  primer: { tokens: number; cost_usd: number; session_id: string | null; line: string };
  arms: HarvestArmJson[];
  /** The first arm when it is green; never an unverified one. */
  winner: number | null;
  why: string;
  apply_command: string | null;
  /** ISO time the harvest was made. */
  created_at: string;
  /** The judge's order of the green arms, when one ran and the code accepted it. */
  judge: {
    ranking: Array<{ arm: number; reason: string }>;
    tokens: number;
    cost_usd: number;
    model: string | null;
  } | null;
  /** The gates red on HEAD before the fan-out, with what they said: `factory apply` excuses the same failure again. */
  baseline: BaselineGate[];
}

/** A gate red on HEAD, as the baseline read it (../../gates/baseline.ts). */
export interface BaselineGate {
  gate: string;
  ending: string;
  lines: string[];
}

export interface HarvestInput {
  adwId: string;
  /** The harvest's ranking (rankHarvest): written as it is, never ranked again. */
  ranking: Ranking;
  primer: PrimerFigures & { sessionId?: string };
  spec?: string;
  head?: string;
  /** Milliseconds since the epoch (the caller's clock, so the function stays pure). */
  now: number;
  baseline?: readonly BaselineGate[];
}

export function harvestJson(input: HarvestInput): HarvestJson {
  const { arms: ranked, winner, judge } = input.ranking;
  return {
    adw_id: input.adwId,
    spec: input.spec ?? null,
    head: input.head ?? null,
    primer: {
      tokens: input.primer.tokens,
      cost_usd: input.primer.cost,
      session_id: input.primer.sessionId ?? null,
      line: primerLine(input.primer, ranked.length),
    },
    arms: ranked.map((a, i) => ({
      rank: i + 1,
      arm: a.arm,
      phase: a.phase,
      model: a.model ?? null,
      verdict: verdictOf(a),
      green: a.green,
      motif: a.motif ?? null,
      tokens: a.tokens,
      cost_usd: a.cost,
      seconds: a.seconds,
      patch_file: a.patchFile ?? null,
      patch_bytes: a.patchBytes,
      patch_sha256: a.patchSha256 ?? null,
      failure: a.green ? null : (a.failure ?? null),
      lines_added: a.added ?? null,
      lines_removed: a.removed ?? null,
      files: [...(a.files ?? [])],
      fixed: [...(a.fixed ?? [])],
      excused: [...(a.excused ?? [])],
      tried: [...(a.tried ?? [])],
      tried_count: triedCount(a),
      beyond_spec: [...(a.beyond ?? [])],
    })),
    winner: winner?.arm ?? null,
    why: input.ranking.why,
    apply_command: winner?.patchFile ? applyCommand(input.adwId) : null,
    created_at: new Date(input.now).toISOString(),
    judge: judge
      ? {
          ranking: judge.ranking.map((r) => ({ ...r })),
          tokens: judge.tokens,
          cost_usd: judge.cost,
          model: judge.model ?? null,
        }
      : null,
    baseline: (input.baseline ?? []).map((g) => ({ gate: g.gate, ending: g.ending, lines: [...g.lines] })),
  };
}

/** The green arms in the judge's order (it names each exactly once: ../judge.ts checked it), the red after them. */
export function judged(ranked: readonly ArmRank[], judge: JudgeOrder | undefined): ArmRank[] {
  if (!judge) return [...ranked];
  const greens = ranked.filter((a) => a.green);
  const order = judge.ranking
    .map((r) => greens.find((a) => a.arm === r.arm))
    .filter((a): a is ArmRank => a !== undefined);
  return order.length === greens.length ? [...order, ...ranked.filter((a) => !a.green)] : [...ranked];
}
