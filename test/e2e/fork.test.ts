// An arm forked from its primer into a worktree, on the real pi (both legs): `--fork <primer file>` with the
// factory's session id, started in the worktree. The fork is checked before it spends a token: declared id, header
// cwd = the worktree, the primer's message count; its tools run in the worktree, and the model sees the primer.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareArmTree, type ArmTree } from '../../src/bon/tree/armTree.js';
import { HarnessError } from '../../src/contract/errors.js';
import { Envelope, schema } from '../../src/envelope/envelopes.js';
import { forkRefusal } from '../../src/pi/forkCheck.js';
import { PiRpc } from '../../src/pi/rpc.js';
import { call, report, say } from '../../src/scripted/tape.js';
import { promptBench, type PromptBench } from '../helpers/factory.js';
import { git, tempDir } from '../helpers/repo.js';

const GOOD = { status: 'success', summary: 'Done in the worktree.', artifacts: [], notes_for_next_agent: '' };
const TURN = { timeoutMs: 30_000, idleTimeoutMs: 20_000 };
const PRIMER_WORDS = 'primer 7c1d: I have read the spec';

let bench: PromptBench | undefined;
const open: PiRpc[] = [];
const trees: ArmTree[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const rpc of open.splice(0)) await rpc.close();
  for (const tree of trees.splice(0)) await tree.release();
  await bench?.cleanup();
  bench = undefined;
  for (const c of cleanups.splice(0).reverse()) c();
});

function start(
  b: PromptBench,
  cwd: string,
  flags: { sessionId: string; fork?: string },
  verifyOpen?: Parameters<typeof PiRpc.open>[0]['verifyOpen'],
) {
  return PiRpc.open({
    pi: b.rig.pi,
    cwd,
    workspace: b.paths,
    flags: { ...flags, sessionDir: b.paths.sessionsDir, model: 'scripted/alpha' },
    env: b.rig.env,
    identity: { adwId: 'f0f0f0f0', phase: flags.fork ? 'arm_1' : 'prime', role: 'builder' },
    envelopeSchema: { title: 'Envelope', schema: schema(Envelope) },
    runTag: 'f0f0f0f0',
    verifyOpen,
  }).then((rpc) => {
    open.push(rpc);
    return rpc;
  });
}

async function primed() {
  const b = await promptBench({
    primer: [say(PRIMER_WORDS)],
    arm: [call('bash', { command: 'pwd && touch made-by-arm' }), report(GOOD)],
  });
  bench = b;
  // The node is part of the commit, as `factory init` has the user do: a worktree holds tracked files only.
  git(b.repo.dir, 'add', '-A');
  git(b.repo.dir, 'commit', '-q', '-m', 'the factory node');
  const primer = await start(b, b.repo.dir, { sessionId: randomUUID() });
  await primer.prompt('[tape:primer] Read the spec.', TURN);
  const state = await primer.getState();
  const head = git(b.repo.dir, 'rev-parse', 'HEAD').trim();
  const base = tempDir('factory-fork-wt-', cleanups);
  const tree = await prepareArmTree(b.repo.dir, {
    run: 'f0f0f0f0',
    name: 'arm_1',
    commit: head,
    gateFolders: ['.'],
    env: { ...process.env, FACTORY_WORKTREES: base },
  });
  // The node's settings point at the factory relative to the user's tree: re-aimed in the arm's, and kept out of its status.
  expect(tree.own).toEqual(['.pi/settings.json']);
  expect(git(tree.dir, 'status', '--porcelain')).toBe('');
  trees.push(tree);
  return { b, primerFile: state.sessionFile!, messageCount: state.messageCount, tree };
}

describe('an arm forked into its worktree', () => {
  it('opens as the declared fork of the primer, works in the worktree, and the model sees what the primer read', async () => {
    const { b, primerFile, messageCount, tree } = await primed();
    const sessionId = randomUUID();
    const arm = await start(b, tree.dir, { sessionId, fork: primerFile }, (state) =>
      forkRefusal(state, { cwd: tree.dir, sessionId, messageCount }),
    );
    expect(arm.sessionId).toBe(sessionId);
    const result = await arm.prompt('[tape:arm] Implement it.', TURN);
    expect(result.tokens).toBeGreaterThan(0);
    // The tool ran in the worktree; the user's tree got nothing.
    expect(fs.existsSync(path.join(tree.dir, 'made-by-arm'))).toBe(true);
    expect(fs.existsSync(path.join(b.repo.dir, 'made-by-arm'))).toBe(false);
    const request = b.rig.model.requestsFor('arm')[0]!;
    const said = JSON.stringify(request.body.messages ?? []);
    expect(said).toContain(PRIMER_WORDS);
    // The bash result the model got back (pwd) names the worktree.
    expect(JSON.stringify(b.rig.model.requestsFor('arm')[1]!.body.messages ?? [])).toContain(tree.dir);
    // The primer's session is untouched by the arm's turn.
    expect(fs.readFileSync(primerFile, 'utf8')).not.toContain('Implement it.');
  });

  it('a fork that is not what was asked stops before a token: kind fork, one line', async () => {
    const { b, primerFile, messageCount, tree } = await primed();
    const sessionId = randomUUID();
    const before = b.rig.model.requests.length;
    const error = await start(b, tree.dir, { sessionId, fork: primerFile }, (state) =>
      forkRefusal(state, { cwd: b.repo.dir, sessionId, messageCount }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HarnessError);
    expect((error as HarnessError).evidence.kind).toBe('fork');
    expect((error as HarnessError).message).toBe(
      `the fork would work in ${tree.dir}, not in its worktree ${b.repo.dir}`,
    );
    const other = randomUUID();
    const short = await start(b, tree.dir, { sessionId: other, fork: primerFile }, (state) =>
      forkRefusal(state, { cwd: tree.dir, sessionId: other, messageCount: messageCount + 1 }),
    ).catch((e: unknown) => e);
    expect((short as Error).message).toBe(`the fork holds ${messageCount} messages, the primer ${messageCount + 1}`);
    expect(b.rig.model.requests.length).toBe(before);
  });
});
