// The doctor's models.endpoint row: which providers of pi's models.json it reaches, and what a live, a refusing
// and a non-2xx server give (real HTTP on 127.0.0.1; a refused port answers at once, no timing involved).
import http from 'node:http';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { modelsUrl, piAgentDir, probeEndpoint, providerEndpoints } from '../../src/doctor/endpointChecks.js';

const servers: http.Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

function serve(status: number, body: string): Promise<string> {
  const server = http.createServer((_req, res) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(body),
  );
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1`)),
  );
}

describe('models.endpoint', () => {
  it('reads the providers that have a baseUrl; junk gives none', () => {
    const text = JSON.stringify({
      providers: {
        local: { baseUrl: 'http://127.0.0.1:8080/v1', models: [] },
        anthropic: { modelOverrides: {} },
        odd: { baseUrl: 'ftp://x' },
      },
    });
    expect([...providerEndpoints(text)]).toEqual([['local', 'http://127.0.0.1:8080/v1']]);
    expect(providerEndpoints('{ not json').size).toBe(0);
    expect(modelsUrl('http://h/v1/')).toBe('http://h/v1/models');
    expect(piAgentDir({ HOME: '/home/u' })).toBe('/home/u/.pi/agent');
    expect(piAgentDir({ HOME: '/home/u', PI_CODING_AGENT_DIR: '/x/agent' })).toBe('/x/agent');
  });

  it('a live server is ok with its model count; another HTTP answer warns; a refused port fails with the fix', async () => {
    const live = await serve(200, JSON.stringify({ object: 'list', data: [{ id: 'a' }, { id: 'b' }] }));
    expect(await probeEndpoint('local', live, '/m.json')).toEqual({
      status: 'ok',
      detail: `${live}/models answers (2 models)`,
    });
    const locked = await serve(401, '{}');
    expect(await probeEndpoint('local', locked, '/m.json')).toMatchObject({
      status: 'warn',
      detail: `${locked}/models answered HTTP 401`,
    });
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const free = (probe.address() as net.AddressInfo).port;
        probe.close(() => resolve(free));
      });
    });
    const down = await probeEndpoint('local', `http://127.0.0.1:${port}/v1`, '/m.json');
    expect(down).toEqual({
      status: 'fail',
      detail: `http://127.0.0.1:${port}/v1/models cannot be reached: ECONNREFUSED`,
      fix: `start the model server that answers http://127.0.0.1:${port}/v1 (e.g. \`llama-server -m <model>.gguf --port 8080\`), or correct providers.local.baseUrl in /m.json`,
    });
  });
});
