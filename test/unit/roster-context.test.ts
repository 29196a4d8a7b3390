// The roster's say over factory-context: a role's writable paths and the pruning settings reach the node's env.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentSetup, openWorkspace } from '../../src/commands/workspace.js';
import { loadRoster, RosterError } from '../../src/config/roster.js';
import { makeTempRepo, type TempRepo } from '../helpers/repo.js';

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const flags = { retries: 2, ui: false, json: false };

function withRoster(yaml: string): string {
  repo = makeTempRepo();
  const file = path.join(repo.dir, 'adws', 'adw_config', 'factory.config.yaml');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, yaml);
  return file;
}

describe('roster → factory-context', () => {
  it('reads context.prune_* and agents.<role>.writable, and refuses an unknown key under context by its path', async () => {
    const file = withRoster(
      'gateway: ""\ncontext: { prune_turns: 3, prune_kb: 16 }\nagents:\n  builder: { writable: [src, test] }\n',
    );
    const roster = await loadRoster(file);
    expect(roster.context).toEqual({ pruneTurns: 3, pruneKb: 16 });
    expect(roster.agents.builder?.writable).toEqual(['src', 'test']);
    fs.writeFileSync(file, 'context: { prune_days: 3 }\n');
    await expect(loadRoster(file)).rejects.toThrow(RosterError);
    await expect(loadRoster(file)).rejects.toThrow(/context: unknown key "prune_days"|context\.prune_days/);
  });

  it("puts them in the role's node environment, and leaves them out when the roster says nothing", async () => {
    withRoster(
      'gateway: ""\ncontext: { prune_turns: 3, prune_kb: 16 }\nagents:\n  builder: { writable: [src, test] }\n',
    );
    const ws = await openWorkspace(flags, { cwd: repo!.dir, env: { PATH: process.env.PATH } });
    const builder = agentSetup(ws, 'builder', flags);
    expect(builder.env).toMatchObject({
      FACTORY_WRITABLE: 'src,test',
      FACTORY_PRUNE_TURNS: '3',
      FACTORY_PRUNE_KB: '16',
    });
    const prompter = agentSetup(ws, 'prompter', flags);
    expect(prompter.env.FACTORY_WRITABLE).toBeUndefined();
    expect(prompter.env.FACTORY_PRUNE_KB).toBe('16');
  });
});
