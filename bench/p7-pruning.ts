// P7: what factory-context's pruning saves. The same scripted 30-turn build through the built CLI, real pi and
// the scripted model: each turn runs a verbose test command (~12 KB of output), then the builder writes and
// reports. Once with pruning as shipped (old, big tool results replaced by their head and size for the model
// call) and once with it off (FACTORY_PRUNE_KB very high). Input tokens are the prompt tokens the scripted
// model billed for every request (its deterministic count). The session files keep every result whole.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cli } from './cli.js';
import { createDemoRepo } from '../src/commands/demo.js';
import { makeAgentDir } from '../src/scripted/agentDir.js';
import { startScriptedModel } from '../src/scripted/server.js';
import { call, countPromptTokens, report, type Step } from '../src/scripted/tape.js';

const TURNS = 30;
/** A test run that prints a lot: 300 lines of ~40 characters. */
const VERBOSE = `node -e "for (let i = 0; i < 300; i++) console.log('ok ' + i + ' - a verbose test line, padded')"`;

function tape(): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < TURNS - 2; i += 1) steps.push(call('bash', { command: VERBOSE }));
  steps.push(
    call('write', {
      path: 'src/farewell.js',
      content: 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n',
    }),
  );
  steps.push(
    report({
      status: 'success',
      summary: 'farewell added',
      artifacts: [],
      notes_for_next_agent: '',
      changed_files: ['src/farewell.js'],
    }),
  );
  return steps;
}

async function inputTokens(extraEnv: Record<string, string>): Promise<number> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-p7-'));
  const model = await startScriptedModel({ tapes: { default: tape() } });
  try {
    const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
    const repo = createDemoRepo(path.join(scratch, 'greet'));
    await cli(['build', 'specs/farewell.md', '--model', agent.route, '--no-ui', '--retries', '0'], repo, {
      ...process.env,
      ...agent.env,
      ...extraEnv,
    });
    if (model.requests.some((r) => r.exhausted))
      throw new Error('requests beyond the tape: the two sides would not do the same work');
    return model.requests.reduce((sum, r) => sum + countPromptTokens(r.body), 0);
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

export async function benchP7(): Promise<{ pruned: number; whole: number; ratio: number }> {
  const pruned = await inputTokens({});
  const whole = await inputTokens({ FACTORY_PRUNE_KB: '1000000' });
  const ratio = pruned / whole;
  console.log(
    `P7 input tokens of a scripted ${TURNS}-turn build with a verbose test command: pruned ${pruned} vs whole ${whole}: ${ratio.toFixed(2)}× (${Math.round((1 - ratio) * 100)}% saved)`,
  );
  return { pruned, whole, ratio };
}
