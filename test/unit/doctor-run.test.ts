// runDoctor, doctorExit and the headless outputs, on fake checks: the concurrency and streaming order are
// properties of the runner, proven with promises the test resolves in its own order (no timing involved).
import { describe, expect, it } from 'vitest';
import { doctorJson, doctorSummary, formatDoctorRows } from '../../src/doctor/report.js';
import { doctorExit, runDoctor, selects, unknownSelectors } from '../../src/doctor/run.js';
import type { CheckResult, DoctorCheck, DoctorContext, DoctorResult } from '../../src/doctor/types.js';
import { emptyDotEnv } from '../../src/config/env.js';
import { workspacePaths } from '../../src/config/paths.js';
import { defaultRoster } from '../../src/config/roster.js';

const ctx: DoctorContext = {
  root: '/w',
  paths: workspacePaths('/w'),
  factoryRoot: '/f',
  env: {},
  dotenv: emptyDotEnv('/w'),
  roster: defaultRoster(),
  pi: new Error('no pi in a unit test'),
};

function deferred(): { promise: Promise<CheckResult>; resolve(r: CheckResult): void } {
  let resolve!: (r: CheckResult) => void;
  const promise = new Promise<CheckResult>((r) => (resolve = r));
  return { promise, resolve };
}

function fake(id: string, run: () => Promise<CheckResult>, extra: Partial<DoctorCheck> = {}): DoctorCheck {
  return { id, category: 'tools', severity: 'required', title: id, run, ...extra };
}

function result(id: string, status: DoctorResult['status'], extra: Partial<DoctorResult> = {}): DoctorResult {
  return { id, category: 'tools', severity: 'required', title: id, status, detail: `${id} detail`, ms: 1, ...extra };
}

describe('runDoctor', () => {
  it('starts every check before any resolves and streams results in resolution order', async () => {
    const a = deferred();
    const b = deferred();
    const c = deferred();
    const started: string[] = [];
    const updates: string[] = [];
    const run = runDoctor(ctx, {
      checks: [fake('a', () => a.promise), fake('b', () => b.promise), fake('c', () => c.promise)],
      onStart: (check) => started.push(check.id),
      onUpdate: (id) => updates.push(id),
    });
    await Promise.resolve();
    expect(started).toEqual(['a', 'b', 'c']); // all in flight while none has resolved
    c.resolve({ status: 'ok', detail: 'c' });
    await new Promise((r) => setImmediate(r));
    expect(updates).toEqual(['c']);
    a.resolve({ status: 'warn', detail: 'a', fix: 'do a' });
    b.resolve({ status: 'fail', detail: 'b\nsecond line', fix: 'do b' });
    const results = await run;
    expect(updates).toEqual(['c', 'a', 'b']);
    expect(results.map((r) => r.id)).toEqual(['a', 'b', 'c']); // final order = check order
    expect(results[1]).toMatchObject({ status: 'fail', detail: 'b second line', fix: 'do b' });
  });

  it('a check that throws is a failed check; --quick skips the slow ones without running them', async () => {
    let slowRan = false;
    const results = await runDoctor(ctx, {
      quick: true,
      checks: [
        fake('boom', async () => {
          throw new Error('probe exploded');
        }),
        fake(
          'slow',
          async () => {
            slowRan = true;
            return { status: 'ok', detail: '' };
          },
          { slow: true },
        ),
      ],
    });
    expect(results[0]).toMatchObject({ status: 'fail', detail: 'the check itself failed: probe exploded' });
    expect(results[1]).toMatchObject({ status: 'skipped', detail: 'skipped by --quick' });
    expect(slowRan).toBe(false);
  });

  it('selects by id or id prefix, and names selectors that match nothing', async () => {
    const checks = [
      fake('tools.git', async () => ({ status: 'ok', detail: '' })),
      fake('node.ext.obs', async () => ({ status: 'ok', detail: '' })),
    ];
    expect(selects(['node'], 'node.ext.obs')).toBe(true);
    expect(selects(['node.ex'], 'node.ext.obs')).toBe(false);
    expect(unknownSelectors(checks, ['tools.git', 'nope'])).toEqual(['nope']);
    const results = await runDoctor(ctx, { checks, only: ['node.ext'] });
    expect(results.map((r) => r.id)).toEqual(['node.ext.obs']);
  });

  it('drops a fix hint from an ok or skipped result', async () => {
    const [r] = await runDoctor(ctx, {
      checks: [fake('x', async () => ({ status: 'ok', detail: 'fine', fix: 'nothing' }))],
    });
    expect(r?.fix).toBeUndefined();
  });
});

describe('doctorExit', () => {
  it('is 0 when every required check passes; optional failures and warnings do not count unless strict', () => {
    const results = [
      result('a', 'ok'),
      result('b', 'fail', { severity: 'optional' }),
      result('c', 'warn'),
      result('d', 'skipped'),
    ];
    expect(doctorExit(results)).toBe(0);
    expect(doctorExit(results, { strict: true })).toBe(1);
    expect(doctorExit([...results, result('e', 'fail')])).toBe(1);
  });
});

describe('headless rows and --json', () => {
  const results = [
    result('node.rules', 'fail', { category: 'node', detail: 'broken', fix: 'correct it' }),
    result('tools.git', 'ok', { detail: 'git 2.43.0' }),
    result('tools.sqlite3', 'warn', { severity: 'optional', detail: 'not found', fix: 'apt-get install sqlite3' }),
    result('tests.battery', 'skipped', { category: 'tests', detail: 'skipped by --quick' }),
  ];

  it('groups rows by category in display order, fix under its row, summary last', () => {
    expect(formatDoctorRows(results)).toEqual([
      'tools',
      '  ✓ tools.git      git 2.43.0',
      '  ! tools.sqlite3  not found (optional)',
      '                   fix: apt-get install sqlite3',
      'node',
      '  ✗ node.rules     broken',
      '                   fix: correct it',
      'tests',
      '  – tests.battery  skipped by --quick',
      '1 ok, 1 warning, 1 failed, 1 skipped',
    ]);
    expect(doctorSummary([result('a', 'ok'), result('b', 'warn'), result('c', 'warn')])).toBe(
      '1 ok, 2 warnings, 0 failed, 0 skipped',
    );
  });

  it('--json carries every field, fix null when absent', () => {
    expect(doctorJson(results.slice(0, 2))).toEqual({
      checks: [
        {
          id: 'node.rules',
          category: 'node',
          severity: 'required',
          status: 'fail',
          detail: 'broken',
          fix: 'correct it',
        },
        { id: 'tools.git', category: 'tools', severity: 'required', status: 'ok', detail: 'git 2.43.0', fix: null },
      ],
    });
  });
});
