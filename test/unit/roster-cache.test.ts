// The validated-roster cache: a hit returns what validation returned; any edit is validated again (an invalid
// edit is refused, never served from the cache); an unwritable cache only costs the validation.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRoster, loadRosterIfPresent, RosterError } from '../../src/config/roster.js';
import { makeTempRepo, type TempRepo } from '../helpers/repo.js';

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

function setup(yaml: string): { file: string; cache: string } {
  repo = makeTempRepo();
  const file = path.join(repo.dir, 'adws', 'adw_config', 'factory.config.yaml');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, yaml);
  return { file, cache: path.join(repo.dir, 'adws', 'adw_data', 'cache', 'roster.json') };
}

describe('roster cache', () => {
  it('stores the validated roster and serves it while the file is unchanged', async () => {
    const { file, cache } = setup('gateway: openrouter\nagents:\n  builder: { model: z-ai/glm-5.3 }\n');
    const first = await loadRosterIfPresent(repo!.dir);
    expect(first).toEqual(await loadRoster(file));
    const stored = JSON.parse(fs.readFileSync(cache, 'utf8')) as { key: string; roster: unknown };
    expect(stored.roster).toEqual(first);
    // Proof the hit does not re-read the YAML: a cache entry with the same key is what comes back.
    fs.writeFileSync(cache, JSON.stringify({ key: stored.key, roster: { ...first, gateway: 'from-the-cache' } }));
    expect((await loadRosterIfPresent(repo!.dir)).gateway).toBe('from-the-cache');
  });

  it('validates an edited roster again, and refuses an invalid edit although a cache exists', async () => {
    const { file } = setup('gateway: openrouter\n');
    await loadRosterIfPresent(repo!.dir);
    fs.writeFileSync(file, 'gateway: ""\n');
    expect((await loadRosterIfPresent(repo!.dir)).gateway).toBe('');
    fs.writeFileSync(file, 'agents:\n  builder: { tools: [grpe] }\n');
    await expect(loadRosterIfPresent(repo!.dir)).rejects.toThrow(RosterError);
  });

  it('still loads when the cache cannot be written', async () => {
    setup('gateway: openrouter\n');
    fs.mkdirSync(path.join(repo!.dir, 'adws', 'adw_data'), { recursive: true });
    fs.writeFileSync(path.join(repo!.dir, 'adws', 'adw_data', 'cache'), 'a file where a folder belongs');
    expect((await loadRosterIfPresent(repo!.dir)).gateway).toBe('openrouter');
  });
});
