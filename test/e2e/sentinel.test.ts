// A sentinel key value must never leave the vault into anything the factory shows or writes (issue 3 point 2).
// The BUILT CLI headless (CI=true), the real pi 0.85.1, the factory's pi node, the scripted model and a temp git
// repo whose `.env` holds a profile key and another secret. The scripted agent proves the profile key reached the
// node and the other one did not, then leaks the key's value in its envelope, as a careless model would.
// Run `npm run build` first (runCli spawns bin/factory.js → dist/).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readLedger } from '../../src/trace/ledger.js';
import { calls, contentText, report } from '../../src/scripted/tape.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { promptBench, SAMPLE_FILES, type PromptBench } from '../helpers/factory.js';
import { outside } from '../helpers/traceFixtures.js';

/** 24 random characters from [A-Za-z0-9]. */
function random24(): string {
  return randomBytes(48)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 24);
}

const CORE = random24();
const SENTINEL = `sk-sentinel-${CORE}`;
const OTHER = `other-${random24()}`;

const ROSTER = [
  "gateway: ''",
  'agents:',
  '  prompter:',
  '    model: scripted/alpha',
  '    auth: { keys: [SENTINEL_API_KEY] }',
  '',
].join('\n');

const PROBES = [
  {
    name: 'bash',
    args: { command: 'test -n "$SENTINEL_API_KEY" && echo profile-key-present || echo profile-key-missing' },
  },
  { name: 'bash', args: { command: 'test -z "$OTHER_SECRET" && echo vault-closed || echo vault-open' } },
];
const leak = {
  status: 'success',
  summary: `Done. By the way, the key is ${SENTINEL}.`,
  artifacts: [],
  notes_for_next_agent: `key=${SENTINEL}`,
};

let bench: PromptBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

/** Every file under a folder, recursively. */
function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** Command lines of every live process (Linux /proc), sampled while the CLI runs. */
function allCmdlines(): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      out.push(fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').join(' '));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Runs the CLI while sampling every process's argv; returns the run and what the samples saw. */
async function runSampling(args: string[], b: PromptBench): Promise<CliRun & { piSeen: boolean; argvLeaks: string[] }> {
  let piSeen = false;
  const argvLeaks: string[] = [];
  const sample = () => {
    for (const line of allCmdlines()) {
      if (line.includes('--session-id') && line.includes(b.paths.sessionsDir)) piSeen = true;
      if (line.includes(CORE) || line.includes(OTHER)) argvLeaks.push(line);
    }
  };
  const timer = setInterval(sample, 25);
  try {
    const r = await runCli(args, { cwd: b.repo.dir, env: { ...b.rig.env, CI: 'true' }, timeoutMs: 60_000 });
    return { ...r, piSeen, argvLeaks };
  } finally {
    clearInterval(timer);
  }
}

describe('the sentinel key value appears in no artefact of a run', () => {
  it('reaches the node through its profile only, and is masked everywhere the factory writes or shows', async () => {
    // The report waits a little, so pi is alive (and its argv sampled) while the model "thinks".
    const turn = [calls(PROBES), report(leak, undefined, { thinkMs: 1500 })];
    bench = await promptBench(
      { default: [...turn, ...turn] },
      {
        ...SAMPLE_FILES,
        '.gitignore': 'adws/adw_data/\n.env\n',
        '.env': `SENTINEL_API_KEY=${SENTINEL}\nOTHER_SECRET=${OTHER}\n`,
        'adws/adw_config/factory.config.yaml': ROSTER,
      },
    );
    const { paths } = bench;

    const plain = await runSampling(
      ['prompt', 'Which files make up this repo?', '--no-ui', '--model', 'scripted/alpha'],
      bench,
    );
    expect(plain.code, plain.stderr).toBe(0);
    const json = await runSampling(
      ['prompt', 'Which files make up this repo?', '--json', '--model', 'scripted/alpha'],
      bench,
    );
    expect(json.code, json.stderr).toBe(0);

    // The node got the profile key and nothing else of .env: what pi sent back as the probes' tool results.
    const requests = bench.rig.model.requests;
    expect(requests).toHaveLength(4);
    for (const r of [requests[1]!, requests[3]!]) {
      const toolResults = (r.body.messages ?? [])
        .filter((m) => m.role === 'tool')
        .map((m) => contentText(m.content).trim());
      expect(toolResults).toEqual(['profile-key-present', 'vault-closed']);
    }
    // stdout and stderr: the envelope is there, masked by name (so the leaked value did come through, and was masked).
    expect(JSON.parse(plain.stdout)).toMatchObject({
      summary: 'Done. By the way, the key is «redacted:SENTINEL_API_KEY».',
    });
    const lastJson = JSON.parse(json.stdout.trim().split('\n').at(-1)!) as {
      type: string;
      envelope: { summary: string };
    };
    expect(lastJson).toMatchObject({
      type: 'envelope',
      envelope: { summary: 'Done. By the way, the key is «redacted:SENTINEL_API_KEY».' },
    });
    for (const text of [plain.stdout, plain.stderr, json.stdout, json.stderr]) {
      expect(text).not.toContain(CORE);
      expect(text).not.toContain(OTHER);
    }

    // argv: pi was alive while sampled, and no process ever carried a secret value on its command line.
    expect(plain.piSeen && json.piSeen).toBe(true);
    expect([...plain.argvLeaks, ...json.argvLeaks]).toEqual([]);

    // The ledger: the model by its route, no value.
    const ledger = readLedger(paths.ledgerFile);
    expect(ledger.map((l) => [l.phase, l.model])).toEqual([
      ['prompt', 'scripted/alpha'],
      ['prompt', 'scripted/alpha'],
    ]);

    // Every file the factory wrote under adws/adw_data: ledger, traces (runs and harness), factory.db and its
    // WAL, schemas. pi's own session files (sessions/<ts>_<uuid>.jsonl) are pi's, not the factory's: they hold
    // the conversation verbatim (the leaked value included) and are left out on purpose.
    const piSession = /_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/;
    const written = walk(paths.dataDir).filter((f) => !(path.dirname(f) === paths.sessionsDir && piSession.test(f)));
    const rel = written.map((f) => path.relative(paths.dataDir, f));
    // Not vacuous: each kind of artefact is there.
    expect(rel).toContain(path.join('sessions', 'ledger.jsonl'));
    expect(rel).toContain('factory.db');
    expect(rel.filter((f) => f.startsWith(path.join('traces', 'runs')))).toHaveLength(2);
    expect(rel.filter((f) => f.startsWith(path.join('traces', 'harness'))).length).toBeGreaterThanOrEqual(2);
    expect(rel.filter((f) => f.startsWith('schemas')).length).toBeGreaterThan(0);
    for (const file of written) {
      const bytes = fs.readFileSync(file);
      expect(bytes.includes(CORE), `${path.relative(paths.dataDir, file)} holds the sentinel`).toBe(false);
      expect(bytes.includes(OTHER), `${path.relative(paths.dataDir, file)} holds OTHER_SECRET`).toBe(false);
    }
    // The run logs hold the masked envelope: the value was met and masked, not merely absent.
    const runLogs = written.filter((f) => f.includes(path.join('traces', 'runs')));
    for (const log of runLogs) expect(fs.readFileSync(log, 'utf8')).toContain('«redacted:SENTINEL_API_KEY»');

    // factory.db queried: every row of every table and view.
    const db = outside(paths);
    try {
      const relations = db
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'")
        .pluck()
        .all() as string[];
      expect(relations.length).toBeGreaterThan(0);
      let masked = 0;
      for (const name of relations) {
        const dump = JSON.stringify(db.prepare(`SELECT * FROM "${name.replace(/"/g, '""')}"`).all());
        expect(dump, `table ${name} holds the sentinel`).not.toContain(CORE);
        expect(dump).not.toContain(OTHER);
        if (dump.includes('«redacted:SENTINEL_API_KEY»')) masked += 1;
      }
      expect(masked).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});
