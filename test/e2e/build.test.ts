// adw_build end to end: the real pi 0.85.1, the factory's real pi node, the scripted model, a temp git repo
// holding a small payload (a spec and a node:test test), and real gate commands.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BuildCheck } from '../../adws/adw_build.js';
import type { GateReport } from '../../src/gates/judges.js';
import { readLedger } from '../../src/trace/ledger.js';
import { call, contentText, report } from '../../src/scripted/tape.js';
import { buildFixture, payloadFiles, runBuild } from '../helpers/build.js';
import { ofType, processesTagged, promptBench, sessionFileTokens, type PromptBench } from '../helpers/factory.js';
import { alive, cmdline } from '../helpers/processes.js';
import { git } from '../helpers/repo.js';

const NODE_TEST = { run: 'node --test --test-reporter=spec test/add.test.js', cwd: '.', timeoutMs: 30_000 };
/** The gates' environment: what a test command needs, nothing of the cockpit's. */
const GATE_ENV = { PATH: process.env.PATH, HOME: process.env.HOME };

const built = (summary: string) => ({ status: 'success', summary, changed_files: ['src/add.js'] });

let bench: PromptBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

function lastUserText(body: { messages?: { role?: string; content?: unknown }[] }): string {
  const users = (body.messages ?? []).filter((m) => m.role === 'user');
  return contentText(users.at(-1)?.content);
}

describe('adw_build through the real pi', () => {
  it('sends a red gate back into the same live session with its exact motif, then goes green', async () => {
    bench = await promptBench(
      {
        default: [
          call('write', { path: 'src/add.js', content: buildFixture('add.buggy.js') }),
          report(built('add written')),
          call('write', { path: 'src/add.js', content: buildFixture('add.fixed.js') }),
          report(built('add fixed: it sums now')),
        ],
      },
      payloadFiles('add'),
    );
    const { exit, events, run } = await runBuild(bench, {
      payloadCommands: [NODE_TEST],
      gateEnv: GATE_ENV,
      brief: 'You are the builder.',
    });
    expect(exit).toBe(0);

    // check recorded the clean tree the build started from.
    const check = run.results.check as BuildCheck;
    expect(check.spec).toBe('specs/add.md');
    expect(check.tree).toMatchObject({
      branch: 'main',
      dirty: [],
      head: git(bench.repo.dir, 'rev-parse', 'HEAD').trim(),
    });
    // Only the pi node the bench installed is untracked: the file the build writes came later.
    expect(check.tree.untracked.length).toBeGreaterThan(0);
    expect(check.tree.untracked.every((p) => p.startsWith('.pi/'))).toBe(true);

    // Two build attempts, one session.
    const attempts = ofType(events, 'attempt_started').filter((e) => e.phase === 'build');
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(new Set(attempts.map((a) => a.sessionId))).toEqual(new Set([run.sessions.build]));

    // Gates: red on the failing test first, then green; one gate_result per gate and round.
    const gates = ofType(events, 'gate_result');
    expect(gates.map((g) => [g.gate, g.ok])).toEqual([
      ['changed_files', true],
      [NODE_TEST.run, false],
      ['changed_files', true],
      [NODE_TEST.run, true],
    ]);
    const redGate = ofType(events, 'attempt_failed').find((e) => e.phase === 'gates')!;
    expect(redGate.willRetry).toBe(true);
    expect(redGate.motif).toBe(gates[1]!.motif);
    expect(redGate.motif).toMatch(
      /^`node --test --test-reporter=spec test\/add\.test\.js` exited 1: ✖ add sums two numbers .*actual: -1, \| expected: 5/,
    );

    // The correction went into the same session: its request carries the history and the exact motif.
    const requests = bench.rig.model.requests;
    expect(requests).toHaveLength(4);
    const [first, , correction] = requests;
    // The node's factory-context adds its own message after the ask: look at every user message of the first call.
    const firstUsers = (first!.body.messages ?? [])
      .filter((m) => m.role === 'user')
      .map((m) => contentText(m.content))
      .join('\n');
    expect(firstUsers).toContain('You are the builder.');
    expect(firstUsers).toContain('specs/add.md');
    expect(firstUsers).toContain(NODE_TEST.run);
    expect(correction!.messages).toBeGreaterThan(requests[1]!.messages);
    expect(lastUserText(correction!.body)).toContain(redGate.motif);
    // Beyond the one-line motif, the correction carries the failing output as it was printed.
    expect(lastUserText(correction!.body)).toMatch(/end of its output:\n[\s\S]*-1 !== 5/);
    expect(lastUserText(correction!.body)).toContain('report_phase');

    // One session file, two ledger lines for it, every token billed once.
    const persisted = sessionFileTokens(bench.paths.sessionsDir, run.sessions.build!);
    expect(persisted.files).toBe(1);
    expect(run.tokens).toBe(persisted.tokens);
    expect(readLedger(bench.paths.ledgerFile).map((l) => [l.session_id, l.phase])).toEqual([
      [run.sessions.build, 'build'],
      [run.sessions.build, 'build'],
    ]);

    // The fixed file is on disk and the gates' reports are the phase's result.
    expect(fs.readFileSync(path.join(bench.repo.dir, 'src/add.js'), 'utf8')).toBe(buildFixture('add.fixed.js'));
    expect((run.results.gates as GateReport[]).every((r) => r.ok)).toBe(true);
  });

  it('fails at check, before any model call, when the spec is missing or empty', async () => {
    bench = await promptBench(
      { default: [report(built('never'))] },
      { ...payloadFiles('add'), 'specs/empty.md': ' \n\n' },
    );
    const missing = await runBuild(bench, {
      specPath: 'specs/nope.md',
      payloadCommands: [NODE_TEST],
      gateEnv: GATE_ENV,
    });
    expect(missing.exit).toBe(2); // a refused check is bad input
    const failed = ofType(missing.events, 'phase_failed')[0]!;
    expect(failed.phase).toBe('check');
    expect(failed.motif).toBe(
      `spec not found: specs/nope.md (looked for ${path.join(bench.repo.dir, 'specs/nope.md')})`,
    );
    const empty = await runBuild(bench, {
      specPath: 'specs/empty.md',
      payloadCommands: [NODE_TEST],
      gateEnv: GATE_ENV,
    });
    expect(empty.exit).toBe(2);
    expect(ofType(empty.events, 'phase_failed')[0]!.motif).toBe('spec is empty: specs/empty.md (nothing to build)');
    expect(bench.rig.model.requests).toHaveLength(0);
    expect(fs.existsSync(bench.paths.ledgerFile)).toBe(false);
  });

  it('ends a gate command that hangs at its timeout, says so, and leaves no process of the run', async () => {
    bench = await promptBench(
      {
        default: [
          call('write', { path: 'src/add.js', content: buildFixture('add.fixed.js') }),
          report(built('add written')),
        ],
      },
      payloadFiles('add'),
    );
    const hang = { run: 'sleep 600', cwd: '.', timeoutMs: 1000 };
    const { exit, events, run } = await runBuild(bench, { retries: 0, payloadCommands: [hang], gateEnv: GATE_ENV });
    expect(exit).toBe(1);
    const failed = ofType(events, 'phase_failed')[0]!;
    expect(failed.phase).toBe('gates');
    expect(failed.motif).toBe('`sleep 600` timed out after 1 s (its process group was ended)');
    expect(processesTagged(run.adwId)).toEqual([]);
  });

  it('Ctrl-C during a gate command ends it at once: exit 130, no process of the run left', async () => {
    bench = await promptBench(
      {
        default: [
          call('write', { path: 'src/add.js', content: buildFixture('add.fixed.js') }),
          report(built('add written')),
        ],
      },
      payloadFiles('add'),
    );
    let sleeper = 0;
    const { exit, events, run } = await runBuild(bench, {
      payloadCommands: [{ run: 'echo gate-running; sleep 600', cwd: '.', timeoutMs: 600_000 }, NODE_TEST],
      gateEnv: GATE_ENV,
      // Abort once the gates phase has started and its command is running (it carries the run tag; the phase's own
      // git calls, which carry it too, are not the gate: look for the gate's sleep).
      onEvent: (e, r) => {
        if (e.type !== 'phase_started' || e.phase !== 'gates') return;
        const poll = setInterval(() => {
          const found = processesTagged(r.adwId).find((pid) => cmdline(pid) === 'sleep 600');
          if (found) {
            sleeper = found;
            clearInterval(poll);
            r.abort();
          }
        }, 20);
      },
    });
    expect(exit).toBe(130);
    // The gate's sleep 600 is gone when the build returns: the abort ended it, the build did not wait it out.
    expect(sleeper).toBeGreaterThan(0);
    expect(alive(sleeper)).toBe(false);
    // The second gate never ran, and the build was not sent back.
    expect(ofType(events, 'gate_result').map((g) => [g.gate, g.ok])).toEqual([
      ['changed_files', true],
      ['echo gate-running; sleep 600', false],
    ]);
    expect(ofType(events, 'attempt_started').filter((e) => e.phase === 'build')).toHaveLength(1);
    expect(processesTagged(run.adwId)).toEqual([]);
  });

  it('a builder that reports a failure is judged red without running the gates', async () => {
    bench = await promptBench(
      { default: [report({ status: 'fail', summary: 'the spec contradicts the test', changed_files: [] })] },
      payloadFiles('add'),
    );
    const { exit, events } = await runBuild(bench, { retries: 0, payloadCommands: [NODE_TEST], gateEnv: GATE_ENV });
    expect(exit).toBe(1);
    const failed = ofType(events, 'phase_failed')[0]!;
    expect(failed.phase).toBe('gates');
    expect(failed.motif).toBe('the builder reports a failure: "the spec contradicts the test"');
    expect(ofType(events, 'gate_result')).toEqual([]);
  });

  it('a builder that plants a hook in .git (through a program the node cannot read) is red, not retried; the hook is gone', async () => {
    const plant = `node -e "const d=['.g','it'].join('');require('fs').writeFileSync(d+'/hooks/pre-commit','#!/bin/sh\\ntouch hook-ran\\n',{mode:0o755})"`;
    bench = await promptBench(
      {
        default: [
          call('bash', { command: plant }),
          call('write', { path: 'src/add.js', content: buildFixture('add.fixed.js') }),
          report(built('add fixed')),
        ],
      },
      payloadFiles('add'),
    );
    const hooks = () => fs.readdirSync(path.join(bench!.repo.dir, '.git/hooks')).sort();
    const before = hooks();
    const { exit, events } = await runBuild(bench, { retries: 2, payloadCommands: [NODE_TEST], gateEnv: GATE_ENV });
    expect(exit).toBe(1);
    const failed = ofType(events, 'phase_failed')[0]!;
    expect(failed.phase).toBe('gates');
    expect(failed.motif).toBe(
      "it changed the repository's .git (.git/hooks/pre-commit (added)): an agent may not; undone",
    );
    // Final: not sent back for another attempt, and no gate ran on a repository an agent had reached into.
    expect(ofType(events, 'attempt_started').filter((e) => e.phase === 'build')).toHaveLength(1);
    expect(ofType(events, 'gate_result')).toEqual([]);
    expect(hooks()).toEqual(before);
    expect(fs.existsSync(path.join(bench.repo.dir, 'hook-ran'))).toBe(false);
  });
});
