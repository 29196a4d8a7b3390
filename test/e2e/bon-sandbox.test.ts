// Arms sealed from each other and from the user's repository (issue 24), through the real pi under test, the
// scripted model and real git, in worktree mode, arms at once: each arm has a git of its own and works in the OS
// sandbox (bubblewrap). Every hostile act here is done by a program (`node -e`, a computed path, a detached job),
// which no rule reading the command text can see. After each run the user's refs, config and hooks are byte for
// byte as they began, nothing was written outside an arm's own tree, the arm that acted is red and named, and the
// others are not. The last case is a machine without the sandbox: the run is refused before a token.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, report, type Tapes } from '../../src/scripted/tape.js';
import { bonBench, gitBytes, runBon, treeStatus, type BonBench } from '../helpers/bon.js';

const GOOD = 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n';
const built = {
  status: 'success',
  summary: 'farewell added',
  artifacts: [],
  notes_for_next_agent: '',
  changed_files: ['src/farewell.js'],
};
const write = call('write', { path: 'src/farewell.js', content: GOOD });
const primed = report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] });

/** Every byte of what makes the user's git run programs or name places: config, hooks, info, refs, HEAD, index. */
const userGit = (dir: string) =>
  gitBytes(dir, ['HEAD', 'config', 'hooks', 'info', 'refs', 'packed-refs', 'logs', 'index', 'objects/info']);

function harvestOf(events: Awaited<ReturnType<typeof runBon>>['events']) {
  const harvest = events.find((e) => e.type === 'harvest');
  if (harvest?.type !== 'harvest') throw new Error('no harvest');
  return { winner: harvest.winner, arm: (k: number) => harvest.ranking.find((r) => r.arm === k) };
}

function patchOf(b: BonBench, adwId: string, arm: number): string {
  const file = path.join(b.paths.dataDir, 'bon', adwId, `arm-${arm}.patch`);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

/** Waits (in the arm's shell) up to 15 s for a path to exist: how one arm's act is ordered before another's. */
const waitFor = (p: string) => `for i in $(seq 150); do [ -e ${p} ] && break; sleep 0.1; done`;

let bench: BonBench | undefined;
let outside: string | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
  if (outside) fs.rmSync(outside, { recursive: true, force: true });
  outside = undefined;
});

describe('factory bon: arms sealed by their own git and the OS sandbox (real pi, scripted model)', () => {
  it("a filter driver re-planted every 20 ms (in its own git and at the user's) is never run by the factory's git; the arm is red for it, the user's .git untouched", async () => {
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-outside-'));
    const mark = path.join(outside, 'filter-ran');
    // A program that plants `filter.evil.clean` (and `* filter=evil`) in its own .git and in the user's (found
    // through the alternates file), again and again, for 4 seconds, detached from the shell that started it.
    const replant = `node -e "const fs=require('fs'),cp=require('child_process');const own=cp.execSync('git rev-parse --git-dir').toString().trim();const user=require('path').dirname(require('path').dirname(fs.readFileSync(own+'/objects/info/alternates','utf8').trim()));const plant=(g)=>{try{fs.appendFileSync(g+'/config','[filter \\\\\\"evil\\\\\\"]\\\\n\\\\tclean = sh -c \\\\\\"touch ${mark}; cat\\\\\\"\\\\n');fs.mkdirSync(g+'/info',{recursive:true});fs.writeFileSync(g+'/info/attributes','* filter=evil\\\\n')}catch(e){}};const t=setInterval(()=>{plant(own);plant(user+'/.git')},20);setTimeout(()=>clearInterval(t),4000)" > /dev/null 2>&1 & echo planting`;
    bench = await bonBench({
      'model:alpha': [
        call('read', { path: 'specs/farewell.md' }),
        primed,
        call('bash', { command: replant }),
        call('bash', { command: 'sleep 1' }),
        write,
        report(built),
      ],
      'model:beta': [write, call('bash', { command: 'sleep 1' }), report(built)],
    });
    const b = bench;
    const before = userGit(b.dir);
    const outcome = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'] });
    expect(outcome.exit, JSON.stringify(outcome.events.filter((e) => e.type === 'harvest'))).toBe(0);
    const { winner, arm } = harvestOf(outcome.events);
    expect(winner).toBe(2);
    expect(arm(1)).toMatchObject({
      green: false,
      motif: expect.stringMatching(
        /it changed its git \(.*(set filter\.evil\.clean|\.git\/info\/attributes \(added\))/,
      ),
    });
    expect(arm(2)).toMatchObject({ green: true });
    await new Promise((r) => setTimeout(r, 4500)); // past the planter's own end, had it lived
    expect(fs.existsSync(mark)).toBe(false);
    expect(userGit(b.dir)).toEqual(before);
    expect(treeStatus(b.dir)).toBe('');
  });

  it("a hook one arm plants never runs in another arm's git commit; only the planter is red", async () => {
    const plant = `node -e "const fs=require('fs');const d=require('child_process').execSync('git rev-parse --git-common-dir').toString().trim();fs.mkdirSync(d+'/hooks',{recursive:true});fs.writeFileSync(d+'/hooks/pre-commit','#!/bin/sh\\\\ntouch hook-ran\\\\n',{mode:0o755})" && ${waitFor('../arm_2/.git/committed')}; echo done`;
    const commit = `${waitFor('../arm_1/.git/hooks/pre-commit')}; git add src/farewell.js && git -c user.name=b -c user.email=b@example.invalid commit -qm farewell; touch .git/committed; git log --oneline | head -1`;
    bench = await bonBench({
      'model:alpha': [
        call('read', { path: 'specs/farewell.md' }),
        primed,
        call('bash', { command: plant }),
        write,
        report(built),
      ],
      'model:beta': [write, call('bash', { command: commit }), report(built)],
    });
    const b = bench;
    const before = userGit(b.dir);
    const outcome = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'] });
    expect(outcome.exit).toBe(0);
    const { arm } = harvestOf(outcome.events);
    expect(arm(1)).toMatchObject({ green: false, motif: expect.stringContaining('.git/hooks/pre-commit (added)') });
    expect(arm(2)).toMatchObject({ green: true });
    const adwId = outcome.prepared.run.adwId;
    for (const k of [1, 2]) expect({ k, ran: /hook-ran/.test(patchOf(b, adwId, k)) }).toEqual({ k, ran: false });
    expect(patchOf(b, adwId, 2)).toContain('+++ b/src/farewell.js'); // its commit is its work, harvested
    expect(fs.existsSync(path.join(b.dir, 'hook-ran'))).toBe(false);
    expect(userGit(b.dir)).toEqual(before);
  });

  it("writes into the other arms' trees and the user's tree (node -e, a computed path, an env -i setsid job) are refused: no patch carries them, the user's tree stays clean", async () => {
    // The run's folder holds every tree of the run; the user's tree is two folders above the alternates' target.
    const intrude = `node -e "const fs=require('fs'),p=require('path');const run=p.dirname(process.cwd());for(const t of fs.readdirSync(run)){try{fs.writeFileSync(p.join(run,t,'intruder.txt'),'x')}catch(e){}}const alt=fs.readFileSync('.git/objects/info/alternates','utf8').trim();const user=p.dirname(p.dirname(alt));for(const f of ['intruder.txt','README.md']){try{fs.appendFileSync(p.join(user,f),'x')}catch(e){console.log(String(e.code))}}"`;
    const computed = `main="$(dirname "$(dirname "$(cat .git/objects/info/alternates)")")"; echo x > "$main/computed.txt"; echo x >> "$main/README.md"; echo "rc=$?"`;
    const detached = `main="$(dirname "$(dirname "$(cat .git/objects/info/alternates)")")"; env -i /bin/sh -c "setsid sh -c 'sleep 2; echo late > $main/late.txt; echo late > $PWD/late-own.txt' > /dev/null 2>&1 < /dev/null &"; echo started`;
    bench = await bonBench({
      'model:alpha': [
        call('read', { path: 'specs/farewell.md' }),
        primed,
        write,
        call('bash', { command: `sleep 1; ${intrude}` }),
        call('bash', { command: computed }),
        call('bash', { command: detached }),
        report(built),
      ],
      'model:beta': [write, call('bash', { command: 'sleep 2' }), report(built)],
    });
    const b = bench;
    const before = userGit(b.dir);
    const readme = fs.readFileSync(path.join(b.dir, 'README.md'));
    const outcome = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'] });
    expect(outcome.exit).toBe(0);
    const adwId = outcome.prepared.run.adwId;
    await new Promise((r) => setTimeout(r, 3000)); // past the detached job's sleep, had it lived
    expect(treeStatus(b.dir)).toBe('');
    expect(fs.readFileSync(path.join(b.dir, 'README.md'))).toEqual(readme);
    for (const name of ['intruder.txt', 'computed.txt', 'late.txt'])
      expect({ name, there: fs.existsSync(path.join(b.dir, name)) }).toEqual({ name, there: false });
    // Arm 2's patch is arm 2's work only; arm 1's own patch holds what it wrote in its own tree (its work), nothing of the job.
    expect(patchOf(b, adwId, 2)).not.toMatch(/intruder|late/);
    expect(patchOf(b, adwId, 1)).not.toMatch(/late-own/);
    expect(harvestOf(outcome.events).arm(2)).toMatchObject({ green: true });
    // The refusals are arm 1's own acts, named on its row; arm 2 attempted none.
    const refused = (phase: string) =>
      outcome.events.filter(
        (e) =>
          e.type === 'activity' &&
          e.phase === phase &&
          e.activity.kind === 'note' &&
          e.activity.text.startsWith('the sandbox refused a write outside its tree'),
      );
    expect(
      refused('arm_1').length,
      JSON.stringify(
        outcome.events.filter((e) => e.type === 'activity' && e.phase === 'arm_1' && e.activity.kind === 'tool_end'),
      ),
    ).toBeGreaterThan(0);
    expect(refused('arm_2')).toEqual([]);
    expect(userGit(b.dir)).toEqual(before);
  });

  it('on a machine without the sandbox, bon in worktrees is refused in one line before any token; --unsandboxed runs', async () => {
    bench = await bonBench({
      'model:alpha': [call('read', { path: 'specs/farewell.md' }), primed, write, report(built)],
      'model:beta': [write, report(built)],
    });
    const b = bench;
    b.env = { ...b.env, FACTORY_BWRAP: path.join(b.dir, 'no-such-bwrap') };
    const before = userGit(b.dir);
    const refused = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'] }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(refused?.message).toMatch(
      /^the arms run in worktrees inside an OS sandbox, and there is none here: bubblewrap \(.*no-such-bwrap\) is not installed; fix: apt-get install bubblewrap/,
    );
    expect(refused?.message).not.toContain('\n');
    expect(b.rig.model.requests).toHaveLength(0);
    expect(fs.existsSync(path.join(b.paths.dataDir, 'bon'))).toBe(false);
    expect(userGit(b.dir)).toEqual(before);
    const unsandboxed = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'], args: { unsandboxed: true } });
    expect(unsandboxed.exit).toBe(0);
  });
});
