// The CI report's shape and its two renderings: GitHub-flavoured Markdown for a job's summary, JUnit XML for test
// reporters. Motifs, gate names, models and file names come from models, test runners and the repository: they
// may hold `|`, newlines, HTML, ANSI escapes, NUL. Every such text goes through one escaper per format, so no
// value can end a table cell, open a tag, or make the XML unreadable (an XML 1.0 parser refuses a control
// character outright, even written as a character reference).
import { primerLine } from '../bon/harvest/rank.js';
import { isInfrastructure, type FailureKind } from '../contract/errors.js';
import type { PhaseKind } from '../contract/events.js';
import { formatCost, formatSeconds, formatTokens } from '../contract/format.js';

export type Verdict = 'green' | 'failed' | 'interrupted' | 'budget' | 'unfinished';
export type PhaseStatus = 'ok' | 'failed' | 'skipped';
/** `not-run`: planned, never started; `interrupted`: stopped by the user or a race policy (or the log ends inside it). */
/** `unverified`: every gate red on HEAD the same way — nothing verified the arm (not green, never the winner). */
export type ArmStatus = 'green' | 'unverified' | 'red' | 'interrupted' | 'not-run';

export interface PhaseReport {
  name: string;
  kind: PhaseKind;
  /** `skipped`: planned and never started (the run stopped before it). */
  status: PhaseStatus;
  /** Attempts spent (0 when it failed before any ran). */
  attempts: number;
  maxAttempts: number;
  seconds: number;
  tokens: number;
  cost: number;
  motif?: string;
  /** The failure kind of a failed phase, as the event says it (a string: newer cores add kinds). */
  failure?: string;
  model?: string;
  /** The arm number of a best-of-N arm phase. */
  arm?: number;
}

/** A gate's last verdict in its phase (a send-back runs the gates again: `runs` says how often it ran). */
export interface GateRow {
  gate: string;
  ok: boolean;
  seconds: number;
  runs: number;
  motif?: string;
  /** Red on HEAD already, before the change (when the core says so). */
  preexisting?: boolean;
}

export interface GateGroup {
  phase: string;
  gates: GateRow[];
}

export interface ArmReport {
  arm: number;
  phase: string;
  model?: string;
  status: ArmStatus;
  motif?: string;
  failure?: string;
  tokens: number;
  cost: number;
  seconds: number;
  patchBytes: number;
  files: string[];
  patchFile?: string;
  /** 1-based place in the harvest's ranking; absent when the harvest did not rank it (or never ran). */
  rank?: number;
  winner: boolean;
  /** What its guards refused or contained, as one line (`tried: …`). */
  tried?: string;
}

export interface BonReport {
  /** Whether the harvest ran: without it the arms come from their phases and nothing is ranked. */
  harvested: boolean;
  /** Ranked arms first (in rank order), then the others in plan order. */
  arms: ArmReport[];
  winner?: number;
  /** Why #1 is first (or why nothing is to apply), as the harvest says it. */
  why?: string;
  primer?: { tokens: number; cost: number };
  applyCommand?: string;
  harvestFile?: string;
  /** What `--apply` (or the board) did with a patch. */
  applies: { arm?: number; applied: boolean; line: string }[];
}

export interface CiReport {
  adwId: string;
  adwName: string;
  cwd: string;
  verdict: Verdict;
  /** Absent when the log has no run_finished (the run was killed, or is still going). */
  exit?: number;
  seconds?: number;
  tokens: number;
  cost: number;
  interrupted: boolean;
  failedPhase?: string;
  /** The spend cap that stopped the run, as the core words it. */
  budget?: string;
  phases: PhaseReport[];
  gates: GateGroup[];
  bon?: BonReport;
}

// -- text in, text out --------------------------------------------------------------------------------------

/** CSI (colours, cursor), OSC (titles, links) and two-byte escapes: dropped whole, not just their ESC. */
const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])/g;
/** Outside XML 1.0's Char (and DEL, C1: legal but invisible junk): C0 controls but \t \n \r, lone surrogates, U+FFFE/F. */
const NOT_TEXT = /[^\t\n\r\u0020-\u007e\u00a0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;

/** Text with escape sequences and characters no reader can take removed; cut to `max` code points. */
export function plainText(text: unknown, max = 2000): string {
  const clean = String(text ?? '')
    .replace(ANSI, '')
    .replace(NOT_TEXT, '');
  const points = Array.from(clean);
  return points.length > max ? `${points.slice(0, max - 1).join('')}…` : clean;
}

const MD_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '|': '&#124;' };

/**
 * One line of Markdown that stays one table cell and plain text: `& < >` as entities (no HTML gets through), `|`
 * as an entity (the table's splitter never sees it), Markdown's own punctuation backslash-escaped (no emphasis,
 * link, image or code span), line breaks as our own `<br>`, added after the escaping.
 */
export function mdText(text: unknown, max = 300): string {
  return plainText(text, max)
    .replace(/\t/g, ' ')
    .trim()
    .replace(/[&<>|\\`*_[\]~!#]/g, (c) => MD_ESCAPES[c] ?? `\\${c}`)
    .replace(/\r\n|\r|\n/g, '<br>');
}

function mdTable(head: string[], rows: string[][]): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => ' --- ').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

/** A fence longer than any backtick run in the text, so the text cannot close it. */
function mdCode(text: string, lang = ''): string[] {
  const body = plainText(text).replace(/\r\n?/g, '\n');
  const fence = '`'.repeat(Math.max(3, ...(body.match(/`+/g) ?? []).map((run) => run.length + 1)));
  return [`${fence}${lang}`, body, fence];
}

/** formatCost can say `<$0.0001`: through the escaper like any text. */
const cost = (n: number) => mdText(formatCost(n));

const PHASE_ICON: Record<PhaseStatus, string> = { ok: '✅ ok', failed: '❌ failed', skipped: '⏭️ skipped' };

function headline(r: CiReport): string {
  const at = r.failedPhase ? ` at phase ${mdText(r.failedPhase)}` : '';
  switch (r.verdict) {
    case 'green':
      return '✅ green';
    case 'failed':
      return `❌ failed${at}`;
    case 'interrupted':
      return `⏹️ interrupted${at}`;
    case 'budget':
      return `💸 stopped by budget${r.budget ? `: ${mdText(r.budget)}` : ''}${at}`;
    default:
      return `⏳ unfinished — the run log has no end${at}`;
  }
}

function armVerdict(a: ArmReport): string {
  if (a.status === 'green') return a.tried ? `✅ green · ⚠️ ${mdText(a.tried)}` : '✅ green';
  if (a.status === 'not-run') return '⏭️ not run';
  const label = a.status === 'red' ? '❌ red' : a.status === 'unverified' ? '⚠️ unverified' : '⏹️ interrupted';
  return a.motif ? `${label}: ${mdText(a.motif)}` : label;
}

function files(list: readonly string[]): string {
  // A patch can touch hundreds of files: the count always, the first few by name.
  if (list.length === 0) return '0';
  const shown = list.slice(0, 5).map((f) => mdText(f, 120));
  return `${list.length}: ${shown.join(', ')}${list.length > 5 ? `, +${list.length - 5} more` : ''}`;
}

/** The run as a job summary: verdict, phases, arms (best-of-N), gates. */
export function markdownReport(r: CiReport): string {
  const lines = [`## ${headline(r)} — ${mdText(r.adwName || 'run')} ${mdText(r.adwId)}`, ''];
  const figures = [`${formatTokens(r.tokens)} tokens`, cost(r.cost)];
  if (r.seconds !== undefined) figures.push(formatSeconds(r.seconds));
  if (r.exit !== undefined) figures.push(`exit ${r.exit}`);
  lines.push(`${figures.join(' · ')}${r.cwd ? ` · in ${mdText(r.cwd)}` : ''}`, '');
  const failed = r.phases.find((p) => p.name === r.failedPhase && p.motif);
  if (failed) lines.push(`> **${mdText(failed.name)}**: ${mdText(failed.motif)}`, '');

  lines.push('### Phases', '');
  const phaseRows = r.phases.map((p) => [
    mdText(p.name),
    p.kind === 'code' ? 'code' : 'agent',
    PHASE_ICON[p.status],
    `${p.attempts}/${p.maxAttempts}`,
    p.status === 'skipped' ? '' : formatSeconds(p.seconds),
    formatTokens(p.tokens),
    cost(p.cost),
    mdText(p.motif ?? ''),
  ]);
  lines.push(...mdTable(['phase', 'kind', 'status', 'attempts', 'time', 'tokens', 'cost', 'motif'], phaseRows), '');

  if (r.bon) lines.push(...bonSection(r.bon));

  const gateRows = r.gates.flatMap((g) =>
    g.gates.map((row) => [
      mdText(g.phase),
      mdText(row.gate),
      row.ok ? '✅ green' : row.preexisting ? '⚠️ red on HEAD already' : '❌ red',
      formatSeconds(row.seconds),
      row.runs > 1 ? `${row.runs}` : '1',
      row.ok ? '' : mdText(row.motif ?? ''),
    ]),
  );
  if (gateRows.length > 0)
    lines.push('### Gates', '', ...mdTable(['phase', 'gate', 'verdict', 'time', 'runs', 'motif'], gateRows));
  return `${lines.join('\n').trimEnd()}\n`;
}

function bonSection(bon: BonReport): string[] {
  const lines = [`### Arms${bon.harvested ? '' : ' (no harvest: not ranked)'}`, ''];
  const rows = bon.arms.map((a) => [
    a.rank === undefined ? '' : a.winner ? `🏆 **#${a.rank}**` : `#${a.rank}`,
    a.winner ? `**arm ${a.arm}** (winner)` : `arm ${a.arm}`,
    mdText(a.model ?? ''),
    armVerdict(a),
    cost(a.cost),
    formatTokens(a.tokens),
    formatSeconds(a.seconds),
    String(a.patchBytes),
    files(a.files),
  ]);
  lines.push(
    ...mdTable(['rank', 'arm', 'model', 'verdict', 'cost', 'tokens', 'time', 'patch bytes', 'files'], rows),
    '',
  );
  if (bon.why) lines.push(mdText(bon.why), '');
  if (bon.primer) lines.push(mdText(primerLine(bon.primer, bon.arms.length)), '');
  if (bon.applyCommand)
    lines.push(
      `Apply the winner${bon.winner !== undefined ? ` (arm ${bon.winner})` : ''} with:`,
      '',
      ...mdCode(bon.applyCommand, 'sh'),
      '',
    );
  for (const a of bon.applies) lines.push(`- ${a.applied ? 'applied' : 'not applied'}: ${mdText(a.line)}`);
  if (bon.applies.length > 0) lines.push('');
  return lines;
}

// -- JUnit --------------------------------------------------------------------------------------------------

const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

/** An attribute value: quotes escaped, and \t \n \r as references (a parser would fold them into spaces). */
export function xmlAttr(text: unknown, max = 1000): string {
  return plainText(text, max).replace(/[&<>"'\t\n\r]/g, (c) => XML_ESCAPES[c]!);
}

/** Element text (`]]>` cannot appear: `>` is escaped; \r as a reference, or a parser would turn \r\n into \n). */
export function xmlText(text: unknown, max = 20_000): string {
  return plainText(text, max).replace(/[&<>\r]/g, (c) => XML_ESCAPES[c]!);
}

interface TestCase {
  name: string;
  classname: string;
  seconds: number;
  outcome?: { tag: 'failure' | 'error' | 'skipped'; message: string; type?: string };
  /** A passing case's note (a green arm's `tried: …`), as JUnit's system-out. */
  systemOut?: string;
}

function testCase(c: TestCase): string {
  const open = `    <testcase name="${xmlAttr(c.name)}" classname="${xmlAttr(c.classname)}" time="${c.seconds.toFixed(3)}"`;
  if (!c.outcome && c.systemOut)
    return `${open}>\n      <system-out>${xmlText(c.systemOut)}</system-out>\n    </testcase>`;
  if (!c.outcome) return `${open}/>`;
  const { tag, message, type } = c.outcome;
  const attrs = `message="${xmlAttr(message)}"${type ? ` type="${xmlAttr(type)}"` : ''}`;
  const inner = tag === 'skipped' ? `<skipped ${attrs}/>` : `<${tag} ${attrs}>${xmlText(message)}</${tag}>`;
  return `${open}>\n      ${inner}\n    </testcase>`;
}

interface Counts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  seconds: number;
}

function countsOf(cases: readonly TestCase[]): Counts {
  const count = (tag: string) => cases.filter((c) => c.outcome?.tag === tag).length;
  return {
    tests: cases.length,
    failures: count('failure'),
    errors: count('error'),
    skipped: count('skipped'),
    seconds: cases.reduce((s, c) => s + c.seconds, 0),
  };
}

function counted(c: Counts, seconds = c.seconds): string {
  return `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}" time="${seconds.toFixed(3)}"`;
}

function phaseCase(p: PhaseReport, classname: string): TestCase {
  const base = { name: p.name, classname, seconds: p.seconds };
  if (p.status === 'ok') return base;
  if (p.status === 'skipped')
    return { ...base, outcome: { tag: 'skipped', message: p.motif ?? 'not run: the run stopped before it' } };
  // The installation's failure (pi missing, a bad version) is an error of the run, not a verdict on the change.
  const tag = p.failure && isInfrastructure(p.failure as FailureKind) ? 'error' : 'failure';
  return { ...base, outcome: { tag, message: p.motif ?? 'failed', ...(p.failure ? { type: p.failure } : {}) } };
}

function armCase(a: ArmReport, classname: string): TestCase {
  const base = { name: a.model ? `arm_${a.arm} (${a.model})` : `arm_${a.arm}`, classname, seconds: a.seconds };
  if (a.status === 'green') return a.tried ? { ...base, systemOut: a.tried } : base;
  if (a.status === 'red')
    return {
      ...base,
      outcome: { tag: 'failure', message: a.motif ?? 'red', ...(a.failure ? { type: a.failure } : {}) },
    };
  if (a.status === 'unverified')
    return { ...base, outcome: { tag: 'failure', message: a.motif ?? 'unverified', type: 'unverified' } };
  return {
    ...base,
    outcome: { tag: 'skipped', message: a.status === 'not-run' ? 'not run' : (a.motif ?? 'interrupted') },
  };
}

function gateCase(phase: string, g: GateRow, classname: string): TestCase {
  const base = { name: `${phase}: ${g.gate}`, classname, seconds: g.seconds };
  if (g.ok) return base;
  // Red before the change too: the change did not break it, so it judges nothing here.
  if (g.preexisting) return { ...base, outcome: { tag: 'skipped', message: 'pre-existing on HEAD' } };
  return { ...base, outcome: { tag: 'failure', message: g.motif ?? 'red', type: 'gate' } };
}

/**
 * JUnit XML: a suite `phases`, a suite `arms` for a best-of-N run, a suite `gates`. An arm's phase is left out of
 * `phases` (its testcase is in `arms`, with the harvest's verdict): counting it twice would double its failure.
 */
export function junitReport(r: CiReport): string {
  const prefix = r.adwName || 'run';
  const armPhases = new Set(r.bon?.arms.map((a) => a.phase));
  const suites: { name: string; cases: TestCase[] }[] = [
    {
      name: 'phases',
      cases: r.phases.filter((p) => !armPhases.has(p.name)).map((p) => phaseCase(p, `${prefix}.phases`)),
    },
  ];
  if (r.bon) suites.push({ name: 'arms', cases: r.bon.arms.map((a) => armCase(a, `${prefix}.arms`)) });
  suites.push({
    name: 'gates',
    cases: r.gates.flatMap((g) => g.gates.map((row) => gateCase(g.phase, row, `${prefix}.gates`))),
  });

  const all = countsOf(suites.flatMap((s) => s.cases));
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xmlAttr(`factory ${prefix} ${r.adwId}`)}" ${counted(all, r.seconds ?? all.seconds)}>`,
  ];
  for (const s of suites) {
    out.push(`  <testsuite name="${s.name}" ${counted(countsOf(s.cases))}>`);
    out.push(...s.cases.map(testCase));
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}
