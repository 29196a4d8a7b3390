// Helpers for adw_build end-to-end tests: the sample payloads of test/fixtures/build and a runner wired to
// the bench (real pi + scripted model + temp repo with the node installed).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADW_NAME, buildPhases, type BuildAdwOptions } from '../../adws/adw_build.js';
import type { RunEvent } from '../../src/contract/events.js';
import type { GateCommand } from '../../src/gates/judges.js';
import { createPiHarness } from '../../src/harness/pi.js';
import { execute, Run } from '../../src/engine/runner.js';
import type { PromptBench } from './factory.js';

export const BUILD_FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/build');

/** A fixture file's text (e.g. what the scripted builder writes). */
export function buildFixture(name: string): string {
  return fs.readFileSync(path.join(BUILD_FIXTURES, name), 'utf8');
}

/** A payload folder of test/fixtures/build as `promptBench` files, plus the .gitignore every factory repo has. */
export function payloadFiles(name: string): Record<string, string> {
  const root = path.join(BUILD_FIXTURES, name);
  const files: Record<string, string> = { '.gitignore': 'adws/adw_data/\n' };
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(abs);
      else files[path.relative(root, abs)] = fs.readFileSync(abs, 'utf8');
    }
  };
  walk(root);
  return files;
}

export interface BuildOutcome {
  exit: number;
  events: RunEvent[];
  run: Run;
}

export type BuildRunOptions = Partial<Omit<BuildAdwOptions, 'harness' | 'workspace' | 'payloadCommands'>> & {
  payloadCommands: GateCommand[];
  run?: Run;
  /** Called with every event as it happens (to abort the run at the right moment). */
  onEvent?: (event: RunEvent, run: Run) => void;
};

export async function runBuild(bench: PromptBench, opts: BuildRunOptions): Promise<BuildOutcome> {
  const run = opts.run ?? new Run(ADW_NAME, bench.repo.dir);
  const events: RunEvent[] = [];
  run.subscribe((e) => {
    events.push(e);
    opts.onEvent?.(e, run);
  });
  const phases = buildPhases({
    specPath: opts.specPath ?? 'specs/add.md',
    harness: createPiHarness(bench.rig.pi),
    workspace: bench.paths,
    cwd: opts.cwd ?? bench.repo.dir,
    retries: opts.retries ?? 2,
    model: opts.model ?? bench.rig.agentDir.route,
    tools: opts.tools,
    brief: opts.brief,
    payloadCommands: opts.payloadCommands,
    timeoutMs: opts.timeoutMs ?? 60_000,
    idleTimeoutMs: opts.idleTimeoutMs ?? 30_000,
    env: bench.rig.env,
    gateEnv: opts.gateEnv,
    limits: opts.limits,
  });
  const exit = await execute(run, phases);
  return { exit, events, run };
}
