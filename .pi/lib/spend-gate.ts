// The spend gate's node side: before each model call (pi's turn_start, awaited before the provider request) the
// node takes a reservation from the run's shared budget, held by the cockpit (src/bon/spend/budgetServer.ts), asks once
// more as the request is about to leave (before_provider_request: no request leaves after the batch stopped), and
// gives it back with the call's cost at message_end; before each tool it asks whether the batch still runs. A refusal stops
// the node there: the turn is aborted before its request, the tool is blocked. The cockpit may hold a reservation
// until other arms' calls are in (near the cap the arms' calls go one at a time), so the ask has no timeout of its
// own. Only in a factory node given FACTORY_BUDGET_URL (a best-of-N primer or arm); absent, nothing is asked.
import http from 'node:http';

export const BUDGET_URL_ENV = 'FACTORY_BUDGET_URL';

export type GateAnswer = { ok: true; id?: string } | { ok: false; reason: string };

/** One question to the cockpit's gate (POST JSON, JSON back). Any failure is a refusal: the gate fails closed. */
export function askGate(
  url: string,
  op: 'reserve' | 'go' | 'settle' | 'tool',
  body: Record<string, unknown>,
): Promise<GateAnswer> {
  return new Promise((resolve) => {
    const refuse = (why: string) =>
      resolve({ ok: false, reason: `the factory's spend gate did not answer (${why}): the node stops` });
    let target: URL;
    try {
      target = new URL(`${url.replace(/\/$/, '')}/${op}`);
    } catch {
      refuse('bad address');
      return;
    }
    const payload = JSON.stringify(body);
    const request = http.request(
      target,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          try {
            const answer = JSON.parse(text) as { ok?: unknown; id?: unknown; reason?: unknown };
            if (answer.ok === true) resolve({ ok: true, ...(typeof answer.id === 'string' ? { id: answer.id } : {}) });
            else resolve({ ok: false, reason: typeof answer.reason === 'string' ? answer.reason : 'refused' });
          } catch {
            refuse(`status ${response.statusCode}`);
          }
        });
        response.on('error', (error) => refuse(error.message));
      },
    );
    request.on('error', (error) => refuse(error.message));
    request.end(payload);
  });
}

/** A model call the node makes on its own (the compaction narrator): granted with a way to give back its cost. */
export type CallReservation = { ok: true; settle(cost: number): Promise<void> } | { ok: false; reason: string };

/**
 * One reservation from the run's budget for a call outside pi's turns (pi's turn_start does not see it): without
 * FACTORY_BUDGET_URL there is no gate and the call is free to go. `what` names the call in the cockpit's log only.
 */
export async function reserveCall(env: NodeJS.ProcessEnv, what: string): Promise<CallReservation> {
  const url = env[BUDGET_URL_ENV];
  if (!url) return { ok: true, settle: async () => {} };
  const key = env.FACTORY_PHASE ?? 'node';
  const answer = await askGate(url, 'reserve', { key, what });
  if (!answer.ok) return answer;
  let settled = false;
  return {
    ok: true,
    settle: async (cost) => {
      if (settled) return;
      settled = true;
      await askGate(url, 'settle', { key, id: answer.id, cost, what });
    },
  };
}

interface GateApi {
  on(event: 'session_start', handler: () => void): void;
  on(event: 'turn_start', handler: (event: unknown, ctx: { abort(): void }) => Promise<void>): void;
  on(event: 'before_provider_request', handler: (event: unknown, ctx: { abort(): void }) => Promise<undefined>): void;
  on(event: 'message_end', handler: (event: { message: unknown }) => Promise<void>): void;
  on(event: 'tool_call', handler: () => Promise<{ block: true; reason: string } | undefined>): void;
}

/** Puts the gate on a node's events; a no-op without FACTORY_BUDGET_URL. */
export function installSpendGate(pi: GateApi, env: NodeJS.ProcessEnv): void {
  const url = env[BUDGET_URL_ENV];
  if (!url) return;
  const key = env.FACTORY_PHASE ?? 'node';
  let held: string | undefined;
  let refused: string | undefined;
  pi.on('session_start', () => {
    // A clone or a switch is a new arm (in place, one process serves them in turn): judged afresh by the gate.
    refused = undefined;
  });
  pi.on('turn_start', async (_event, ctx) => {
    const answer = await askGate(url, 'reserve', { key });
    if (answer.ok) {
      held = answer.id;
      return;
    }
    refused = answer.reason;
    // Before the provider request: the call is never sent.
    ctx.abort();
  });
  // The request is built (the context hooks ran, which may take a while on a busy machine): a batch stopped since
  // the reservation sends nothing. The reservation goes back, the turn is aborted, the request never leaves.
  pi.on('before_provider_request', async (_event, ctx) => {
    if (held === undefined) return undefined;
    const answer = await askGate(url, 'go', { key, id: held });
    if (answer.ok) return undefined;
    held = undefined;
    refused = answer.reason;
    ctx.abort();
    return undefined;
  });
  pi.on('message_end', async (event) => {
    const message = event.message as { role?: string; usage?: { cost?: { total?: number } } };
    if (message.role !== 'assistant' || held === undefined) return;
    const id = held;
    held = undefined;
    // Awaited: the next reservation of this node is asked only once this call's cost is in.
    await askGate(url, 'settle', { key, id, cost: message.usage?.cost?.total ?? 0 });
  });
  pi.on('tool_call', async () => {
    if (refused) return { block: true, reason: refused };
    const answer = await askGate(url, 'tool', { key });
    if (answer.ok) return undefined;
    refused = answer.reason;
    return { block: true, reason: answer.reason };
  });
}
