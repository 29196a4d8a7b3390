// `factory runs` and `factory show` through the built CLI, over runs recorded by the CLI itself (real pi 0.85.1,
// the factory's pi node, the scripted model) in a temp repo: the table, --json, a run's phases/attempts/sessions/
// motif, bad ids refused in one line, and the trace store rebuilt from the raw run logs when factory.db is gone
// or damaged.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLedger } from '../../src/trace/ledger.js';
import { report, say } from '../../src/scripted/tape.js';
import type { PhaseRow, RunRow, SessionRow } from '../../src/trace/store.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { promptBench, type PromptBench } from '../helpers/factory.js';

const GOOD = { status: 'success', summary: 'Three files.', artifacts: [], notes_for_next_agent: '' };

let bench: PromptBench;
let greenId: string;
let failedId: string;

function cli(args: string[]): Promise<CliRun> {
  return runCli(args, { cwd: bench.repo.dir, env: { ...bench.rig.env, CI: 'true' } });
}

function adwIdOf(stderr: string): string {
  const match = /^\[([0-9a-f]{8})\]/.exec(stderr);
  if (!match) throw new Error(`no run id in:\n${stderr}`);
  return match[1]!;
}

function dbFile(): string {
  return path.join(bench.paths.dataDir, 'factory.db');
}

/** The runs table as { id → cells }, read from `factory runs` output (header first). */
function tableRows(stdout: string): Map<string, string[]> {
  const [header, ...lines] = stdout.trim().split('\n');
  expect(header!.split(/\s{2,}/)).toEqual(['id', 'adw', 'status', 'phases', 'tokens', 'cost', 'age']);
  return new Map(lines.map((line) => [line.slice(0, 8), line.split(/\s{2,}/)]));
}

function expectBothListed(stdout: string): void {
  const rows = tableRows(stdout);
  expect([...rows.keys()].sort()).toEqual([greenId, failedId].sort());
  expect(rows.get(greenId)!.slice(0, 4)).toEqual([greenId, 'adw_prompt', 'green', '2/2']);
  expect(rows.get(failedId)!.slice(0, 4)).toEqual([failedId, 'adw_prompt', 'failed', '0/2']);
  for (const cells of rows.values()) expect(cells[5]).toMatch(/^\$0\.\d{4}$/);
}

beforeAll(async () => {
  // One tape per run, picked by the directive in the ask: the failed run answers without any envelope.
  bench = await promptBench({ green: [report(GOOD)], bad: [say('No JSON from me.')] });
  const green = await cli(['prompt', '[tape:green] Which files make up this repo?', '--model', 'scripted/alpha']);
  expect(green.code).toBe(0);
  greenId = adwIdOf(green.stderr);
  const failed = await cli([
    'prompt',
    '[tape:bad] Which files make up this repo?',
    '--retries',
    '0',
    '--model',
    'scripted/alpha',
  ]);
  expect(failed.code).toBe(1);
  failedId = adwIdOf(failed.stderr);
});

afterAll(async () => {
  await bench?.cleanup();
});

describe('factory runs / factory show over two CLI runs', () => {
  it('lists both runs, newest first, with status, phases and cost', async () => {
    const r = await cli(['runs']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expectBothListed(r.stdout);
    expect(r.stdout.trim().split('\n')[1]!.startsWith(failedId)).toBe(true);
  });

  it('gives the same rows with --json', async () => {
    const r = await cli(['runs', '--json']);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as RunRow[];
    expect(rows.map((row) => row.adwId)).toEqual([failedId, greenId]);
    expect(rows[0]).toMatchObject({
      adwName: 'adw_prompt',
      status: 'failed',
      phases: '0/2',
      exitCode: 1,
      failedPhase: 'prompt',
      cwd: bench.repo.dir,
    });
    expect(rows[1]).toMatchObject({
      adwName: 'adw_prompt',
      status: 'green',
      phases: '2/2',
      exitCode: 0,
      cwd: bench.repo.dir,
    });
    for (const row of rows) {
      expect(row.tokens).toBeGreaterThan(0);
      expect(row.cost).toBeGreaterThan(0);
    }
  });

  it('shows the failed run: phases with attempts, the ledger session id and the motif', async () => {
    const ledger = readLedger(bench.paths.ledgerFile).filter((line) => line.adw_id === failedId);
    expect(ledger).toHaveLength(1);
    const sessionId = ledger[0]!.session_id;
    const r = await cli(['show', failedId]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${failedId} · adw_prompt · failed at prompt · `));
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^prompt\\s+agent\\s+failed\\s+1/1\\s+.*${sessionId}$`)),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^dispose\s+code\s+pending\s+0\/1\b/));
    // The motif once, under the attempt it ended (not again as the phase's line).
    expect(lines.filter((l) => l.includes('envelope refused: no JSON object in the answer'))).toEqual([
      '    ✗ envelope refused: no JSON object in the answer',
    ]);
    const ledgerAt = lines.indexOf('sessions (ledger):');
    expect(ledgerAt).toBeGreaterThan(0);
    expect(lines[ledgerAt + 1]).toMatch(new RegExp(`^  ${sessionId}  prompt  scripted/alpha`));
  });

  it('shows the green run with --json: phases, attempts and the session of each', async () => {
    const [ledger] = readLedger(bench.paths.ledgerFile).filter((line) => line.adw_id === greenId);
    const r = await cli(['show', greenId, '--json']);
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout) as { run: RunRow; phases: PhaseRow[]; sessions: SessionRow[] };
    expect(shown.run).toMatchObject({ adwId: greenId, status: 'green' });
    expect(shown.phases.map((p) => [p.name, p.kind, p.status, p.attempts, p.maxAttempts])).toEqual([
      ['prompt', 'agent', 'ok', 1, 3],
      ['dispose', 'code', 'ok', 1, 1],
    ]);
    expect(shown.phases[0]!.sessionId).toBe(ledger!.session_id);
    expect(shown.sessions).toEqual([
      expect.objectContaining({ sessionId: ledger!.session_id, phase: 'prompt', model: 'scripted/alpha' }),
    ]);
  });

  const badIds: [string, string[]][] = [
    ['an id that is not 8 hex characters', ['show', 'zz']],
    ['an id no run has', ['show', 'abcdef12']],
    ['no id at all', ['show']],
  ];
  for (const [name, args] of badIds) {
    it(`refuses show with ${name}: exit 2, one line`, async () => {
      const r = await cli(args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^factory: /);
    });
  }
});

describe('over a roster that does not load (an unknown role)', () => {
  it('runs, show and clean still work and say why once; a run is refused before any token', async () => {
    const file = path.join(bench.repo.dir, 'adws', 'adw_config', 'factory.config.yaml');
    const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'gateway: ""\nagents:\n  bulider:\n    model: scripted/alpha\n');
    try {
      for (const args of [['runs'], ['show', greenId], ['clean', '--dry-run']]) {
        const r = await cli(args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        expect(r.stderr.trim().split('\n')).toEqual([
          expect.stringMatching(
            /^factory: unknown role bulider in .*did you mean builder\?.* — not needed here, going on without it$/,
          ),
        ]);
      }
      const refused = await cli(['prompt', 'Which files make up this repo?']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^factory: unknown role bulider/);
    } finally {
      if (before === undefined) fs.rmSync(file);
      else fs.writeFileSync(file, before);
    }
  });
});

describe('the trace store rebuilt from the run logs', () => {
  it('still lists both runs after factory.db was deleted', async () => {
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(dbFile() + suffix, { force: true });
    const r = await cli(['runs']);
    expect(r.code).toBe(0);
    expectBothListed(r.stdout);
    expect(fs.existsSync(dbFile())).toBe(true);
    // The motif and the session came back too: they live in the run log and the ledger, not only in the DB.
    const shown = await cli(['show', failedId]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('    ✗ envelope refused: no JSON object in the answer');
    expect(shown.stdout).toContain(readLedger(bench.paths.ledgerFile).find((l) => l.adw_id === failedId)!.session_id);
  });

  it('warns about a corrupt factory.db, moves it aside, still lists both runs, and the new one is sound', async () => {
    for (const suffix of ['-wal', '-shm']) fs.rmSync(dbFile() + suffix, { force: true });
    const garbage = Buffer.alloc(16_384);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 151 + 7) % 256;
    fs.writeFileSync(dbFile(), garbage);
    const r = await cli(['runs']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^factory: trace: factory\.db was damaged .*moved aside to factory\.db\.corrupt-/m);
    expectBothListed(r.stdout);
    // Nothing lost: the damaged bytes are kept beside it.
    const aside = fs
      .readdirSync(bench.paths.dataDir)
      .filter((n) => n.startsWith('factory.db.corrupt-') && !/-(wal|shm)$/.test(n));
    expect(aside).toHaveLength(1);
    expect(fs.readFileSync(path.join(bench.paths.dataDir, aside[0]!)).equals(garbage)).toBe(true);
    const db = new Database(dbFile(), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const ids = (db.prepare('SELECT adw_id FROM runs ORDER BY adw_id').all() as { adw_id: string }[]).map(
        (row) => row.adw_id,
      );
      expect(ids).toEqual([greenId, failedId].sort());
    } finally {
      db.close();
    }
    // Read again: the rebuilt database is used as it is, with no new warning.
    const again = await cli(['runs']);
    expect(again.stderr).toBe('');
    expectBothListed(again.stdout);
  });
});
