// `factory resume` after a `kill -9` of the cockpit (issue 3 point 7), through the BUILT CLI headless (CI=true):
// the real pi 0.85.1, the factory's pi node, the scripted model and a temp git repo with the `add` payload whose
// roster names its node:test command as the gate. Run `npm run build` first (runCli spawns bin/factory.js).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readLedger } from '../../src/trace/ledger.js';
import { CONTINUE_ASK } from '../../src/engine/resume.js';
import { call, contentText, report } from '../../src/scripted/tape.js';
import { buildFixture, payloadFiles } from '../helpers/build.js';
import { runCli } from '../helpers/cli.js';
import { processesTagged, promptBench, type PromptBench } from '../helpers/factory.js';
import { makeTempRepo, type TempRepo } from '../helpers/repo.js';
import { outside } from '../helpers/traceFixtures.js';

const ROSTER = [
  "gateway: ''",
  'payload:',
  '  dir: .',
  '  commands:',
  '    - run: node --test --test-reporter=spec test/add.test.js',
  '      timeout: 60',
  'agents:',
  '  builder:',
  '    model: scripted/alpha',
  '',
].join('\n');

const built = (summary: string) => ({ status: 'success', summary, changed_files: ['src/add.js'] });

let bench: PromptBench | undefined;
let other: TempRepo | undefined;
let leftovers: number[] = [];
afterEach(async () => {
  for (const pid of leftovers) killGroup(pid);
  leftovers = [];
  other?.cleanup();
  other = undefined;
  await bench?.cleanup();
  bench = undefined;
});

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** SIGKILL the process group a pid leads or belongs to (field 5 of /proc/<pid>/stat), if it still lives. */
function killGroup(pid: number): void {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // gone already
  }
}

async function until(test: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function lastUserText(body: { messages?: { role?: string; content?: unknown }[] }): string {
  return contentText((body.messages ?? []).filter((m) => m.role === 'user').at(-1)?.content);
}

describe('factory resume after kill -9 of the cockpit', () => {
  it('continues the interrupted build in the same live session and goes green', async () => {
    bench = await promptBench(
      {
        default: [
          // Life 1: write the file, then a long tool call; the cockpit is killed during it.
          call('write', { path: 'src/add.js', content: buildFixture('add.fixed.js') }),
          call('bash', { command: 'sleep 30' }),
          // Life 2 (the resume): the builder reports.
          report(built('add written, resumed after the crash')),
        ],
      },
      { ...payloadFiles('add'), 'adws/adw_config/factory.config.yaml': ROSTER },
    );
    const repo = bench.repo.dir;
    const env = { ...bench.rig.env, CI: 'true' };
    const { paths } = bench;

    // ---- Life 1: start the build, SIGKILL the CLI while the builder's `sleep 30` runs.
    let adwId: string | undefined;
    let killed = false;
    let watching = false;
    const first = await runCli(['build', 'specs/add.md', '--no-ui', '--model', 'scripted/alpha'], {
      cwd: repo,
      env,
      timeoutMs: 60_000,
      onStderr: (child, stderr) => {
        adwId ??= /^\[([0-9a-f]{8})\]/.exec(stderr)?.[1];
        if (watching || !adwId) return;
        watching = true;
        const tag = adwId;
        const poll = setInterval(() => {
          const declared = readLedger(paths.ledgerFile).some((l) => l.adw_id === tag && l.phase === 'build');
          const sleeping = processesTagged(tag).some((pid) => cmdline(pid) === 'sleep 30');
          if (!declared || !sleeping) return;
          clearInterval(poll);
          killed = child.kill('SIGKILL');
        }, 50);
      },
    });
    expect(killed).toBe(true);
    expect(first.code).toBeNull(); // died of SIGKILL: no handler ran, nothing was cleaned up by the cockpit
    expect(bench.rig.model.requests).toHaveLength(2);
    const id = adwId!;

    // What a SIGKILL of the cockpit leaves behind: pi runs in its own process group (so that the cockpit's
    // kill ladder can end it as a whole), hence nothing ends it when the cockpit itself is SIGKILLed — pi and its
    // tool's `sleep 30` still live, carrying the run tag. `factory resume` must end them before it continues the
    // session (a session must never have two writers); the afterEach is only a safety net.
    const remaining = processesTagged(id);
    expect(remaining.map(cmdline)).toContain('sleep 30');
    leftovers = remaining;

    const ledgerBefore = readLedger(paths.ledgerFile).filter((l) => l.adw_id === id);
    expect(ledgerBefore.map((l) => l.phase)).toEqual(['build']);
    const sessionId = ledgerBefore[0]!.session_id;
    const sessionFiles = () => fs.readdirSync(paths.sessionsDir).filter((n) => n.endsWith(`_${sessionId}.jsonl`));
    expect(sessionFiles()).toHaveLength(1);
    const sessionFile = sessionFiles()[0]!;
    const sessionBefore = fs.readFileSync(path.join(paths.sessionsDir, sessionFile), 'utf8');

    // The killed run reads as interrupted in the runs list (its recording cockpit is gone). Soft: a failure here
    // is reported without hiding what the resume below proves.
    const listed = await runCli(['runs', '--json'], { cwd: repo, env });
    expect(listed.code, listed.stderr).toBe(0);
    expect
      .soft((JSON.parse(listed.stdout) as { adwId: string; status: string }[]).find((r) => r.adwId === id)?.status)
      .toBe('interrupted');

    // A crash in the middle of a ledger write leaves a torn last line, without its newline.
    const torn = '{"session_id":"torn-by-a-crash","cwd":"/nowh';
    fs.appendFileSync(paths.ledgerFile, torn);

    // ---- Life 2: resume from the same folder.
    const resumed = await runCli(['resume', id, '--no-ui'], { cwd: repo, env, timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(
      new RegExp(`ended ${remaining.length} process\\(es\\) left running by the stopped cockpit of run ${id}`),
    );
    expect(
      remaining.filter(
        (pid) => fs.existsSync(`/proc/${pid}`) && !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')),
      ),
    ).toEqual([]);
    expect(resumed.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(`^\\[${id}\\] run green — total cost ~\\$0\\.\\d{4}$`),
    );
    expect(resumed.stderr).toMatch(/build \(agent, attempt 1\/3\): OK/);
    expect(resumed.stderr).toMatch(/gates: ✓ node --test/);
    expect(JSON.parse(resumed.stdout)).toMatchObject(built('add written, resumed after the crash'));

    // The resumed attempt went to the same session: its request carries life 1's history, then the continuation.
    expect(bench.rig.model.requests).toHaveLength(3);
    const [, beforeKill, afterResume] = bench.rig.model.requests;
    expect(afterResume!.messages).toBeGreaterThan(beforeKill!.messages);
    expect(lastUserText(afterResume!.body)).toContain(CONTINUE_ASK);
    expect(JSON.stringify(afterResume!.body)).toContain('sleep 30');

    // Ledger: the torn line is skipped, and a new line declares the SAME session for phase build.
    expect(fs.readFileSync(paths.ledgerFile, 'utf8')).toContain(torn);
    const ledgerAfter = readLedger(paths.ledgerFile);
    expect(ledgerAfter.some((l) => l.session_id === 'torn-by-a-crash')).toBe(false);
    expect.soft(ledgerAfter.filter((l) => l.adw_id === id).map((l) => [l.session_id, l.phase, l.cwd])).toEqual([
      [sessionId, 'build', repo],
      [sessionId, 'build', repo],
    ]);
    // The session file is the same one, grown (pi appended to it rather than forking a twin).
    expect(sessionFiles()).toEqual([sessionFile]);
    const sessionAfter = fs.readFileSync(path.join(paths.sessionsDir, sessionFile), 'utf8');
    expect(sessionAfter.startsWith(sessionBefore)).toBe(true);
    expect(sessionAfter.length).toBeGreaterThan(sessionBefore.length);
    expect(sessionAfter).toContain('report_phase');
    expect(fs.readFileSync(path.join(repo, 'src/add.js'), 'utf8')).toBe(buildFixture('add.fixed.js'));
    expect(processesTagged(id)).toEqual([]);

    // The run is green in the runs list, and the trace store is sound.
    const after = await runCli(['runs', '--json'], { cwd: repo, env });
    expect(after.code, after.stderr).toBe(0);
    expect(
      (JSON.parse(after.stdout) as { adwId: string; status: string; phases: string }[]).find((r) => r.adwId === id),
    ).toMatchObject({ status: 'green', phases: '3/3' });
    const plain = await runCli(['runs'], { cwd: repo, env });
    expect(plain.stdout.split('\n').find((l) => l.startsWith(id))).toMatch(/\badw_build\s+green\s+3\/3\b/);
    const db = outside(paths);
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }

    // ---- Refusals: one line, exit 2, zero tokens.
    // From another folder that shares nothing with this one: the run is unknown there.
    other = makeTempRepo({ files: { 'README.md': '# elsewhere\n' } });
    const elsewhere = await runCli(['resume', id, '--no-ui', '--cwd', other.dir], { cwd: other.dir, env });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr.trim().split('\n')).toHaveLength(1);
    expect(elsewhere.stderr).toMatch(new RegExp(`^factory: .*${id}`));
    expect(elsewhere.stdout).toBe('');
    expect(fs.existsSync(path.join(other.dir, 'adws'))).toBe(false);
    // A green run has nothing to resume.
    const again = await runCli(['resume', id, '--no-ui'], { cwd: repo, env });
    expect(again.code).toBe(2);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect(again.stderr).toMatch(/^factory: .*nothing to resume/);
    expect(bench.rig.model.requests).toHaveLength(3);
  });
});
