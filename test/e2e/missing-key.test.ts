// A missing provider key, through the built CLI and the real pi under test (issue 10 point 6): pi stops before it
// loads any extension, so the motif must name the key to set, not the node. prompt (json mode) and bon (rpc
// mode) both end with that one line and exit 2; nothing reaches the network (an empty agent dir, PI_OFFLINE).
// Run `npm run build` first (runCli spawns bin/factory.js → dist/).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentDirEnv } from '../../src/scripted/agentDir.js';
import { createDemoRepo } from '../../src/commands/demo.js';
import { runCli } from '../helpers/cli.js';
import { cliChildEnv } from '../helpers/rig.js';

const MOTIF =
  'no API key for openrouter: put OPENROUTER_API_KEY in .env (or in the environment), then `factory doctor`';
let scratch: string | undefined;
afterEach(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

async function keyless(): Promise<{ repo: string; env: Record<string, string> }> {
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-nokey-')));
  const agent = path.join(scratch, 'agent');
  fs.mkdirSync(agent);
  const env = await cliChildEnv(agentDirEnv(agent));
  delete env.OPENROUTER_API_KEY;
  return { repo: createDemoRepo(path.join(scratch, 'greet')), env };
}

describe('a missing provider key', () => {
  it('prompt: one line naming the variable, exit 2, no claim about extensions', async () => {
    const { repo, env } = await keyless();
    const out = await runCli(
      ['prompt', 'hello', '--no-ui', '--model', 'openrouter/anthropic/claude-sonnet-4.5', '--retries', '0'],
      { cwd: repo, env, timeoutMs: 90_000 },
    );
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain(MOTIF);
    expect(out.stderr).not.toMatch(/factory-inventory|extensions were not loaded/);
  });

  it('bon: the same line before the primer (the --models check finds no key), exit 2, and the tree is as it was', async () => {
    const { repo, env } = await keyless();
    const out = await runCli(
      [
        'bon',
        'specs/farewell.md',
        '--no-ui',
        '--models',
        'openrouter/anthropic/claude-sonnet-4.5,openrouter/z-ai/glm-5.3',
      ],
      { cwd: repo, env, timeoutMs: 90_000 },
    );
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain(MOTIF);
    expect(out.stderr).not.toMatch(/factory-inventory|extensions were not loaded/);
  });
});
