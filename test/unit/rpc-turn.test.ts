// One RPC turn judged dry: the lines pi would stream are fed by hand, in the shapes pi 0.85 and pi 1.x produce
// (agent_settled with or without `aborted`, a prompt answered `disposition: "handled"` with no run at all).
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/contract/errors.js';
import { SOCLE } from '../../src/contract/agent.js';
import { RpcTurn, type TurnContext } from '../../src/pi/rpcTurn.js';
import type { PiEvent } from '../../src/pi/stream.js';

const inventory = { pi_version: '1.6.0', present: [...SOCLE], missing: [] as string[] };
const ctx: TurnContext = { sessionId: 's-1', inventory, requestedModel: 'scripted/alpha', stderrTail: '' };

function turn(): RpcTurn {
  return new RpcTurn({ timeoutMs: 60_000, idleTimeoutMs: 60_000 }, () => {});
}

function feed(t: RpcTurn, events: PiEvent[]): void {
  for (const event of events) t.take(JSON.stringify(event), event);
}

const assistant = (over: Record<string, unknown>) => ({
  type: 'message_end',
  message: {
    role: 'assistant',
    provider: 'scripted',
    model: 'alpha',
    content: [{ type: 'text', text: 'done' }],
    stopReason: 'stop',
    usage: { totalTokens: 10, cost: { total: 0.001 } },
    ...over,
  },
});

async function judged(t: RpcTurn): Promise<unknown> {
  await t.settled;
  t.dispose();
  try {
    return t.judge(ctx);
  } catch (error) {
    return error;
  }
}

describe('RpcTurn', () => {
  it('settles at agent_settled and judges the text (0.85 shape: no `aborted` field)', async () => {
    const t = turn();
    feed(t, [assistant({}), { type: 'agent_end' }, { type: 'agent_settled' }]);
    expect(await judged(t)).toMatchObject({ payload: 'done', source: 'text', tokens: 10, model: 'scripted/alpha' });
  });

  it('a system message_end (pi ≥ 0.86) counts neither as text, usage nor model', async () => {
    const t = turn();
    const system = {
      type: 'message_end',
      message: {
        role: 'system',
        content: 'You are pi.',
        provider: 'other',
        model: 'x',
        usage: { totalTokens: 99, cost: { total: 1 } },
      },
    };
    feed(t, [system, assistant({}), { type: 'agent_settled', aborted: false }]);
    expect(await judged(t)).toMatchObject({ payload: 'done', tokens: 10, cost: 0.001, model: 'scripted/alpha' });
  });

  it('agent_settled.aborted (pi ≥ 1.1) makes the turn aborted even when the last message is an error', async () => {
    const t = turn();
    feed(t, [
      assistant({ content: [], stopReason: 'error', errorMessage: 'This operation was aborted' }),
      { type: 'agent_settled', aborted: true },
    ]);
    const error = await judged(t);
    expect(error).toBeInstanceOf(HarnessError);
    expect((error as HarnessError).evidence.kind).toBe('aborted');
    expect((error as HarnessError).message).toBe('turn aborted: This operation was aborted');
  });

  it('a prompt pi "handled" without a run settles at once and fails with its own motif, not a timeout', async () => {
    const t = turn();
    t.handledWithoutRun();
    const error = await judged(t);
    expect(error).toBeInstanceOf(HarnessError);
    expect((error as HarnessError).evidence.kind).toBe('handled');
    expect((error as HarnessError).message).toMatch(/handled the prompt without running the agent/);
  });
});
