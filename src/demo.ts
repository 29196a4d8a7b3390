// `factory demo`: a complete run, offline, through the real pi and the scripted model. It creates a small
// sample repo, installs the factory's pi node into it, starts the scripted model on 127.0.0.1 and a private
// pi agent dir, then runs adw_prompt there. No key, no network; the same pieces back the end-to-end tests.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PreparedRun } from './commands/prepared.js';
import { preparePromptRun } from './commands/prompt.js';
import { openWorkspace, type CommandFlags } from './commands/workspace.js';
import { UsageError } from './errors.js';
import { installNode } from './pi/node.js';
import { factoryRoot } from './pi/resolve.js';
import { makeAgentDir } from './scripted/agentDir.js';
import { startScriptedModel } from './scripted/server.js';
import { call, report, type Tapes } from './scripted/tape.js';

export const DEMO_ASK = 'Which files make up this repo?';
const MARKER = '.factory-demo';

export const DEMO_FILES: Record<string, string> = {
  'README.md': '# greet\n\nA tiny library that greets people, used by the factory demo.\n',
  'package.json': `${JSON.stringify({ name: 'greet', version: '1.0.0', type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/greet.js': "export function greet(name) {\n  return `Hello, ${name}!`;\n}\n",
  'test/greet.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { greet } from '../src/greet.js';\n\ntest('greets by name', () => {\n  assert.equal(greet('Ada'), 'Hello, Ada!');\n});\n",
  '.gitignore': 'node_modules/\nadws/adw_data/\n',
};

/** The scripted agent: list the tracked files, read the README, then report through the typed gate. */
export function demoTapes(thinkMs = 600): Tapes {
  return {
    default: [
      call('bash', { command: 'git ls-files' }, { thinkMs }),
      call('read', { path: 'README.md' }, { thinkMs }),
      report({
        status: 'success',
        summary: 'Five tracked files: a README, package.json, .gitignore, src/greet.js (the library) and test/greet.test.js (its node:test suite).',
        artifacts: ['README.md', 'package.json', '.gitignore', 'src/greet.js', 'test/greet.test.js'],
        notes_for_next_agent: 'Run the tests with `npm test` (node --test).',
      }, undefined, { thinkMs }),
    ],
  };
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Create (or recreate) the demo repo; a non-empty folder that is not a previous demo is refused. */
export function createDemoRepo(dir: string): string {
  const repo = path.resolve(dir);
  if (fs.existsSync(repo)) {
    const entries = fs.readdirSync(repo);
    if (entries.length > 0 && !entries.includes(MARKER)) {
      throw new UsageError(`--dir ${repo} is not empty and holds no previous demo: choose an empty or new folder`);
    }
    for (const entry of entries) fs.rmSync(path.join(repo, entry), { recursive: true, force: true });
  }
  fs.mkdirSync(repo, { recursive: true });
  for (const [name, text] of Object.entries(DEMO_FILES)) {
    fs.mkdirSync(path.dirname(path.join(repo, name)), { recursive: true });
    fs.writeFileSync(path.join(repo, name), text);
  }
  git(repo, 'init', '-q');
  git(repo, 'config', 'user.name', 'factory demo');
  git(repo, 'config', 'user.email', 'demo@factory.invalid');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'sample payload');
  // After the commit: the marker and the node's settings stay out of the demo's history.
  fs.writeFileSync(path.join(repo, MARKER), 'created by `factory demo`\n');
  installNode(repo, factoryRoot());
  return fs.realpathSync(repo);
}

export async function prepareDemo(flags: CommandFlags): Promise<PreparedRun> {
  const keep = flags.dir !== undefined;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-demo-'));
  const repo = createDemoRepo(flags.dir ?? path.join(scratch, 'greet'));
  const model = await startScriptedModel({ tapes: demoTapes() });
  const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
  const close = async () => {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
    if (keep) process.stderr.write(`factory demo: the demo repo is kept at ${repo}\n`);
  };
  try {
    const demoFlags = { ...flags, model: agent.route, config: undefined };
    const ws = await openWorkspace(demoFlags, { env: { ...process.env, ...agent.env }, cwd: repo });
    const prepared = await preparePromptRun(ws, { ask: DEMO_ASK, model: agent.route, retries: flags.retries }, demoFlags);
    return { ...prepared, close };
  } catch (error) {
    await close();
    throw error;
  }
}
