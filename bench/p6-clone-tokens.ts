// P6: what the clone saves. The same work on the demo payload's spec (specs/farewell.md) done twice through
// the built CLI, real pi and the scripted model: once as `factory bon` with 3 arms (one primer reads the spec
// and the test, each arm is a clone that writes and reports), once as three cold `factory build` runs (each
// reads the spec and the test itself, then writes and reports). Every arm and every build writes the same
// passing file, so both sides do the same work. Input tokens are the prompt tokens the scripted model billed
// for every request it served (its deterministic count). Goal: bon ≤ 0.80× the three cold builds.
// Run alone: `node dist/bench/p6-clone-tokens.js` after `npm run build`, or through `npm run bench p6`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli } from './cli.js';
import { createDemoRepo, DEMO_MODELS } from '../src/commands/demo.js';
import { makeAgentDir } from '../src/scripted/agentDir.js';
import { startScriptedModel } from '../src/scripted/server.js';
import { call, countPromptTokens, report, type Step, type Tapes } from '../src/scripted/tape.js';
import { verdictLine } from './timing.js';

const THIS_FILE = fileURLToPath(import.meta.url);
const SPEC = 'specs/farewell.md';
const GOAL = 0.8;

const readSpec = () => call('read', { path: SPEC });
const readTest = () => call('read', { path: 'test/farewell.test.js' });
const write = () =>
  call('write', {
    path: 'src/farewell.js',
    content: 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n',
  });
const built = () =>
  report({
    status: 'success',
    summary: 'farewell added',
    artifacts: [],
    notes_for_next_agent: '',
    changed_files: ['src/farewell.js'],
  });
const primed = () =>
  report({ status: 'success', summary: 'Plan: add src/farewell.js; node --test must pass.', changed_files: [] });

/** Best-of-3: the primer (on the first model) reads; each arm, on its own model, only writes and reports. */
function bonTapes(): Tapes {
  const [first, ...rest] = DEMO_MODELS.map((route) => `model:${route.split('/')[1]}`);
  const tapes: Tapes = { [first!]: [readSpec(), readTest(), primed(), write(), built()] };
  for (const tape of rest) tapes[tape] = [write(), built()];
  return tapes;
}

/** Cold: each build, on its own model, reads the spec and the test, then writes and reports. */
function coldTapes(): Tapes {
  const tapes: Tapes = {};
  for (const route of DEMO_MODELS)
    tapes[`model:${route.split('/')[1]}`] = [readSpec(), readTest(), write(), built()] as Step[];
  return tapes;
}

interface Side {
  inputTokens: number;
  requests: number;
}

/** One side in its own scratch folder and scripted server; `work` runs the CLI in the fresh repos it is given. */
async function side(tapes: Tapes, work: (repo: () => string, env: NodeJS.ProcessEnv) => Promise<void>): Promise<Side> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-p6-'));
  const model = await startScriptedModel({ tapes });
  try {
    const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
    let repos = 0;
    await work(() => createDemoRepo(path.join(scratch, `greet-${++repos}`)), { ...process.env, ...agent.env });
    const exhausted = model.requests.filter((r) => r.exhausted);
    if (exhausted.length > 0)
      throw new Error(
        `${exhausted.length} request(s) beyond the tapes (${exhausted[0]!.tape}): the two sides would not do the same work`,
      );
    return {
      inputTokens: model.requests.reduce((sum, r) => sum + countPromptTokens(r.body), 0),
      requests: model.requests.length,
    };
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

export interface P6Result {
  bon: Side;
  cold: Side;
  ratio: number;
  ok: boolean;
}

export async function benchP6(): Promise<P6Result> {
  const bon = await side(bonTapes(), (repo, env) =>
    cli(['bon', SPEC, '--models', DEMO_MODELS.join(','), '--no-ui'], repo(), env),
  );
  const cold = await side(coldTapes(), async (repo, env) => {
    for (const route of DEMO_MODELS) await cli(['build', SPEC, '--model', route, '--no-ui'], repo(), env);
  });
  const ratio = bon.inputTokens / cold.inputTokens;
  const result = { bon, cold, ratio, ok: ratio <= GOAL };
  console.log(
    `P6 input tokens, best-of-3 by clone ${bon.inputTokens} (${bon.requests} requests) vs 3 cold builds ${cold.inputTokens} (${cold.requests} requests): ${ratio.toFixed(2)}× (goal ≤ ${GOAL.toFixed(2)}×) — ${verdictLine(result.ok)}`,
  );
  return result;
}

if (process.argv[1] && path.resolve(process.argv[1]) === THIS_FILE) {
  benchP6()
    .then((r) => {
      if (!r.ok) process.exitCode = 1;
    })
    .catch((error: unknown) => {
      console.error(`P6: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    });
}
