// Gates on real files and real bash commands (no stand-ins): green and red verdicts, the bounded output tail,
// the timeout and the abort that end the whole process group, and declared paths that escape the tree.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  changedFilesExist,
  commandGate,
  flattenTail,
  motif,
  MOTIF_MAX,
  OUTPUT_TAIL_BYTES,
  tellingOutput,
  type GateReport,
} from '../../src/gates/judges.js';

import { processesTagged } from '../helpers/factory.js';

let dir: string;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-gates-')));
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src/add.js'), 'module.exports = {};\n');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('changedFilesExist', () => {
  it('is green when every declared file exists in the tree', () => {
    const report = changedFilesExist({ changed_files: ['src/add.js', './src/../src/add.js'] }, dir);
    expect(report).toMatchObject({ gate: 'changed_files', ok: true });
    expect(report.motif).toBeUndefined();
  });

  it('names a declared file that does not exist', () => {
    const report = changedFilesExist({ changed_files: ['src/add.js', 'src/missing.js'] }, dir);
    expect(report.ok).toBe(false);
    expect(report.motif).toBe('changed_files: src/missing.js does not exist in the work tree');
  });

  it('refuses paths that escape the tree, by dots, by absolute path or by symlink', () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-outside-')));
    try {
      fs.writeFileSync(path.join(outside, 'secret.txt'), 'x');
      fs.symlinkSync(outside, path.join(dir, 'link'));
      const escapes = [`../${path.basename(outside)}/secret.txt`, path.join(outside, 'secret.txt'), 'link/secret.txt'];
      for (const declared of escapes) {
        const report = changedFilesExist({ changed_files: [declared] }, dir);
        expect(report.ok, declared).toBe(false);
        expect(report.motif, declared).toContain('escapes the work tree');
      }
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('refuses a folder declared as a changed file, and counts the other refusals', () => {
    const report = changedFilesExist({ changed_files: ['src', 'a.js', 'b.js'] }, dir);
    expect(report.motif).toBe('changed_files: src is a folder, not a file (and 2 more)');
  });
});

describe('commandGate', () => {
  it('is green when the command exits 0 in its folder, with the output kept', async () => {
    const report = await commandGate({
      run: 'pwd; echo to-stderr >&2',
      cwd: path.join(dir, 'src'),
      timeoutMs: 10_000,
    })();
    expect(report.ok).toBe(true);
    expect(report.gate).toBe('pwd; echo to-stderr >&2');
    expect(report.outputTail).toContain(path.join(dir, 'src'));
    expect(report.outputTail).toContain('to-stderr');
    expect(report.seconds).toBeGreaterThan(0);
  });

  it('is red on a non-zero exit: the motif names the command, the exit and the end of the output', async () => {
    const report = await commandGate({
      run: 'echo first line; echo "boom: 3 !== 5" >&2; exit 3',
      cwd: dir,
      timeoutMs: 10_000,
    })();
    expect(report.ok).toBe(false);
    expect(report.motif).toBe(
      '`echo first line; echo "boom: 3 !== 5" >&2; exit 3` exited 3: first line | boom: 3 !== 5',
    );
  });

  it('keeps only the last ~4 KB of a long output and a one-line motif within bounds', async () => {
    const run = `node -e 'for (let i = 0; i < 5000; i++) console.log("line " + i)'; exit 1`;
    const report = await commandGate({ run, cwd: dir, timeoutMs: 20_000 })();
    expect(report.ok).toBe(false);
    expect(Buffer.byteLength(report.outputTail!)).toBeLessThanOrEqual(OUTPUT_TAIL_BYTES);
    expect(report.outputTail).toContain('line 4999');
    expect(report.outputTail).not.toContain('line 100\n');
    expect(report.motif!.length).toBeLessThanOrEqual(MOTIF_MAX);
    expect(report.motif).not.toContain('\n');
    expect(report.motif).toMatch(/exited 1: … \| line \d+ \| .*line 4999$/);
    // What an agent running the command would read is the whole output, not the kept tail (the forecast's measure).
    const whole = Array.from({ length: 5000 }, (_, i) => `line ${i}\n`).join('');
    expect(report.outputBytes).toBe(Buffer.byteLength(whole));
  });

  it('bounds the kept output in bytes, not characters, when the output is not ASCII', async () => {
    const report = await commandGate({
      run: `node -e 'for (let i = 0; i < 400; i++) console.log("éàü—✗ ligne " + i)'; exit 1`,
      cwd: dir,
      timeoutMs: 20_000,
    })();
    expect(Buffer.byteLength(report.outputTail!)).toBeLessThanOrEqual(OUTPUT_TAIL_BYTES);
    expect(report.outputTail).toMatch(/éàü—✗ ligne 399\n$/);
    expect(report.outputTail).not.toContain('\ufffd');
  });

  it('ends the whole process group on timeout and says so', async () => {
    const tag = `gate-timeout-${process.pid}`;
    // A background sleep in the same group as well as the foreground one: both must go.
    const report = await commandGate(
      { run: 'echo started; sleep 600 & sleep 600', cwd: dir, timeoutMs: 300 },
      { runTag: tag, killGraceMs: 200 },
    )();
    expect(report.ok).toBe(false);
    expect(report.motif).toMatch(
      /^`echo started; sleep 600 & sleep 600` timed out after 300 ms \(its process group was ended\): started$/,
    );
    expect(processesTagged(tag)).toEqual([]);
  });

  it('ends the whole process group on abort', async () => {
    const tag = `gate-abort-${process.pid}`;
    const aborter = new AbortController();
    const gate = commandGate(
      { run: 'sleep 600', cwd: dir, timeoutMs: 60_000 },
      { runTag: tag, signal: aborter.signal, killGraceMs: 200 },
    );
    const pending = gate();
    const end = Date.now() + 5000;
    while (processesTagged(tag).length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(processesTagged(tag).length).toBeGreaterThan(0);
    aborter.abort();
    const report = await pending;
    expect(report.ok).toBe(false);
    expect(report.motif).toBe('`sleep 600` interrupted by the user (its process group was ended)');
    expect(processesTagged(tag)).toEqual([]);
  });

  it('does not start when already aborted, nor in a folder that does not exist', async () => {
    const aborter = new AbortController();
    aborter.abort();
    const tag = `gate-never-${process.pid}`;
    const aborted = await commandGate(
      { run: 'touch started', cwd: dir, timeoutMs: 1000 },
      { signal: aborter.signal, runTag: tag },
    )();
    expect(aborted.motif).toBe('`touch started` not run: interrupted by the user');
    expect(fs.existsSync(path.join(dir, 'started'))).toBe(false);
    const missing = await commandGate({ run: 'true', cwd: path.join(dir, 'nope'), timeoutMs: 1000 })();
    expect(missing.ok).toBe(false);
    expect(missing.motif).toBe(`\`true\` not run: its folder ${path.join(dir, 'nope')} does not exist`);
  });

  it('passes the run tag and the given environment to the command', async () => {
    const report = await commandGate(
      { run: 'echo "$FACTORY_RUN_TAG/$ONLY_HERE"; test -z "$NOT_GIVEN"', cwd: dir, timeoutMs: 5000 },
      { runTag: 'feedbeef', env: { PATH: process.env.PATH, ONLY_HERE: 'yes' } },
    )();
    expect(report.ok).toBe(true);
    expect(report.outputTail!.trim()).toBe('feedbeef/yes');
  });
});

describe("the colour of a gate's output", () => {
  /** Escape and control bytes a terminal interprets (tab and newline are text). */
  const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

  it('a runner that colours anyway: the motif and the kept output are plain text, the failing test named', async () => {
    const run = [
      "printf '\\033[2mrunning test/a.test.js…\\033[22m\\r\\033[2K \\033]8;;file:///x/test/a.test.js\\033\\\\test/a.test.js\\033]8;;\\033\\\\\\n'",
      "printf '   \\033[31m✗\\033[39m \\033[1mfarewell > says goodbye\\033[22m\\n     \\033[31mexpected: Goodbye\\033[39m\\n'",
      'exit 1',
    ].join('; ');
    const report = await commandGate({ run, cwd: dir, timeoutMs: 5000 })();
    expect(report.ok).toBe(false);
    expect(report.outputTail).toBe(' test/a.test.js\n   ✗ farewell > says goodbye\n     expected: Goodbye\n');
    expect(report.motif).toMatch(/ exited 1: ✗ farewell > says goodbye \| expected: Goodbye$/);
    expect(report.motif).not.toMatch(CONTROL);
  });

  it('a declared path carrying escape bytes reaches the motif as plain text', () => {
    const report = changedFilesExist({ changed_files: ['src/\x1b[31mred\x1b[0m.js'] }, dir);
    expect(report.motif).toBe('changed_files: src/red.js does not exist in the work tree');
  });
});

describe('motif', () => {
  const green: GateReport = { gate: 'changed_files', ok: true, seconds: 0.01 };
  it('is empty when every gate passes (and for no gate at all)', () => {
    expect(motif([green, { ...green, gate: 'npm test' }])).toBe('');
    expect(motif([])).toBe('');
  });

  it("is the first red gate's motif, on one line", () => {
    const reports: GateReport[] = [
      green,
      { gate: 'npm test', ok: false, motif: '`npm test` exited 1:\nfail', seconds: 1 },
      { gate: 'npm run lint', ok: false, motif: '`npm run lint` exited 2', seconds: 1 },
    ];
    expect(motif(reports)).toBe('`npm test` exited 1: fail');
    expect(motif([{ gate: 'x', ok: false, seconds: 0 }])).toBe('gate x failed');
    expect(motif([{ gate: 'x', ok: false, motif: '\x1b[31m✗\x1b[39m failed\r\nnext\x07', seconds: 0 }])).toBe(
      '✗ failed next',
    );
  });
});

describe('flattenTail', () => {
  it('keeps the last lines that fit, without stack frames or blank lines', () => {
    const out =
      'ok 1\n\nAssertionError: -1 !== 5\n    at Test.run (node:internal/test_runner/test:796:25)\n    at x (y.js:1:1)\n# fail 1\n';
    expect(flattenTail(out, 200)).toBe('ok 1 | AssertionError: -1 !== 5 | # fail 1');
    expect(flattenTail(out, 30)).toBe('… | # fail 1');
    expect(flattenTail('x'.repeat(50), 10)).toBe(`…${'x'.repeat(9)}`);
  });

  it('picks the failure lines of a test run, its closing counts last', () => {
    const tap =
      "TAP version 13\nok 1 - greets\nnot ok 2 - says goodbye\n  ---\n  error: |-\n    Expected values to be strictly equal:\n  expected: 'Goodbye'\n  actual: 'Bye'\n  ...\n1..2\n# pass 1\n# fail 1\n";
    expect(tellingOutput(tap, 300)).toBe(
      "not ok 2 - says goodbye | error: |- | Expected values to be strictly equal: | expected: 'Goodbye' | actual: 'Bye' | # pass 1 | # fail 1",
    );
    expect(tellingOutput('all fine\nexit code 3\n', 300)).toBe('all fine | exit code 3');
  });
});
