// Helpers for end-to-end tests of the factory's own workflows: a rig (real pi + scripted model), a temp repo
// with the factory's pi node installed, and a runner wired to collect every event.
import fs from 'node:fs';
import path from 'node:path';
import { promptPhases } from '../../adws/adw_prompt.js';
import type { RunEvent } from '../../src/contract/events.js';
import { createPiHarness } from '../../src/harness/pi.js';
import { workspacePaths, type WorkspacePaths } from '../../src/config/paths.js';
import { installNode } from '../../src/pi/node.js';
import { factoryRoot } from '../../src/pi/resolve.js';
import { execute, Run } from '../../src/engine/runner.js';
import type { Tapes } from '../../src/scripted/tape.js';
import { makeTempRepo, type TempRepo } from './repo.js';
import { startRig, type Rig } from './rig.js';
import type { Limits } from '../../src/harness/types.js';

export interface PromptBench {
  rig: Rig;
  repo: TempRepo;
  paths: WorkspacePaths;
  cleanup(): Promise<void>;
}

export const SAMPLE_FILES = {
  'README.md': '# sample\n',
  'src/main.js': 'console.log("hi");\n',
  '.gitignore': 'adws/adw_data/\n',
};

export async function promptBench(tapes: Tapes, files: Record<string, string> = SAMPLE_FILES): Promise<PromptBench> {
  const rig = await startRig({ tapes });
  const repo = makeTempRepo({ files });
  installNode(repo.dir, factoryRoot());
  return {
    rig,
    repo,
    paths: workspacePaths(repo.dir),
    cleanup: async () => {
      await rig.cleanup();
      repo.cleanup();
    },
  };
}

export interface PromptOutcome {
  exit: number;
  events: RunEvent[];
  run: Run;
}

export async function runPrompt(
  bench: PromptBench,
  ask: string,
  opts: { retries?: number; idleTimeoutMs?: number; timeoutMs?: number; run?: Run; cwd?: string; limits?: Limits } = {},
): Promise<PromptOutcome> {
  const run = opts.run ?? new Run('adw_prompt', bench.repo.dir);
  const events: RunEvent[] = [];
  run.subscribe((e) => events.push(e));
  const phases = promptPhases({
    ask,
    harness: createPiHarness(bench.rig.pi),
    workspace: bench.paths,
    cwd: opts.cwd ?? bench.repo.dir,
    retries: opts.retries ?? 2,
    model: bench.rig.agentDir.route,
    env: bench.rig.env,
    idleTimeoutMs: opts.idleTimeoutMs,
    timeoutMs: opts.timeoutMs,
    limits: opts.limits,
  });
  const exit = await execute(run, phases);
  return { exit, events, run };
}

export function ofType<T extends RunEvent['type']>(events: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
}

/** pids of live processes whose environment (as `KEY=value` strings, Linux /proc) passes `test`. */
export function processesWhere(test: (env: string[]) => boolean): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (test(fs.readFileSync(path.join('/proc', entry, 'environ'), 'latin1').split('\0'))) found.push(Number(entry));
    } catch {
      // exited meanwhile, or not ours
    }
  }
  return found;
}

/** pids of live processes the factory started for this run (they carry FACTORY_RUN_TAG=<adw id>). */
export function processesTagged(tag: string): number[] {
  return processesWhere((env) => env.includes(`FACTORY_RUN_TAG=${tag}`));
}

/** Sum of the assistant usage persisted in a pi session file: the provider's billing as pi recorded it. */
export function sessionFileTokens(
  sessionsDir: string,
  sessionId: string,
): { tokens: number; assistantMessages: number; files: number } {
  const files = fs.readdirSync(sessionsDir).filter((n) => n.endsWith(`_${sessionId}.jsonl`));
  let tokens = 0;
  let assistantMessages = 0;
  for (const file of files) {
    for (const line of fs.readFileSync(path.join(sessionsDir, file), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const entry = JSON.parse(line) as {
        type?: string;
        message?: { role?: string; usage?: { totalTokens?: number } };
      };
      if (entry.type === 'message' && entry.message?.role === 'assistant') {
        assistantMessages += 1;
        tokens += entry.message.usage?.totalTokens ?? 0;
      }
    }
  }
  return { tokens, assistantMessages, files: files.length };
}
