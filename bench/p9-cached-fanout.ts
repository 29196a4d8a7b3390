// P9 (issue 12): what a cache-correct fan-out saves, with caching modelled. The same work on the demo payload's spec
// done twice through the built CLI, real pi and the scripted model (which bills a prompt prefix it has already served
// as cached input, as providers do): once as `factory bon` with 3 arms at once on one model (the primer reads the spec
// and the test; each arm, forked from it and shown at the primer's folder, writes and reports), once as three cold
// `factory build` runs (each reads the spec and the test itself, then writes and reports). The figure is the
// uncached input the scripted model billed across every request of each side. Goal: bon ≤ 0.45× the cold builds.
// Beside it: all input tokens, cached or not (what P6 measures without caching).
// Run alone: `node dist/bench/p9-cached-fanout.js` after `npm run build`, or through `npm run bench p9`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli } from './cli.js';
import { createDemoRepo } from '../src/demo.js';
import { makeAgentDir } from '../src/scripted/agentDir.js';
import { startScriptedModel } from '../src/scripted/server.js';
import { call, report, type Step, type Tapes } from '../src/scripted/tape.js';
import { verdictLine } from './timing.js';

const THIS_FILE = fileURLToPath(import.meta.url);
const SPEC = 'specs/farewell.md';
const MODEL = 'scripted/alpha';
const GOAL = 0.45;

const readSpec = () => call('read', { path: SPEC });
const readTest = () => call('read', { path: 'test/farewell.test.js' });
const write = () => call('write', { path: 'src/farewell.js', content: "export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n" });
const built = () => report({ status: 'success', summary: 'farewell added', artifacts: [], notes_for_next_agent: '', changed_files: ['src/farewell.js'] });
const primed = () => report({ status: 'success', summary: 'Plan: add src/farewell.js; node --test must pass.', changed_files: [] });

/** Best-of-3 on one model: the primer's turn, then one turn per arm (the tape is played a turn per conversation). */
const bonTapes = (): Tapes => ({ 'model:alpha': [readSpec(), readTest(), primed(), ...[1, 2, 3].flatMap((): Step[] => [write(), built()])] });
/** Three cold builds on the same model: each reads the spec and the test, writes and reports. */
const coldTapes = (): Tapes => ({ 'model:alpha': [1, 2, 3].flatMap((): Step[] => [readSpec(), readTest(), write(), built()]) });

interface Side {
  /** Input tokens billed as new (not from the cache). */
  uncached: number;
  /** Every input token, cached or not. */
  input: number;
  requests: number;
}

async function side(tapes: Tapes, work: (repo: () => string, env: NodeJS.ProcessEnv) => Promise<void>): Promise<Side> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-p9-'));
  const model = await startScriptedModel({ tapes });
  try {
    const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
    let repos = 0;
    await work(() => createDemoRepo(path.join(scratch, `greet-${++repos}`)), { ...process.env, ...agent.env, FACTORY_WORKTREES: path.join(scratch, 'trees') });
    const exhausted = model.requests.filter((r) => r.exhausted);
    if (exhausted.length > 0) throw new Error(`${exhausted.length} request(s) beyond the tapes: the two sides would not do the same work`);
    const unbilled = model.requests.filter((r) => !r.billed);
    if (unbilled.length > 0) throw new Error(`${unbilled.length} request(s) ended without a bill`);
    return {
      uncached: model.requests.reduce((sum, r) => sum + r.billed!.prompt - r.billed!.cached, 0),
      input: model.requests.reduce((sum, r) => sum + r.billed!.prompt, 0),
      requests: model.requests.length,
    };
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

export interface P9Result {
  bon: Side;
  cold: Side;
  ratio: number;
  ok: boolean;
}

export async function benchP9(): Promise<P9Result> {
  const bon = await side(bonTapes(), (repo, env) => cli(['bon', SPEC, '--models', [MODEL, MODEL, MODEL].join(','), '--no-ui'], repo(), env));
  const cold = await side(coldTapes(), async (repo, env) => {
    for (let i = 0; i < 3; i += 1) await cli(['build', SPEC, '--model', MODEL, '--no-ui'], repo(), env);
  });
  const ratio = bon.uncached / cold.uncached;
  const result = { bon, cold, ratio, ok: ratio <= GOAL };
  console.log(
    `P9 uncached input tokens, best-of-3 at once ${bon.uncached} (${bon.requests} requests) vs 3 cold builds ${cold.uncached} (${cold.requests} requests): ` +
      `${ratio.toFixed(2)}× (goal ≤ ${GOAL.toFixed(2)}×; all input, cached or not: ${bon.input} vs ${cold.input} = ${(bon.input / cold.input).toFixed(2)}×) — ${verdictLine(result.ok)}`,
  );
  return result;
}

if (process.argv[1] && path.resolve(process.argv[1]) === THIS_FILE) {
  benchP9()
    .then((r) => {
      if (!r.ok) process.exitCode = 1;
    })
    .catch((error: unknown) => {
      console.error(`P9: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    });
}
