// A red gate's motif keeps the runner's own summary (issue 23, P8): which test failed and why, and the closing
// counts. The samples in test/fixtures/runner-output were captured by running small failing suites on this machine
// (see test/fixtures/runner-output/README.md); today's motif dropped pytest's `FAILED …` line and every count.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MOTIF_MAX, tellingOutput } from '../../src/gates/judges.js';
import { summaryOf } from '../../src/gates/runnerSummary.js';

const SAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/runner-output');
const sample = (name: string): string => fs.readFileSync(path.join(SAMPLES, name), 'utf8');
/** The room a motif leaves its output after "`<command>` exited 1: ". */
const ROOM = MOTIF_MAX - 40;

describe('the runner summary lines a red motif keeps (real output)', () => {
  const cases: [file: string, kept: string[]][] = [
    ['pytest.txt', ['FAILED test_calc.py::test_add_wrong - assert 4 == 5', '1 failed, 3 passed in 0.26s']],
    [
      'unittest.txt',
      [
        'FAIL: test_wrong (test_unit.TestCalc.test_wrong)',
        'AssertionError: 4 != 5',
        'Ran 2 tests in 0.001s',
        'FAILED (failures=1)',
      ],
    ],
    ['node-test-tap.txt', ['not ok 2 - adds wrong', '# pass 1', '# fail 1']],
    ['node-test-spec.txt', ['✖ says goodbye (1.2ms)', 'ℹ pass 1', 'ℹ fail 1']],
    [
      'cargo-test.txt',
      [
        "thread 'tests::adds_wrong' (10336) panicked at src/lib.rs:9:23:",
        'assertion `left == right` failed',
        'test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.19s',
      ],
    ],
    ['vitest.txt', ['FAIL  test/farewell.vitest.test.js > farewell > says goodbye', 'Tests 1 failed | 1 passed (2)']],
    ['jest.txt', ['● farewell › says goodbye', 'Tests: 1 failed, 1 passed, 2 total']],
    ['mocha.txt', ['1) farewell', '1 passing (4ms)', '1 failing']],
    [
      'mocha-captured.txt',
      [
        '1) adds wrong',
        'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
        '1 passing (4ms)',
        '1 failing',
      ],
    ],
    ['jest-captured.txt', ['✕ adds wrong (2 ms)', '● adds wrong', 'Tests: 1 failed, 1 passed, 2 total']],
    ['uvu-captured.txt', ['FAIL  "adds wrong"', '++5    (Expected)', '--4    (Actual)', 'Total: 2', 'Passed: 1']],
  ];
  for (const [file, kept] of cases) {
    it(`${file}: ${kept.join(' · ')}`, () => {
      const telling = tellingOutput(sample(file), ROOM);
      for (const line of kept) expect(telling).toContain(line);
      expect(telling.length).toBeLessThanOrEqual(ROOM);
    });
  }

  it("pytest: the short test summary replaces the failure blocks above it (the output's tail may cut them mid-way)", () => {
    expect(tellingOutput(sample('pytest.txt'), ROOM)).toBe(
      'FAILED test_calc.py::test_add_wrong - assert 4 == 5 | 1 failed, 3 passed in 0.26s',
    );
    // The tail of a long run starts inside a failure block: the summary is what is read.
    const cut = sample('pytest.txt').split('\n').slice(12).join('\n');
    expect(tellingOutput(cut, ROOM)).toBe(
      'FAILED test_calc.py::test_add_wrong - assert 4 == 5 | 1 failed, 3 passed in 0.26s',
    );
  });

  it('counts come last and whole: a long list of failures is cut, never the counts', () => {
    const many = Array.from({ length: 30 }, (_, i) => `FAILED test_x.py::test_${i} - assert ${i} == ${i + 1}`).join(
      '\n',
    );
    const out = `=== short test summary info ===\n${many}\n=== 30 failed, 2 passed in 1.10s ===\n`;
    const telling = summaryOf(out, ROOM);
    expect(telling.startsWith('FAILED test_x.py::test_0 - assert 0 == 1 | ')).toBe(true);
    expect(telling.endsWith('… | 30 failed, 2 passed in 1.10s')).toBe(true);
    expect(telling.length).toBeLessThanOrEqual(ROOM);
  });

  it('go test: --- FAIL and the package line (go output written by hand in its format: go is not installed here)', () => {
    const go =
      '=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    calc_test.go:8: add(2, 2) = 4, want 5\nFAIL\nFAIL\texample.com/calc\t0.002s\n';
    expect(summaryOf(go, ROOM)).toBe(
      '--- FAIL: TestAdd (0.00s) | calc_test.go:8: add(2, 2) = 4, want 5 | FAIL example.com/calc 0.002s',
    );
  });

  it('falls back to the tail when no line names a failure', () => {
    expect(summaryOf('building…\nmake: *** [check] Segmentation fault\n', ROOM)).toBe(
      'building… | make: *** [check] Segmentation fault',
    );
  });
});
