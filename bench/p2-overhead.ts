// P2: what the factory adds around one pi turn. `factory prompt` (whole CLI, headless) against a raw
// `pi -p --mode json` with the same flags, node, scripted model and answer. Goal: ≤ 150 ms more.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDemoRepo } from '../src/commands/demo.js';
import { Envelope, schema } from '../src/envelope/envelopes.js';
import { nodeEnv, writeSchemaFile } from '../src/pi/launch.js';
import { workspacePaths } from '../src/config/paths.js';
import { jsonModeArgs } from '../src/pi/argv.js';
import { factoryRoot, resolvePi } from '../src/pi/resolve.js';
import { makeAgentDir } from '../src/scripted/agentDir.js';
import { startScriptedModel } from '../src/scripted/server.js';
import { report } from '../src/scripted/tape.js';
import { pair } from './timing.js';
import { PROMPT_TOOLS } from '../adws/adw_prompt.js';

const ANSWER = { status: 'success', summary: 'Five files.', artifacts: [], notes_for_next_agent: '' };

export async function benchP2(runs = 7): Promise<{ factoryMs: number; piMs: number; overheadMs: number }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-bench-p2-'));
  const repo = createDemoRepo(path.join(scratch, 'repo'));
  // Enough answers for every run on both sides (plus warm-ups).
  const model = await startScriptedModel({
    tapes: { default: Array.from({ length: 4 * runs + 4 }, () => report(ANSWER)) },
  });
  try {
    const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'agent') });
    const env = { ...process.env, ...agent.env, CI: 'true' };
    const pi = await resolvePi({ env, factoryRoot: factoryRoot() });
    const paths = workspacePaths(repo);
    const jsonSchema = schema(Envelope) as { title: string };
    const schemaFile = writeSchemaFile(paths.schemasDir, jsonSchema.title, jsonSchema);
    const piEnv = nodeEnv(
      { workspace: paths, identity: { adwId: 'bench000', phase: 'prompt', role: 'prompter' }, env },
      schemaFile,
    );
    const ask = 'Which files make up this repo?';
    const { a, b, diff } = await pair(
      {
        label: 'factory prompt',
        command: process.execPath,
        args: [
          path.join(factoryRoot(), 'bin', 'factory.js'),
          'prompt',
          ask,
          '--no-ui',
          '--model',
          agent.route,
          '--cwd',
          repo,
        ],
        options: { env },
      },
      {
        label: 'raw pi -p',
        command: pi.command,
        // A fresh session id per run, as the factory does.
        args: () => [
          ...pi.prefixArgs,
          ...jsonModeArgs({
            sessionId: randomUUID(),
            sessionDir: paths.sessionsDir,
            model: agent.route,
            tools: PROMPT_TOOLS,
          }),
        ],
        options: { env: piEnv, cwd: repo },
        input: ask,
      },
      runs,
    );
    return { factoryMs: a, piMs: b, overheadMs: diff };
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
