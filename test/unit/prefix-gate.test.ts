// When an arm may send its first request: on each model the first arm at once, the others once it has answered
// (or ended); arms on different models never wait on each other.
import { describe, expect, it } from 'vitest';
import { PrefixGate, waitUnlessAborted } from '../../src/bon/spend/prefixGate.js';

const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setTimeout(r, 5));
  return done;
};

describe('the prefix gate', () => {
  it('holds the later arms on a model until the first one opens, whichever way it ends', async () => {
    const gate = new PrefixGate();
    const leader = gate.enter(2, 'scripted/beta');
    expect(leader.after).toBeUndefined();
    expect(await settled(leader.ready)).toBe(true);
    const follower = gate.enter(3, 'scripted/beta');
    const other = gate.enter(4, 'scripted/gamma');
    expect(follower.after).toBe(2);
    expect(other.after).toBeUndefined(); // the first on gamma leads there
    expect(await settled(follower.ready)).toBe(false);
    leader.open();
    leader.open(); // idempotent
    expect(await settled(follower.ready)).toBe(true);
    // An arm on beta added once the leader has answered goes at once, waiting on no one.
    const late = gate.enter(5, 'scripted/beta');
    expect(late.after).toBeUndefined();
    expect(await settled(late.ready)).toBe(true);
  });

  it('a wait ends with the abort of the waiting arm', async () => {
    const controller = new AbortController();
    const never = new Promise<void>(() => undefined);
    const waiting = waitUnlessAborted(never, controller.signal, () => new Error('aborted while waiting'));
    controller.abort();
    await expect(waiting).rejects.toThrow('aborted while waiting');
    await expect(
      waitUnlessAborted(Promise.resolve(), new AbortController().signal, () => new Error('no')),
    ).resolves.toBeUndefined();
  });
});
