// P9 (issue 12): what a cache-correct fan-out saves, with caching modelled. The same work on the demo payload's spec
// done twice through the built CLI, real pi and the scripted model (which bills a prompt prefix it has already served
// as cached input, as providers do): once as `factory bon` with 3 arms at once on one model (the primer reads the spec
// and the test; each arm, forked from it and shown at the primer's folder, writes and reports), once as three cold
// `factory build` runs (each reads the spec and the test itself, then writes and reports). The figure is the
// uncached input the scripted model billed across every request of each side. Goal: bon ≤ 0.45× the cold builds.
// Beside it: all input tokens, cached or not (what P6 measures without caching). The demo payload is tiny next to
// pi's own system prompt and tools (~3k tokens); a real primer reads far more of a repository than that, so the
// payload here gets a committed notes file of ~4k tokens (docs/farewells.md) that the primer and each cold build
// read as well.
// Run alone: `node dist/bench/p9-cached-fanout.js` after `npm run build`, or through `npm run bench p9`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cli } from './cli.js';
import { createDemoRepo } from '../src/commands/demo.js';
import { makeAgentDir } from '../src/scripted/agentDir.js';
import { startScriptedModel } from '../src/scripted/server.js';
import { call, report, type Step, type Tapes } from '../src/scripted/tape.js';
import { verdictLine } from './timing.js';

const THIS_FILE = fileURLToPath(import.meta.url);
const SPEC = 'specs/farewell.md';
const MODEL = 'scripted/alpha';
const GOAL = 0.45;

const NOTES = 'docs/farewells.md';
const readSpec = () => call('read', { path: SPEC });
const readNotes = () => call('read', { path: NOTES });
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

/** Best-of-3 on one model: the primer's turn, then one turn per arm (the tape is played a turn per conversation). */
const bonTapes = (): Tapes => ({
  'model:alpha': [
    readSpec(),
    readTest(),
    readNotes(),
    primed(),
    ...[1, 2, 3].flatMap((): Step[] => [write(), built()]),
  ],
});
/** Three cold builds on the same model: each reads the spec and the test, writes and reports. */
const coldTapes = (): Tapes => ({
  'model:alpha': [1, 2, 3].flatMap((): Step[] => [readSpec(), readTest(), readNotes(), write(), built()]),
});

/** The notes the payload gets: what farewells look like across locales, as a project's docs would say it. */
function notes(): string {
  const rows = [
    '# Farewells across locales',
    '',
    'What `farewell(name)` may grow into; the first version only speaks English.',
    '',
    '| locale | phrase | punctuation | notes |',
    '|---|---|---|---|',
  ];
  const phrases = [
    'Goodbye',
    'Au revoir',
    'Adiós',
    'Auf Wiedersehen',
    'Arrivederci',
    'Tchau',
    'Tot ziens',
    'Hejdå',
    'Näkemiin',
    'Do widzenia',
  ];
  for (let i = 0; rows.join('\n').length < 16_000; i += 1) {
    const phrase = phrases[i % phrases.length]!;
    rows.push(
      `| xx-${String(i).padStart(3, '0')} | ${phrase}, {name} | ${i % 3 === 0 ? '!' : '.'} | formal register ${i % 2 === 0 ? 'by default' : 'on request'}; the name is never translated |`,
    );
  }
  return `${rows.join('\n')}\n`;
}

function payload(dir: string): string {
  const repo = createDemoRepo(dir);
  fs.mkdirSync(path.join(repo, 'docs'), { recursive: true });
  fs.writeFileSync(path.join(repo, NOTES), notes());
  execFileSync('git', ['add', '-A'], { cwd: repo });
  execFileSync('git', ['commit', '-qm', 'notes'], { cwd: repo });
  return repo;
}

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
    await work(() => payload(path.join(scratch, `greet-${++repos}`)), {
      ...process.env,
      ...agent.env,
      FACTORY_WORKTREES: path.join(scratch, 'trees'),
    });
    const exhausted = model.requests.filter((r) => r.exhausted);
    if (exhausted.length > 0)
      throw new Error(`${exhausted.length} request(s) beyond the tapes: the two sides would not do the same work`);
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
  const bon = await side(bonTapes(), (repo, env) =>
    cli(['bon', SPEC, '--models', [MODEL, MODEL, MODEL].join(','), '--no-ui'], repo(), env),
  );
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
