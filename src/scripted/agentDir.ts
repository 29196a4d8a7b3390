// A private pi agent dir wired to the scripted model: pi reads its whole config from
// PI_CODING_AGENT_DIR, so the user's ~/.pi is never touched by the demo or the tests.

import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SCRIPTED_PROVIDER = 'scripted';

export interface ScriptedModelSpec {
  id: string;
  name?: string;
  /** USD per million tokens. */
  cost: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  contextWindow?: number;
  maxTokens?: number;
  /**
   * A declared prompt-cache lifetime in seconds (pi ≥ 0.86 `promptCache`): only to make pi's cache warming fire
   * against the scripted server. The server's cache (promptCache.ts) never expires; the lifetime is a fiction of the test.
   */
  promptCache?: { short?: number; long?: number };
}

/**
 * Models with different prices, so cost comparisons between best-of-N arms mean something. Cached input costs a
 * tenth of new input, as at the providers, since the server bills the prefixes it has served as cached.
 */
export const DEFAULT_SCRIPTED_MODELS: ScriptedModelSpec[] = [
  { id: 'alpha', name: 'Scripted Alpha', cost: { input: 3, output: 15, cacheRead: 0.3 } },
  { id: 'beta', name: 'Scripted Beta', cost: { input: 1, output: 5, cacheRead: 0.1 } },
  { id: 'gamma', name: 'Scripted Gamma', cost: { input: 2, output: 10, cacheRead: 0.2 } },
];

export interface AgentDirOptions {
  /** The scripted server's `.../v1` URL. */
  baseUrl: string;
  /** Where to write; a fresh temp dir when omitted. Created if missing. */
  dir?: string;
  models?: ScriptedModelSpec[];
  /** Extra keys merged over the default settings.json. */
  settings?: Record<string, unknown>;
  /**
   * The provider name the models are listed under (default `scripted`). A built-in name (`openrouter`) keeps
   * pi's own models of that provider and routes the listed ids to the scripted server: a roster written for
   * the real provider then runs unchanged, offline.
   */
  provider?: string;
}

export interface AgentDir {
  dir: string;
  /** The env entries pi needs to use this dir, offline and quiet. */
  env: Record<string, string>;
  /** `scripted/<first model id>`: the route for `--model`. */
  route: string;
}

/** Retries short enough for tests (pi's defaults are 3 retries from a 2 s base). */
export const SCRIPTED_SETTINGS = {
  retry: { enabled: true, maxRetries: 2, baseDelayMs: 200 },
  quietStartup: true,
} as const;

export function modelsJson(
  baseUrl: string,
  models: ScriptedModelSpec[],
  provider: string = SCRIPTED_PROVIDER,
): unknown {
  return {
    providers: {
      [provider]: {
        baseUrl,
        api: 'openai-completions',
        // pi lists a provider's models only when it has auth; the server ignores the key.
        apiKey: 'scripted-no-key',
        // The session id in an affinity header tells the server which arm asks, when arms send byte-identical prompts.
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false, sendSessionAffinityHeaders: true },
        models: models.map((m) => ({
          id: m.id,
          name: m.name ?? m.id,
          reasoning: false,
          input: ['text'],
          contextWindow: m.contextWindow ?? 128_000,
          maxTokens: m.maxTokens ?? 16_384,
          cost: {
            input: m.cost.input,
            output: m.cost.output,
            cacheRead: m.cost.cacheRead ?? 0,
            cacheWrite: m.cost.cacheWrite ?? 0,
          },
          ...(m.promptCache ? { promptCache: m.promptCache } : {}),
        })),
      },
    },
  };
}

export function agentDirEnv(dir: string): Record<string, string> {
  return { PI_CODING_AGENT_DIR: dir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1', PI_TELEMETRY: '0' };
}

export function makeAgentDir(opts: AgentDirOptions): AgentDir {
  const models = opts.models ?? DEFAULT_SCRIPTED_MODELS;
  const first = models[0];
  if (!first) throw new Error('makeAgentDir: at least one scripted model is needed');
  const dir = opts.dir ?? realpathSync(mkdtempSync(join(tmpdir(), 'factory-pi-agent-')));
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'models.json'),
    `${JSON.stringify(modelsJson(opts.baseUrl, models, opts.provider), null, 2)}\n`,
  );
  writeFileSync(join(dir, 'settings.json'), `${JSON.stringify({ ...SCRIPTED_SETTINGS, ...opts.settings }, null, 2)}\n`);
  return { dir, env: agentDirEnv(dir), route: `${opts.provider ?? SCRIPTED_PROVIDER}/${first.id}` };
}
