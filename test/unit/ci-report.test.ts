// The CI report (src/headless/ciReport.ts): a run's events folded by hand-built sequences that follow the real types — a
// green best-of-3 with one red arm, a build that fails its gates twice, an interrupted best-of-N, a log cut short,
// a budget stop — and rendered as Markdown (its tables keep their shape whatever the motifs hold) and JUnit XML,
// read back by a strict well-formedness checker written here and, when python3 is on the machine, by expat.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  collectReport,
  junitReport,
  markdownReport,
  parseReportKinds,
  writeReports,
  type CiReport,
} from '../../src/headless/ciReport.js';
import type { RunEvent } from '../../src/contract/events.js';
import { BON_ADW, RED_MOTIF, ev, eventsThrough } from '../helpers/bonEvents.js';
import { tempDir } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

// -- a strict XML 1.0 reader (elements, attributes, text, the five entities and character references) ---------

interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

const XML_CHAR = /^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function parseXml(src: string): XmlNode {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`not well-formed at ${i}: ${why} — ${JSON.stringify(src.slice(Math.max(0, i - 40), i + 40))}`);
  };
  if (!XML_CHAR.test(src)) fail('a character outside XML 1.0');
  const decode = (raw: string): string =>
    raw.replace(/&([^;&<]*);|&/g, (whole, ref: string | undefined) => {
      if (ref === undefined) return fail('a bare &');
      if (ref in ENTITIES) return ENTITIES[ref]!;
      const code = /^#x[0-9a-fA-F]+$/.test(ref)
        ? parseInt(ref.slice(2), 16)
        : /^#[0-9]+$/.test(ref)
          ? Number(ref.slice(1))
          : fail(`unknown entity ${whole}`);
      const char = String.fromCodePoint(code);
      return XML_CHAR.test(char) ? char : fail(`a reference to an illegal character ${whole}`);
    });
  const name = (): string => {
    const m = /^[A-Za-z_:][-A-Za-z0-9_:.]*/.exec(src.slice(i));
    if (!m) fail('a name expected');
    i += m![0].length;
    return m![0];
  };
  const spaces = (): boolean => {
    const start = i;
    while (/[ \t\r\n]/.test(src[i] ?? '')) i += 1;
    return i > start;
  };
  if (src.startsWith('<?xml')) {
    const end = src.indexOf('?>');
    if (end < 0) fail('an unclosed declaration');
    i = end + 2;
  }
  const stack: XmlNode[] = [];
  let root: XmlNode | undefined;
  while (i < src.length) {
    if (src.startsWith('</', i)) {
      i += 2;
      const closing = name();
      spaces();
      if (src[i] !== '>') fail('> expected');
      i += 1;
      const open = stack.pop();
      if (open?.name !== closing) fail(`</${closing}> closes <${open?.name}>`);
    } else if (src[i] === '<') {
      i += 1;
      if (stack.length === 0 && root) fail('a second root element');
      const node: XmlNode = { name: name(), attrs: {}, children: [], text: '' };
      for (;;) {
        const spaced = spaces();
        if (src.startsWith('/>', i) || src[i] === '>') break;
        if (!spaced) fail('a space expected before an attribute');
        const key = name();
        spaces();
        if (src[i] !== '=') fail('= expected');
        i += 1;
        spaces();
        const quote = src[i];
        if (quote !== '"' && quote !== "'") fail('a quoted value expected');
        const end = src.indexOf(quote!, i + 1);
        if (end < 0) fail('an unclosed attribute value');
        const raw = src.slice(i + 1, end);
        if (raw.includes('<')) fail('< in an attribute value');
        if (key in node.attrs) fail(`attribute ${key} twice`);
        node.attrs[key] = decode(raw);
        i = end + 1;
      }
      (stack.at(-1)?.children ?? []).push(node);
      root ??= node;
      if (src.startsWith('/>', i)) i += 2;
      else {
        i += 1;
        stack.push(node);
      }
    } else {
      const end = src.indexOf('<', i) < 0 ? src.length : src.indexOf('<', i);
      const raw = src.slice(i, end);
      if (stack.length === 0 && raw.trim() !== '') fail('text outside the root element');
      if (raw.includes(']]>')) fail(']]> in text');
      if (stack.length > 0) stack.at(-1)!.text += decode(raw);
      i = end;
    }
  }
  if (stack.length > 0) fail(`<${stack.at(-1)!.name}> never closed`);
  return root ?? fail('no root element');
}

const EXPAT = spawnSync('python3', ['-c', 'import xml.dom.minidom'], { encoding: 'utf8' }).status === 0;

/** A second, independent reader: Python's expat (strict XML 1.0), when python3 is installed. */
function expatAccepts(file: string): boolean | undefined {
  if (!EXPAT) return undefined;
  const run = spawnSync('python3', ['-c', 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])', file], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`expat refused ${file}: ${run.stderr}`);
  return true;
}

function suites(xml: string): Record<string, XmlNode> {
  const root = parseXml(xml);
  expect(root.name).toBe('testsuites');
  const byName = Object.fromEntries(root.children.map((s) => [s.attrs.name!, s]));
  // Each suite's counts are its own testcases', and the root's the sum of its suites'.
  for (const s of root.children) {
    const cases = s.children.filter((c) => c.name === 'testcase');
    const tagged = (tag: string) => cases.filter((c) => c.children.some((k) => k.name === tag)).length;
    expect({
      tests: s.attrs.tests,
      failures: s.attrs.failures,
      errors: s.attrs.errors,
      skipped: s.attrs.skipped,
    }).toEqual({
      tests: String(cases.length),
      failures: String(tagged('failure')),
      errors: String(tagged('error')),
      skipped: String(tagged('skipped')),
    });
  }
  for (const key of ['tests', 'failures', 'errors', 'skipped']) {
    expect(Number(root.attrs[key])).toBe(root.children.reduce((n, s) => n + Number(s.attrs[key]), 0));
  }
  return byName;
}

const counts = (s: XmlNode | undefined) =>
  s && { tests: Number(s.attrs.tests), failures: Number(s.attrs.failures), skipped: Number(s.attrs.skipped) };

// -- Markdown tables -----------------------------------------------------------------------------------------

/** The rows of the table under `### title` (header and divider excluded); throws when a row's cells miscount. */
function tableRows(md: string, title: string): string[][] {
  const lines = md.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`### ${title}`));
  if (at < 0) return [];
  const table: string[] = [];
  for (const line of lines.slice(at + 2)) {
    if (!line.startsWith('|')) break;
    table.push(line);
  }
  // Every | is a cell boundary: the report writes a cell's own | as &#124;.
  const cells = table.map((l) =>
    l
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim()),
  );
  for (const row of cells) expect(row).toHaveLength(cells[0]!.length);
  return cells.slice(2);
}

function expectInert(md: string): void {
  // The only tag in the summary is the report's own line break; no escape sequence, no NUL.
  expect(md.match(/<[^>]*>/g)?.filter((t) => t !== '<br>') ?? []).toEqual([]);
  expect(md).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
}

// -- runs ----------------------------------------------------------------------------------------------------

const BUILD_ADW = 'bd000001';
const b = <T extends RunEvent['type']>(type: T, at: number, payload: Parameters<typeof ev<T>>[2]) =>
  ev(type, at, payload, BUILD_ADW);

/** adw_build whose gates stay red: sent back once, red again, the run fails at `gates`. */
function failedBuild(): RunEvent[] {
  const gates = (at: number) => [
    b('phase_started', at, { phase: 'gates', kind: 'code' }),
    b('attempt_started', at + 1, { phase: 'gates', attempt: 1, attempts: 1 }),
    b('gate_result', at + 2, { phase: 'gates', gate: 'changed_files', ok: true, seconds: 0.01 }),
    b('gate_result', at + 3, { phase: 'gates', gate: 'npm test', ok: false, motif: RED_MOTIF, seconds: 2.5 }),
  ];
  return [
    b('run_started', 0, {
      adwName: 'adw_build',
      cwd: '/w',
      phases: [
        { name: 'check', kind: 'code', attempts: 1 },
        { name: 'build', kind: 'agent', attempts: 2 },
        { name: 'gates', kind: 'code', attempts: 1 },
      ],
    }),
    b('phase_started', 1, { phase: 'check', kind: 'code' }),
    b('attempt_started', 2, { phase: 'check', attempt: 1, attempts: 1 }),
    b('phase_ok', 3, { phase: 'check', kind: 'code', attempt: 1, attempts: 1, seconds: 0.05, tokens: 0, cost: 0 }),
    b('phase_started', 4, { phase: 'build', kind: 'agent' }),
    b('attempt_started', 5, { phase: 'build', attempt: 1, attempts: 2, sessionId: 's1', model: 'scripted/base' }),
    b('phase_ok', 6, { phase: 'build', kind: 'agent', attempt: 1, attempts: 2, seconds: 10, tokens: 1000, cost: 0.01 }),
    ...gates(7),
    b('attempt_failed', 11, {
      phase: 'gates',
      attempt: 1,
      attempts: 1,
      motif: RED_MOTIF,
      failure: 'gate',
      willRetry: true,
    }),
    b('phase_started', 12, { phase: 'build', kind: 'agent' }),
    b('attempt_started', 13, { phase: 'build', attempt: 2, attempts: 2, sessionId: 's1', model: 'scripted/base' }),
    b('phase_ok', 14, {
      phase: 'build',
      kind: 'agent',
      attempt: 2,
      attempts: 2,
      seconds: 5,
      tokens: 1800,
      cost: 0.018,
    }),
    ...gates(15),
    b('attempt_failed', 19, {
      phase: 'gates',
      attempt: 1,
      attempts: 1,
      motif: RED_MOTIF,
      failure: 'gate',
      willRetry: false,
    }),
    b('phase_failed', 20, {
      phase: 'gates',
      kind: 'code',
      attempts: 1,
      motif: RED_MOTIF,
      failure: 'gate',
      seconds: 2.6,
      tokens: 0,
      cost: 0,
    }),
    b('run_finished', 21, { exit: 1, seconds: 21, tokens: 1800, cost: 0.018, failedPhase: 'gates' }),
  ];
}

/** A best-of-3 in worktrees, interrupted while arm_2 runs and before arm_3 starts: no harvest. */
function interruptedBon(): RunEvent[] {
  const through = eventsThrough('arm1');
  return [
    ...through,
    ev('phase_started', 7500, { phase: 'arm_2', kind: 'agent' }),
    ev('attempt_started', 7510, {
      phase: 'arm_2',
      attempt: 1,
      attempts: 2,
      sessionId: 'clone-2',
      model: 'scripted/sloppy',
    }),
    ev('phase_failed', 9000, {
      phase: 'arm_2',
      kind: 'agent',
      attempts: 2,
      motif: 'interrupted by the user',
      failure: 'interrupted',
      seconds: 1.5,
      tokens: 300,
      cost: 0.0006,
    }),
    ev('arm_patch', 9050, { phase: 'arm_2', arm: 2, patchFile: 'arm-2.patch', bytes: 0, files: [] }),
    ev('run_finished', 9100, {
      exit: 130,
      seconds: 9.1,
      tokens: 3500,
      cost: 0.0077,
      failedPhase: 'arm_2',
      interrupted: true,
    }),
  ];
}

const HOSTILE =
  'FAIL | a|b\nline two\r\n<script>alert("x")</script> & \u001b[31mred\u001b[0m \u0000nul \u0007bell ]]> \'q\' `code` **bold** [l](javascript:x) \ud800';

/** A bon whose arm and gate texts come from a hostile model and test runner. */
function hostileBon(): RunEvent[] {
  return eventsThrough('harvested').map((e) => {
    if (e.type === 'gate_result' && !e.ok) return { ...e, gate: 'npm | test <b>', motif: HOSTILE };
    if (e.type === 'arm_patch' && e.arm === 2) return { ...e, files: ['src/a|b.js', 'x\n<img src=y>.js'] };
    if (e.type === 'harvest')
      return { ...e, ranking: e.ranking.map((r) => (r.green ? r : { ...r, motif: HOSTILE, model: 'evil|<model>' })) };
    return e;
  });
}

function writtenJunit(report: CiReport): string {
  const dir = tempDir('factory-ci-report-', cleanups);
  const [file] = writeReports(['junit'], report, dir);
  expect(expatAccepts(file!)).not.toBe(false);
  return fs.readFileSync(file!, 'utf8');
}

describe('collectReport', () => {
  it('folds a green best-of-3 with one red arm: arms in rank order, the winner, files, primer, apply command', () => {
    const r = collectReport(eventsThrough('harvested'));
    expect(r).toMatchObject({
      adwId: BON_ADW,
      adwName: 'adw_bon',
      cwd: '/home/dev/payload',
      verdict: 'green',
      exit: 0,
      interrupted: false,
    });
    expect(r.phases.map((p) => [p.name, p.status])).toEqual([
      ['check', 'ok'],
      ['prime', 'ok'],
      ['arm_1', 'ok'],
      ['arm_2', 'failed'],
      ['arm_3', 'ok'],
      ['harvest', 'ok'],
    ]);
    expect(r.bon?.arms.map((a) => [a.rank, a.arm, a.status, a.winner])).toEqual([
      [1, 1, 'green', true],
      [2, 3, 'green', false],
      [3, 2, 'red', false],
    ]);
    expect(r.bon?.arms[2]).toMatchObject({
      motif: RED_MOTIF,
      failure: 'gate',
      patchBytes: 800,
      files: ['src/sum.js', 'test/sum.test.js'],
      model: 'scripted/sloppy',
    });
    expect(r.bon).toMatchObject({
      harvested: true,
      winner: 1,
      primer: { tokens: 2100, cost: 0.005 },
      applyCommand: `factory apply ${BON_ADW}`,
    });
    expect(r.bon?.why).toMatch(/^why #1: arm_1/);
    expect(r.gates.map((g) => [g.phase, g.gates.length])).toEqual([
      ['arm_1', 2],
      ['arm_2', 2],
      ['arm_3', 2],
    ]);
  });

  it('keeps the last verdict of a gate run again after a send-back, and the attempts a phase spent', () => {
    const r = collectReport(failedBuild());
    expect(r).toMatchObject({ verdict: 'failed', exit: 1, failedPhase: 'gates', tokens: 1800 });
    expect(r.bon).toBeUndefined();
    const build = r.phases.find((p) => p.name === 'build')!;
    expect(build).toMatchObject({
      status: 'ok',
      attempts: 2,
      maxAttempts: 2,
      seconds: 15,
      tokens: 1800,
      model: 'scripted/base',
    });
    expect(r.phases.find((p) => p.name === 'gates')).toMatchObject({
      status: 'failed',
      failure: 'gate',
      motif: RED_MOTIF,
    });
    expect(r.gates).toEqual([
      {
        phase: 'gates',
        gates: [
          { gate: 'changed_files', ok: true, seconds: 0.01, runs: 2 },
          { gate: 'npm test', ok: false, seconds: 2.5, runs: 2, motif: RED_MOTIF },
        ],
      },
    ]);
  });

  it('lists the arms of a run stopped before its harvest from their phases and patches, unranked', () => {
    const r = collectReport(interruptedBon());
    expect(r).toMatchObject({ verdict: 'interrupted', interrupted: true, exit: 130, failedPhase: 'arm_2' });
    expect(r.bon?.harvested).toBe(false);
    expect(r.bon?.arms.map((a) => [a.arm, a.status, a.rank, a.winner])).toEqual([
      [1, 'green', undefined, false],
      [2, 'interrupted', undefined, false],
      [3, 'not-run', undefined, false],
    ]);
    expect(r.bon?.arms[0]).toMatchObject({ patchBytes: 1536, files: ['src/sum.js'], tokens: 1100 });
    expect(r.bon?.primer).toEqual({ tokens: 2100, cost: 0.005 });
    expect(r.phases.find((p) => p.name === 'harvest')?.status).toBe('skipped');
  });

  it('reads a log cut short: the phase it ends in failed as unfinished, the figures summed from the phases', () => {
    const r = collectReport(eventsThrough('arm3running'));
    expect(r.verdict).toBe('unfinished');
    expect(r.exit).toBeUndefined();
    expect(r.phases.find((p) => p.name === 'arm_3')).toMatchObject({
      status: 'failed',
      motif: expect.stringMatching(/^unfinished/),
    });
    expect(r.bon?.arms.find((a) => a.arm === 3)?.status).toBe('interrupted');
    expect(r.tokens).toBe(2100 + 1100 + 900);
  });

  it('reads newer optional fields generically: a budget stop, a gate red on HEAD already, an arm added live', () => {
    const events = eventsThrough('arm2').map((e) =>
      e.type === 'gate_result' && !e.ok ? ({ ...e, preexisting: true } as RunEvent) : e,
    );
    events.push(
      ev('phase_planned', 12660, {
        phase: { name: 'arm_4', kind: 'agent', attempts: 2, arm: 4, model: 'scripted/late' },
        before: 'harvest',
      }),
      ev('phase_started', 12700, { phase: 'arm_3', kind: 'agent' }),
      ev('phase_failed', 13000, {
        phase: 'arm_3',
        kind: 'agent',
        attempts: 2,
        motif: 'budget: the arm cap of $0.01 is reached',
        seconds: 0.3,
        tokens: 10,
        cost: 0.01,
      }),
      {
        ...ev('run_finished', 13100, {
          exit: 1,
          seconds: 13,
          tokens: 4110,
          cost: 0.0209,
          failedPhase: 'arm_3',
          interrupted: true,
        }),
        budget: 'run cap $0.02 reached',
      } as RunEvent,
    );
    const r = collectReport(events);
    expect(r).toMatchObject({ verdict: 'budget', budget: 'run cap $0.02 reached' });
    expect(r.phases.map((p) => p.name)).toEqual(['check', 'prime', 'arm_1', 'arm_2', 'arm_3', 'arm_4', 'harvest']);
    expect(r.bon?.arms.map((a) => [a.arm, a.status, a.model])).toEqual([
      [1, 'green', 'scripted/fast'],
      [2, 'red', 'scripted/sloppy'],
      [3, 'red', undefined],
      [4, 'not-run', 'scripted/late'],
    ]);
    expect(r.gates.find((g) => g.phase === 'arm_2')?.gates[1]).toMatchObject({ ok: false, preexisting: true });
    const md = markdownReport(r);
    expect(md).toMatch(/^## 💸 stopped by budget: run cap \$0\.02 reached at phase arm\\_3/);
    expect(md).toContain('❌ red: budget: the arm cap of $0.01 is reached');
    expect(md).toContain('⚠️ red on HEAD already');
    const s = suites(writtenJunit(r));
    expect(s.gates!.children.find((c) => c.attrs.name === 'arm_2: npm test')?.children[0]).toEqual({
      name: 'skipped',
      attrs: { message: 'pre-existing on HEAD' },
      children: [],
      text: '',
    });
    expect(counts(s.arms)).toEqual({ tests: 4, failures: 2, skipped: 1 });
  });
});

describe('markdownReport', () => {
  it('a green bon: the verdict, a row per phase, per arm (winner marked) and per gate, the apply command', () => {
    const md = markdownReport(collectReport(eventsThrough('harvested')));
    expect(md.split('\n')[0]).toBe(`## ✅ green — adw\\_bon ${BON_ADW}`);
    expect(tableRows(md, 'Phases')).toHaveLength(6);
    const arms = tableRows(md, 'Arms');
    expect(arms.map((row) => row.slice(0, 2))).toEqual([
      ['🏆 **#1**', '**arm 1** (winner)'],
      ['#2', 'arm 3'],
      ['#3', 'arm 2'],
    ]);
    expect(arms[2]![8]).toBe('2: src/sum.js, test/sum.test.js');
    expect(tableRows(md, 'Gates')).toHaveLength(6);
    expect(md).toContain(`\`\`\`sh\nfactory apply ${BON_ADW}\n\`\`\``);
    expectInert(md);
  });

  it('a failed build says where and why, above its tables', () => {
    const md = markdownReport(collectReport(failedBuild()));
    expect(md.split('\n')[0]).toBe(`## ❌ failed at phase gates — adw\\_build ${BUILD_ADW}`);
    expect(md).toContain('> **gates**: \\`npm test\\` exited 1: FAIL test/sum.test.js &#124; 1 failing');
    expect(tableRows(md, 'Phases').map((r) => [r[0], r[2], r[3]])).toEqual([
      ['check', '✅ ok', '1/1'],
      ['build', '✅ ok', '2/2'],
      ['gates', '❌ failed', '1/1'],
    ]);
    expect(tableRows(md, 'Arms')).toEqual([]);
    expect(tableRows(md, 'Gates').map((r) => r[4])).toEqual(['2', '2']);
  });

  it('an interrupted bon: the verdict, unranked arms, no apply command', () => {
    const md = markdownReport(collectReport(interruptedBon()));
    expect(md.split('\n')[0]).toMatch(/^## ⏹️ interrupted at phase arm\\_2/);
    expect(md).toContain('### Arms (no harvest: not ranked)');
    expect(tableRows(md, 'Arms').map((r) => [r[0], r[3]])).toEqual([
      ['', '✅ green'],
      ['', '⏹️ interrupted: interrupted by the user'],
      ['', '⏭️ not run'],
    ]);
    expect(md).not.toContain('```');
  });

  it('hostile motifs, gate names, models and file names never break a table nor carry HTML', () => {
    const md = markdownReport(collectReport(hostileBon()));
    expectInert(md);
    expect(md).not.toContain('<script');
    expect(md).not.toContain('\u001b');
    expect(tableRows(md, 'Arms')).toHaveLength(3);
    expect(tableRows(md, 'Gates')).toHaveLength(6);
    const red = tableRows(md, 'Arms')[2]!;
    expect(red[2]).toBe('evil&#124;&lt;model&gt;');
    expect(red[3]).toContain(
      'FAIL &#124; a&#124;b<br>line two<br>&lt;script&gt;alert("x")&lt;/script&gt; &amp; red nul bell',
    );
    expect(red[3]).toContain('\\`code\\` \\*\\*bold\\*\\* \\[l\\](javascript:x)');
    expect(red[8]).toBe('2: src/a&#124;b.js, x<br>&lt;img src=y&gt;.js');
    expect(tableRows(md, 'Gates')[3]![1]).toBe('npm &#124; test &lt;b&gt;');
  });
});

describe('junitReport', () => {
  it('a green bon: phases without the arms, an arms suite with its red arm, a gates suite', () => {
    const s = suites(writtenJunit(collectReport(eventsThrough('harvested'))));
    expect(Object.keys(s)).toEqual(['phases', 'arms', 'gates']);
    expect(counts(s.phases)).toEqual({ tests: 3, failures: 0, skipped: 0 });
    expect(counts(s.arms)).toEqual({ tests: 3, failures: 1, skipped: 0 });
    expect(counts(s.gates)).toEqual({ tests: 6, failures: 1, skipped: 0 });
    const red = s.arms!.children.find((c) => c.attrs.name === 'arm_2 (scripted/sloppy)')!;
    expect(red.children[0]).toMatchObject({
      name: 'failure',
      attrs: { message: RED_MOTIF, type: 'gate' },
      text: RED_MOTIF,
    });
  });

  it('a failed build: its failed phase and the red gate as failures', () => {
    const xml = writtenJunit(collectReport(failedBuild()));
    const s = suites(xml);
    expect(Object.keys(s)).toEqual(['phases', 'gates']);
    expect(counts(s.phases)).toEqual({ tests: 3, failures: 1, skipped: 0 });
    expect(counts(s.gates)).toEqual({ tests: 2, failures: 1, skipped: 0 });
    expect(parseXml(xml).attrs).toMatchObject({ tests: '5', failures: '2', time: '21.000' });
  });

  it('an interrupted bon: the interrupted and never-run arms skipped, the phase not reached skipped', () => {
    const s = suites(writtenJunit(collectReport(interruptedBon())));
    expect(counts(s.arms)).toEqual({ tests: 3, failures: 0, skipped: 2 });
    expect(counts(s.phases)).toEqual({ tests: 3, failures: 0, skipped: 1 });
  });

  it('an infrastructure failure is an error, not a failure', () => {
    const events = failedBuild().slice(0, 5);
    events.push(
      b('phase_failed', 6, {
        phase: 'build',
        kind: 'agent',
        attempts: 2,
        motif: 'pi 0.1 is too old',
        failure: 'version',
        seconds: 0,
        tokens: 0,
        cost: 0,
      }),
    );
    events.push(b('run_finished', 7, { exit: 2, seconds: 1, tokens: 0, cost: 0, failedPhase: 'build' }));
    const root = parseXml(writtenJunit(collectReport(events)));
    expect(root.attrs).toMatchObject({ tests: '3', failures: '0', errors: '1', skipped: '1' });
  });

  it('hostile texts: well-formed, control characters and escapes stripped, the rest read back as written', () => {
    const xml = writtenJunit(collectReport(hostileBon()));
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    const s = suites(xml);
    const clean =
      'FAIL | a|b\nline two\r\n<script>alert("x")</script> & red nul bell ]]> \'q\' `code` **bold** [l](javascript:x) ';
    const red = s.arms!.children.find((c) => c.attrs.name === 'arm_2 (evil|<model>)')!;
    expect(red.children[0]).toMatchObject({ name: 'failure', attrs: { message: clean }, text: clean });
    const gate = s.gates!.children.find((c) => c.attrs.name === 'arm_2: npm | test <b>')!;
    expect(gate.children[0]!.attrs.message).toBe(clean);
  });
});

describe('the XML checkers of this file', () => {
  it('refuse what is not well-formed', () => {
    const bad = [
      '<a>x & y</a>',
      '<a b="<"/>',
      '<a><b></a></b>',
      '<a b="1" b="2"/>',
      '<a>\u0001</a>',
      '<a>&#1;</a>',
      '<a>&nbsp;</a>',
      '<a/><b/>',
      '<a>',
    ];
    for (const xml of bad) expect(() => parseXml(xml), xml).toThrow(/not well-formed/);
    expect(parseXml('<?xml version="1.0"?>\n<a x="&quot;&#10;"><b/>t&amp;</a>\n')).toEqual({
      name: 'a',
      attrs: { x: '"\n' },
      children: [{ name: 'b', attrs: {}, children: [], text: '' }],
      text: 't&',
    });
    const dir = tempDir('factory-ci-report-', cleanups);
    const file = path.join(dir, 'bad.xml');
    fs.writeFileSync(file, '<a>\u0001</a>');
    if (EXPAT) expect(() => expatAccepts(file)).toThrow(/expat refused/);
  });
});

describe('parseReportKinds and writeReports', () => {
  it('takes md, junit or both, trimmed and deduplicated', () => {
    expect(parseReportKinds('md')).toEqual(['md']);
    expect(parseReportKinds(' junit , md ')).toEqual(['junit', 'md']);
    expect(parseReportKinds('md,md,junit')).toEqual(['md', 'junit']);
  });

  it('refuses an empty or unknown kind in one line', () => {
    expect(parseReportKinds('xml')).toEqual({ motif: '--report takes md, junit or both (got "xml")' });
    expect(parseReportKinds('md,html')).toEqual({ motif: '--report takes md, junit or both (got "html")' });
    expect(parseReportKinds('')).toEqual({ motif: '--report takes md, junit or both (got "")' });
    expect(parseReportKinds('md,')).toEqual({ motif: '--report takes md, junit or both (got "md,")' });
  });

  it('writes report.md and junit.xml into a folder it creates', () => {
    const dir = path.join(tempDir('factory-ci-report-', cleanups), 'a', 'b');
    const report = collectReport(eventsThrough('harvested'));
    const files = writeReports(['md', 'junit'], report, dir);
    expect(files).toEqual([path.join(dir, 'report.md'), path.join(dir, 'junit.xml')]);
    expect(fs.readFileSync(files[0]!, 'utf8')).toBe(markdownReport(report));
    expect(fs.readFileSync(files[1]!, 'utf8')).toBe(junitReport(report));
  });
});
