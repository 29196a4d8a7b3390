// The remembered `pi --list-models` (src/doctor/offeredRoutes.ts): a yes without starting pi, only while nothing
// that decides pi's listing changed; never a secret on disk; a route it lacks is listed fresh (assertModelsOffered).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertModelsOffered, listingKey, rememberedRoutes, rememberRoutes } from '../../src/doctor/offeredRoutes.js';
import { emptyDotEnv } from '../../src/config/env.js';
import type { PiCommand } from '../../src/pi/piCommand.js';
import { tempDir } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A pi that prints a model table and counts its starts in a file. */
function countingPi(dir: string, routes: string[]): { pi: PiCommand; starts: () => number } {
  const log = path.join(dir, 'starts');
  const script = path.join(dir, 'fake-pi.mjs');
  const rows = routes.map((r) => r.split('/').join('  ')).join('\\n');
  fs.writeFileSync(
    script,
    `import fs from 'node:fs';\nfs.appendFileSync(${JSON.stringify(log)}, 'x');\nprocess.stdout.write('provider  model  context\\n${rows}\\n');\n`,
  );
  return {
    pi: { command: process.execPath, prefixArgs: [script], source: 'FACTORY_PI', display: 'fake pi' },
    starts: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').length : 0),
  };
}

describe('remembered routes', () => {
  it("changes its key with the agent folder's files, the project's pi settings and the environment, not with PWD", () => {
    const dir = tempDir('factory-routes-', cleanups);
    const agent = path.join(dir, 'agent');
    fs.mkdirSync(agent);
    const { pi } = countingPi(dir, ['p/a']);
    const env = { PI_CODING_AGENT_DIR: agent, OPENAI_API_KEY: 'sk-one', PWD: '/a' };
    const key = listingKey(pi, dir, env);
    expect(listingKey(pi, dir, { ...env, PWD: '/b' })).toBe(key);
    expect(listingKey(pi, dir, { ...env, OPENAI_API_KEY: 'sk-two' })).not.toBe(key);
    fs.writeFileSync(path.join(agent, 'models.json'), '{}');
    const withModels = listingKey(pi, dir, env);
    expect(withModels).not.toBe(key);
    fs.mkdirSync(path.join(dir, '.pi'));
    fs.writeFileSync(path.join(dir, '.pi', 'settings.json'), '{"packages":[]}');
    expect(listingKey(pi, dir, env)).not.toBe(withModels);
  });

  it('answers under its own key for a day, and writes no value of the environment', () => {
    const dir = tempDir('factory-routes-', cleanups);
    const file = path.join(dir, 'cache', 'pi-routes.json');
    const { pi } = countingPi(dir, ['p/a']);
    const key = listingKey(pi, dir, { ANTHROPIC_API_KEY: 'sk-ant-secret-42' });
    rememberRoutes(file, key, new Set(['p/a', 'p/b']), 1_000);
    expect(rememberedRoutes(file, key, 2_000)).toEqual(new Set(['p/a', 'p/b']));
    expect(rememberedRoutes(file, 'other', 2_000)).toBeUndefined();
    expect(rememberedRoutes(file, key, 1_000 + 25 * 3600_000)).toBeUndefined();
    expect(fs.readFileSync(file, 'utf8')).not.toContain('sk-ant-secret-42');
    fs.writeFileSync(file, 'not json');
    expect(rememberedRoutes(file, key)).toBeUndefined();
  });

  it('a second check of an offered route starts no pi; a route not remembered is listed fresh before a refusal', async () => {
    const dir = tempDir('factory-routes-', cleanups);
    const { pi, starts } = countingPi(dir, ['p/a', 'p/b']);
    const site = {
      root: dir,
      env: { PATH: process.env.PATH ?? '', PI_CODING_AGENT_DIR: path.join(dir, 'agent') },
      dotenv: emptyDotEnv(dir),
      pi,
    };
    await assertModelsOffered(site, ['p/a'], '--model');
    expect(starts()).toBe(1);
    await assertModelsOffered({ ...site }, ['p/a'], '--model');
    expect(starts()).toBe(1);
    await expect(assertModelsOffered({ ...site }, ['p/zzz'], '--model')).rejects.toThrow(/pi does not offer p\/zzz/);
    expect(starts()).toBe(2);
  });
});
