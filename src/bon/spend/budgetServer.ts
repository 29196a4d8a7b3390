// The cockpit's side of the spend gate: a small HTTP server on the loopback that the run's pi nodes ask before each
// model call and each tool (.pi/lib/spend-gate.ts). It only carries the questions to the run's spend watch
// (./watch.ts), which decides. The address holds a random token: only a process given it (the run's nodes, through
// FACTORY_BUDGET_URL) can ask. It never keeps the cockpit alive, and closing it refuses whatever still waits.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SpendWatch } from './watch.js';

export { BUDGET_URL_ENV } from '../../../.pi/lib/spend-gate.js';

export interface BudgetServer {
  /** The address a node is given (FACTORY_BUDGET_URL). */
  url: string;
  close(): Promise<void>;
}

const MAX_BODY = 4096;

type Answer = { ok: true; id?: string } | { ok: false; reason: string };

async function answerOf(
  watch: SpendWatch,
  op: string,
  body: { key?: unknown; id?: unknown; cost?: unknown },
): Promise<Answer | undefined> {
  const key = typeof body.key === 'string' ? body.key : 'node';
  switch (op) {
    case 'reserve':
      return watch.reserve(key);
    case 'go':
      return watch.go(typeof body.id === 'string' ? body.id : '');
    case 'settle':
      watch.settle(typeof body.id === 'string' ? body.id : '', typeof body.cost === 'number' ? body.cost : 0);
      return { ok: true };
    case 'tool': {
      const reason = watch.toolRefusal();
      return reason === undefined ? { ok: true } : { ok: false, reason };
    }
    default:
      return undefined;
  }
}

export async function startBudgetServer(watch: SpendWatch): Promise<BudgetServer> {
  const token = randomBytes(16).toString('hex');
  const server = http.createServer((request, response) => {
    const reply = (status: number, answer: Answer) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    };
    const [, got, op] = (request.url ?? '').split('/');
    if (request.method !== 'POST' || got !== token || !op)
      return reply(404, { ok: false, reason: 'not the spend gate' });
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_BODY) request.destroy();
    });
    request.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text || '{}') as Record<string, unknown>;
      } catch {
        return reply(400, { ok: false, reason: 'not JSON' });
      }
      answerOf(watch, op, body).then(
        (answer) => (answer ? reply(200, answer) : reply(404, { ok: false, reason: `no ${op} at the spend gate` })),
        (error: unknown) => reply(500, { ok: false, reason: String(error) }),
      );
    });
  });
  // A held reservation may wait as long as other arms' calls take: no server timeout cuts it.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${token}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
