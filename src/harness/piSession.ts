// The port's session capability over pi in RPC mode: one long-lived `pi --mode rpc` process (src/pi/rpc.ts) seen
// as an AgentSession. Workflows (best-of-N) drive live sessions through this, never through the RPC client.
import { forkRefusal } from '../pi/forkCheck.js';
import { PiRpc } from '../pi/rpc.js';
import type { RpcState } from '../pi/rpcProtocol.js';
import type { PiCommand } from '../pi/piCommand.js';
import type { AgentSession, ModelPrices, SessionRequest } from './types.js';

/** `get_available_models`' answer as prices per route; a model without a readable price is left out. */
export function pricesOf(data: unknown): Map<string, ModelPrices> {
  const out = new Map<string, ModelPrices>();
  const models = (data as { models?: unknown } | undefined)?.models;
  if (!Array.isArray(models)) return out;
  const price = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  for (const m of models as Array<{ provider?: unknown; id?: unknown; cost?: Record<string, unknown> }>) {
    if (typeof m?.provider !== 'string' || typeof m.id !== 'string' || typeof m.cost !== 'object' || m.cost === null)
      continue;
    const input = price(m.cost.input);
    const output = price(m.cost.output);
    if (input === undefined || output === undefined) continue;
    out.set(`${m.provider}/${m.id}`, { input, output, cacheRead: price(m.cost.cacheRead) ?? input });
  }
  return out;
}

/** `provider/id` → what pi's `set_model` takes. */
function splitRoute(route: string): { provider: string; modelId: string } {
  const slash = route.indexOf('/');
  return { provider: route.slice(0, slash), modelId: route.slice(slash + 1) };
}

/** Opens `pi --mode rpc` on `request.sessionId` (declared before the spawn); resolves once pi answers. */
export async function openPiSession(pi: PiCommand, request: SessionRequest): Promise<AgentSession> {
  const rpc = await PiRpc.open({
    pi,
    cwd: request.cwd,
    workspace: request.workspace,
    flags: {
      sessionId: request.sessionId,
      sessionDir: request.workspace.sessionsDir,
      model: request.model,
      thinking: request.thinking,
      tools: request.tools,
      ...(request.fork ? { fork: request.fork.from } : {}),
    },
    ...(request.fork
      ? {
          reason: 'fork',
          verifyOpen: (state: RpcState) =>
            forkRefusal(state, {
              cwd: request.cwd,
              sessionId: request.sessionId,
              messageCount: request.fork!.messageCount,
            }),
        }
      : {}),
    env: request.env,
    identity: request.identity,
    envelopeSchema: request.envelopeSchema,
    runTag: request.identity.adwId,
    limits: request.limits,
    ...(request.sandbox ? { sandbox: request.sandbox } : {}),
  });
  return {
    get sessionId() {
      return rpc.sessionId;
    },
    get model() {
      return rpc.model;
    },
    get alive() {
      return rpc.alive;
    },
    get pid() {
      return rpc.pid;
    },
    prompt: (message, opts) => rpc.prompt(message, opts),
    clone: (opts) => rpc.clone(opts),
    sessionFile: async () => (await rpc.getState()).sessionFile,
    messageCount: async () => (await rpc.getState()).messageCount,
    switchSession: async (sessionFile) => ({ sessionId: (await rpc.switchSession(sessionFile)).sessionId }),
    switchModel: (route) => {
      const { provider, modelId } = splitRoute(route);
      return rpc.setModel(provider, modelId);
    },
    steer: async (message) => {
      await rpc.command('steer', { message });
    },
    prices: async () => pricesOf(await rpc.command('get_available_models')),
    close: () => rpc.close(),
    endToolProcesses: () => rpc.endToolProcesses(),
  };
}
