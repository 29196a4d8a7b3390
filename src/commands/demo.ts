// `factory demo`: a complete run, offline, through the real pi and the scripted model. It creates a small
// sample repo, installs the factory's pi node into it, starts the scripted model on 127.0.0.1 and a private
// pi agent dir, then runs a best-of-3 there (`factory demo prompt`: the smallest ADW instead). No key, no
// network; the same pieces back the end-to-end tests.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PreparedRun } from './prepared.js';
import { preparePromptRun } from './prompt.js';
import { openWorkspace, type CommandFlags } from './workspace.js';
import { UsageError } from '../contract/errors.js';
import { installNode } from '../pi/node.js';
import { factoryRoot } from '../pi/resolve.js';
import { makeAgentDir } from '../scripted/agentDir.js';
import { startScriptedModel } from '../scripted/server.js';
import { call, report, type Tapes } from '../scripted/tape.js';

export const DEMO_ASK = 'Which files make up this repo?';
const MARKER = '.factory-demo';

export const DEMO_FILES: Record<string, string> = {
  'README.md': '# greet\n\nA tiny library that greets people, used by the factory demo.\n',
  'package.json': `${JSON.stringify({ name: 'greet', version: '1.0.0', type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/greet.js': 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n',
  'test/greet.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { greet } from '../src/greet.js';\n\ntest('greets by name', () => {\n  assert.equal(greet('Ada'), 'Hello, Ada!');\n});\n",
  '.gitignore': 'node_modules/\nadws/adw_data/\n',
  'specs/farewell.md':
    '# farewell\n\nAdd `src/farewell.js` exporting `farewell(name)` that returns `Goodbye, <name>!`.\nThe test `test/farewell.test.js` must pass (`node --test`).\n',
  'test/farewell.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { farewell } from '../src/farewell.js';\n\ntest('says goodbye by name', () => {\n  assert.equal(farewell('Ada'), 'Goodbye, Ada!');\n});\n",
  'adws/adw_config/factory.config.yaml':
    '# The demo roster: the scripted provider needs no gateway; the payload gate is the test suite.\ngateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node --test\n      timeout: 60\n',
};

/** The three arms of the demo: alpha writes a bug (red), beta and gamma pass at different prices. */
export const DEMO_MODELS = ['scripted/alpha', 'scripted/beta', 'scripted/gamma'];

const write = (content: string) => ({ path: 'src/farewell.js', content });

/** The scripted best-of-3: the primer reads on alpha, then each arm answers on its own model's tape. */
export function bonTapes(thinkMs = 500): Tapes {
  const built = (summary: string) => ({
    status: 'success',
    summary,
    artifacts: [],
    notes_for_next_agent: '',
    changed_files: ['src/farewell.js'],
  });
  return {
    'model:alpha': [
      call('read', { path: 'specs/farewell.md' }, { thinkMs }),
      report(
        {
          status: 'success',
          summary: 'Plan: add src/farewell.js with farewell(name); run node --test.',
          changed_files: [],
        },
        undefined,
        { thinkMs },
      ),
      call('write', write('export function farewell(name) {\n  return `Bye, ${name}.`;\n}\n'), { thinkMs }),
      report(built('farewell added'), undefined, { thinkMs }),
    ],
    'model:beta': [
      call('write', write('export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n'), { thinkMs }),
      report(built('farewell added, tested'), undefined, { thinkMs }),
    ],
    'model:gamma': [
      call('bash', { command: 'node --test 2>&1 | tail -3' }, { thinkMs }),
      call(
        'write',
        write(
          '/** Says goodbye. */\nexport function farewell(name) {\n  const who = String(name);\n  return `Goodbye, ${who}!`;\n}\n',
        ),
        { thinkMs },
      ),
      report(built('farewell added with a doc comment'), undefined, { thinkMs }),
    ],
  };
}

/** The scripted agent: list the tracked files, read the README, then report through the typed gate. */
export function demoTapes(thinkMs = 600): Tapes {
  return {
    default: [
      call('bash', { command: 'git ls-files' }, { thinkMs }),
      call('read', { path: 'README.md' }, { thinkMs }),
      report(
        {
          status: 'success',
          summary:
            'Five tracked files: a README, package.json, .gitignore, src/greet.js (the library) and test/greet.test.js (its node:test suite).',
          artifacts: ['README.md', 'package.json', '.gitignore', 'src/greet.js', 'test/greet.test.js'],
          notes_for_next_agent: 'Run the tests with `npm test` (node --test).',
        },
        undefined,
        { thinkMs },
      ),
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
  fs.writeFileSync(path.join(repo, MARKER), 'created by `factory demo`\n');
  installNode(repo, factoryRoot());
  // Everything committed: best-of-N starts from a clean tree.
  git(repo, 'init', '-q');
  git(repo, 'config', 'user.name', 'factory demo');
  git(repo, 'config', 'user.email', 'demo@factory.invalid');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'sample payload');
  return fs.realpathSync(repo);
}

export async function prepareDemo(flags: CommandFlags, variant: 'bon' | 'prompt' = 'bon'): Promise<PreparedRun> {
  const keep = flags.dir !== undefined;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-demo-'));
  let repo: string;
  let model: Awaited<ReturnType<typeof startScriptedModel>>;
  try {
    repo = createDemoRepo(flags.dir ?? path.join(scratch, 'greet'));
    model = await startScriptedModel({ tapes: variant === 'bon' ? bonTapes() : demoTapes() });
  } catch (error) {
    fs.rmSync(scratch, { recursive: true, force: true }); // a refused --dir (or a server that cannot listen) leaves no temp folder
    throw error;
  }
  const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
  const close = async () => {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
    process.stderr.write(
      keep
        ? `factory demo: the demo repo is kept at ${repo}\n`
        : 'factory demo: the demo repo was a temporary folder and is gone; `factory demo --dir <path>` keeps it (to apply a patch, replay a run…)\n',
    );
  };
  try {
    const demoFlags = { ...flags, model: agent.route, config: undefined };
    const ws = await openWorkspace(demoFlags, { env: { ...process.env, ...agent.env }, cwd: repo });
    if (variant === 'prompt') {
      const prepared = await preparePromptRun(
        ws,
        { ask: DEMO_ASK, model: agent.route, retries: flags.retries },
        demoFlags,
      );
      return {
        ...prepared,
        close: async () => {
          await prepared.close();
          await close();
        },
      };
    }
    const { prepareBonRun } = await import('./bon.js');
    // The demo's repo is a temporary one of its own: on a machine with no OS sandbox its arms run without one, said once.
    const { detectSandbox } = await import('../sandbox/detect.js');
    const probe = await detectSandbox();
    if (!probe.ok)
      process.stderr.write(
        `factory demo: no OS sandbox here (${probe.motif}): the demo's arms run without one, in its temporary repo; for your own repos: ${probe.fix}\n`,
      );
    const prepared = await prepareBonRun(
      ws,
      {
        spec: 'specs/farewell.md',
        arms: 3,
        models: DEMO_MODELS,
        apply: false,
        ...(probe.ok ? {} : { unsandboxed: true }),
      },
      { ...demoFlags, model: undefined },
    );
    // A temporary demo repo is gone when the command ends: a `git apply` proposal for it would be a dead end.
    const output = keep ? prepared.output : () => undefined;
    return {
      ...prepared,
      output,
      close: async () => {
        await prepared.close();
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}
