// The model endpoints pi's own `models.json` names for the providers the roster uses (a local model server:
// llama.cpp, Ollama, LM Studio, vLLM…, or a proxy): each one is reached once with `GET <baseUrl>/models`, a
// short, bounded request that costs no token. `pi --list-models` lists such models without contacting them, so
// a server that is not running would otherwise show first as a failed run. No key is sent: reaching the server
// is what is checked, its authentication stays pi's.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { piAgentDir } from '../config/paths.js';
import { agentFor, effectiveFallback, type Roster } from '../config/roster.js';
import type { CheckResult, DoctorCheck, DoctorContext } from './types.js';

const ENDPOINT_TIMEOUT_MS = 5_000;

export { piAgentDir } from '../config/paths.js';

/** Each provider of `models.json` that has a `baseUrl`, by name. Pure over the file's text; junk gives none. */
export function providerEndpoints(modelsJsonText: string): Map<string, string> {
  const out = new Map<string, string>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(modelsJsonText);
  } catch {
    return out; // pi reports its own config errors (`pi --list-models` fails, the route rows say so)
  }
  const providers = (parsed as { providers?: unknown } | null)?.providers;
  if (!providers || typeof providers !== 'object') return out;
  for (const [name, config] of Object.entries(providers as Record<string, unknown>)) {
    const baseUrl = (config as { baseUrl?: unknown } | null)?.baseUrl;
    if (typeof baseUrl === 'string' && /^https?:\/\//.test(baseUrl)) out.set(name, baseUrl);
  }
  return out;
}

/** The providers the roster's routes (and the fallback) go through, sorted. */
export function rosterProviders(roster: Roster, ctx: Pick<DoctorContext, 'env' | 'dotenv'>): string[] {
  const routes = Object.keys(roster.agents).map((role) => agentFor(roster, role).route);
  routes.push(effectiveFallback(roster, ctx.env, ctx.dotenv.values));
  const providers = routes
    .filter((r): r is string => typeof r === 'string' && r.includes('/'))
    .map((r) => r.split('/')[0]!);
  return [...new Set(providers)].sort();
}

/** `<baseUrl>/models`, one slash between. */
export function modelsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/models`;
}

/** One GET, bounded: ok on any 2xx, a warning on another HTTP answer (reached, but not as pi will ask), else a failure. */
export async function probeEndpoint(
  provider: string,
  baseUrl: string,
  modelsFile: string,
  timeoutMs = ENDPOINT_TIMEOUT_MS,
): Promise<CheckResult> {
  const url = modelsUrl(baseUrl);
  const fix = `start the model server that answers ${baseUrl} (e.g. \`llama-server -m <model>.gguf --port 8080\`), or correct providers.${provider}.baseUrl in ${modelsFile}`;
  try {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(timeoutMs),
      headers: { accept: 'application/json' },
    });
    const body = await response.text();
    if (!response.ok) return { status: 'warn', detail: `${url} answered HTTP ${response.status}`, fix };
    let count: number | undefined;
    try {
      const data = (JSON.parse(body) as { data?: unknown }).data;
      if (Array.isArray(data)) count = data.length;
    } catch {
      // a server that answers but not in JSON is reached all the same
    }
    return {
      status: 'ok',
      detail: `${url} answers${count === undefined ? '' : ` (${count} model${count === 1 ? '' : 's'})`}`,
    };
  } catch (error) {
    // fetch says "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a port fetch refuses to use…) is its cause.
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${Math.round(timeoutMs / 1000)} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { status: 'fail', detail: `${url} cannot be reached: ${why}`, fix };
  }
}

/** One row per roster provider that pi's `models.json` sends to an endpoint of its own. */
export function endpointChecks(ctx: DoctorContext): DoctorCheck[] {
  if (ctx.roster instanceof Error || ctx.roster.harness === 'claude') return [];
  const modelsFile = path.join(piAgentDir(ctx.env), 'models.json');
  let text: string;
  try {
    text = readFileSync(modelsFile, 'utf8');
  } catch {
    return []; // no models.json: the providers are pi's built-in ones
  }
  const endpoints = providerEndpoints(text);
  return rosterProviders(ctx.roster, ctx)
    .filter((provider) => endpoints.has(provider))
    .map((provider) => ({
      id: `models.endpoint.${provider}`,
      category: 'models' as const,
      severity: 'required' as const,
      title: `endpoint of ${provider}`,
      run: () => probeEndpoint(provider, endpoints.get(provider)!, modelsFile),
    }));
}
