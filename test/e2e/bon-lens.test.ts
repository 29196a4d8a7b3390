// Cache-correct fan-out (issue 12, point 3) through the real pi and the scripted model, whose prompt cache bills a
// prefix it has already served as cached input. Each arm works in its own worktree but is shown at the primer's
// folder: every arm's first request begins with the primer's last one byte for byte (tool list and messages), under
// the primer's cache-routing key, and is billed as cached; a path the model writes under the folder it was shown lands
// in the arm's own worktree. On each model one arm asks first and the others once its first token has come, so they
// find its whole prompt cached (on a model the primer did not use, the primer's context too).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ofType } from '../helpers/factory.js';
import type { RecordedRequest } from '../../src/scripted/server.js';
import { call, report, type Step, type Tapes } from '../../src/scripted/tape.js';
import { bonBench, runBon, treeStatus, type BonBench } from '../helpers/bon.js';
import { until } from '../helpers/processes.js';
import { tempDir } from '../helpers/repo.js';

let bench: BonBench | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
  for (const c of cleanups.splice(0)) c();
});

const GOOD = 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n';
const built = report({
  status: 'success',
  summary: 'farewell added',
  artifacts: [],
  notes_for_next_agent: '',
  changed_files: ['src/farewell.js'],
});
const primerTurn = (thinkMs = 0): Step[] => [
  call('read', { path: 'specs/farewell.md' }, { thinkMs }),
  report(
    { status: 'success', summary: 'Plan: add src/farewell.js; node --test must pass.', changed_files: [] },
    undefined,
    { thinkMs },
  ),
];
/** An arm's turn: it writes by the absolute path it was shown, asks where it is, and reports. */
const armTurn = (thinkMs = 0): Step[] => [
  call('write', { path: '{{cwd}}/src/farewell.js', content: GOOD }, { thinkMs }),
  call('bash', { command: 'pwd' }),
  built,
];

/** Each session's requests, in order, keyed by the pi session id the affinity header named. */
function bySession(requests: readonly RecordedRequest[]): Map<string, RecordedRequest[]> {
  const out = new Map<string, RecordedRequest[]>();
  for (const r of requests) out.set(r.session ?? '?', [...(out.get(r.session ?? '?') ?? []), r]);
  return out;
}

const shownFolder = (r: RecordedRequest) =>
  /(?:Current working directory:\s*|<cwd>\s*)([^\s<]+)/.exec(String(r.body.messages![0]!.content))?.[1];

async function lensBench(tapes: Tapes) {
  const b = await bonBench(tapes);
  bench = b;
  const base = tempDir('factory-lens-', cleanups);
  // A long cache retention makes pi send its session id as `prompt_cache_key` to any OpenAI-style server.
  b.env = { ...b.env, FACTORY_WORKTREES: base, PI_CACHE_RETENTION: 'long' };
  return { b, base };
}

describe("factory bon: every arm shares the primer's prompt prefix", () => {
  it("on the primer's model: byte-identical prefix, the primer's routing key, billed cached; shown paths land in the arm's tree", async () => {
    const { b, base } = await lensBench({ 'model:alpha': [...primerTurn(), ...armTurn(), ...armTurn(), ...armTurn()] });
    const { exit, events, session } = await runBon(b, {
      models: ['scripted/alpha', 'scripted/alpha', 'scripted/alpha'],
    });
    expect(exit).toBe(0);
    const sessions = bySession(b.rig.model.requests);
    const primerId = session.primer.sessionId!;
    const primer = sessions.get(primerId)!;
    const last = primer[primer.length - 1]!;
    const shown = shownFolder(last)!;
    expect(shown).toMatch(/\/prime$/);
    const arms = [...sessions.entries()].filter(([id]) => id !== primerId);
    // An arm that asked nothing says why (its pi did not start, it was stopped…).
    expect(arms, JSON.stringify(ofType(events, 'phase_failed').map((e) => [e.phase, e.motif]))).toHaveLength(3);
    for (const [id, requests] of arms) {
      const first = requests[0]!;
      // The primer's whole last prompt, byte for byte, then the arm's own ask.
      expect(JSON.stringify(first.body.tools)).toBe(JSON.stringify(last.body.tools));
      expect(JSON.stringify(first.body.messages!.slice(0, last.body.messages!.length))).toBe(
        JSON.stringify(last.body.messages),
      );
      expect(first.body.prompt_cache_key).toBe(last.body.prompt_cache_key);
      expect(first.body.prompt_cache_key).toBe(primerId);
      // Billed as the provider would: the primer's prompt is cached, only what follows it is new.
      expect(first.billed!.cached, id).toBeGreaterThanOrEqual(last.billed!.prompt - 1);
      // The model never sees the folder the arm really works in; `pwd` answers with the folder it was shown.
      for (const r of requests) expect(JSON.stringify(r.body)).not.toMatch(/\/arm_\d/);
      const pwd = requests[requests.length - 1]!.body.messages!.filter((m) => m.role === 'tool').pop();
      expect(String(pwd?.content)).toContain(shown);
    }
    // The two after the first arm found its whole prompt (the same ask) cached: they asked once its first token had
    // come — at once when it had come before they were ready (no wait, no note), else after a wait the board names.
    const [leader, ...followers] = arms.map(([, requests]) => requests[0]!).sort((x, y) => x.seq - y.seq);
    for (const f of followers) expect(f.billed!.cached).toBeGreaterThanOrEqual(leader!.billed!.prompt - 1);
    expect(
      ofType(events, 'activity').filter(
        (e) => e.activity.kind === 'note' && /waits for arm \d's first token/.test(e.activity.text),
      ).length,
    ).toBeLessThanOrEqual(2);
    // What the model wrote at the shown folder is each arm's own work, in its own patch.
    const harvest = ofType(events, 'harvest')[0]!;
    expect(harvest.ranking.filter((r) => r.green)).toHaveLength(3);
    for (const rank of harvest.ranking)
      expect(fs.readFileSync(rank.patchFile!, 'utf8')).toContain('+  return `Goodbye, ${name}!`;');
    expect(treeStatus(b.dir)).toBe('');
    expect(fs.existsSync(path.join(b.dir, 'src/farewell.js'))).toBe(false);
    expect(fs.readdirSync(base, { recursive: true })).toEqual([]);
  });

  it("on one model the followers go at the leader's first token, not at its end: its answer held mid-stream, they ask meanwhile", async () => {
    // Arm 1 (the leader on beta) streams a first word, then its answer waits until the two others have asked; so do
    // theirs (each arm's turn is a run of steps the scripted model keeps for its conversation). Were the followers let go only at
    // the leader's end, they would never ask while it waits: the wait gives up after a while and the run says so.
    let requests: () => RecordedRequest[] = () => [];
    let metMidStream = false;
    const othersAsked = (async () => {
      try {
        // The primer's two requests, the leader's first, then the two followers' first ones.
        await until(
          "the followers' first requests",
          () => requests().filter((r) => r.tape === 'model:beta').length >= 5,
          60_000,
        );
        metMidStream = true;
      } catch {
        // left false: the test fails on it below
      }
    })();
    const held = { text: 'Writing it.', afterFirstToken: othersAsked };
    const write = (opts = {}) => call('write', { path: '{{cwd}}/src/farewell.js', content: GOOD }, opts);
    // The primer runs on the arms' model (the first route), so it plays the tape first.
    const { b } = await lensBench({
      'model:beta': [...primerTurn(), write(held), built, write(held), built, write(held), built],
    });
    requests = () => b.rig.model.requests;
    const { exit, events } = await runBon(b, { models: ['scripted/beta', 'scripted/beta', 'scripted/beta'] });
    expect(metMidStream).toBe(true);
    expect(exit).toBe(0);
    const firsts = [...bySession(b.rig.model.requests).values()].map((list) => list[0]!).slice(1); // the primer's first
    expect(firsts).toHaveLength(3);
    // The leader's answer had begun when they asked: its prefix was cached for them.
    const [leader, ...followers] = [...firsts].sort((x, y) => x.seq - y.seq);
    for (const f of followers) expect(f.billed!.cached).toBeGreaterThanOrEqual(leader!.billed!.prompt - 1);
    const ranking = ofType(events, 'harvest')[0]!.ranking;
    expect(
      ranking.filter((r) => r.green),
      JSON.stringify(ranking),
    ).toHaveLength(3);
  });

  it('on another model: one arm asks first, the others once its first token has come, and find the primer cached', async () => {
    // The primer and arm 1 on alpha; arms 2 to 4 on beta, whose first answers take 1.5 s to begin: arms that asked
    // at once would all miss the cache.
    const { b } = await lensBench({
      'model:alpha': [...primerTurn(), ...armTurn()],
      'model:beta': [...armTurn(1500), ...armTurn(1500), ...armTurn(1500)],
    });
    const { exit, events, session } = await runBon(b, {
      models: ['scripted/alpha', 'scripted/beta', 'scripted/beta', 'scripted/beta'],
    });
    expect(exit).toBe(0);
    const sessions = bySession(b.rig.model.requests);
    const primerPrompt = sessions.get(session.primer.sessionId!)!.at(-1)!.billed!.prompt;
    const firsts = [...sessions.values()].map((requests) => requests[0]!).filter((r) => r.tape === 'model:beta');
    expect(firsts).toHaveLength(3);
    // One leader pays the primer's context on beta; the two that waited get it from the cache.
    const [leader, ...followers] = [...firsts].sort((x, y) => x.seq - y.seq);
    expect(leader!.billed!.cached).toBe(0);
    for (const f of followers) expect(f.billed!.cached).toBeGreaterThanOrEqual(primerPrompt - 1);
    // The board said why they waited: each follower that was ready before the leader's first token says so, naming
    // the leader (on a busy machine a follower whose pi starts after that token has nothing to wait for).
    const waits = ofType(events, 'activity').filter(
      (e) => e.activity.kind === 'note' && /waits for arm \d's first token/.test(e.activity.text),
    );
    expect(waits.length).toBeLessThanOrEqual(2);
    expect(
      new Set(waits.map((e) => (e.activity as { text: string }).text.match(/arm (\d)'s/)![1])).size,
    ).toBeLessThanOrEqual(1);
  });
});
