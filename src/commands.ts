// Commands as the CLI sees them: validate the input (bad input = UsageError, exit 2, nothing written), then
// build a Run and its phases. No view code here: the composition root decides how the run is shown.
import fs from 'node:fs';
import path from 'node:path';
import { ADW_NAME as PROMPT_ADW, promptPhases } from '../adws/adw_prompt.js';
import { UsageError, errorMessage } from './errors.js';
import { createPiHarness } from './harness/pi.js';
import { resolveWorkspaceRoot, workspacePaths, type WorkspacePaths } from './paths.js';
import { factoryRoot, PiUnavailableError, resolvePi } from './pi/resolve.js';
import { Run, type Phase } from './runner.js';

export interface CommandFlags {
  model?: string;
  harness: string;
  retries: number;
  cwd?: string;
  dir?: string;
  config?: string;
  ui: boolean;
  json: boolean;
}

export interface PreparedRun {
  run: Run;
  phases: Phase[];
  /** What goes to stdout once the run is over (the disposed envelope), if anything. */
  output(): unknown;
  close(): Promise<void>;
}

export const HARNESSES = ['pi'];

const KNOWN_FLAGS = new Set(['model', 'harness', 'retries', 'cwd', 'dir', 'config', 'ui', 'json', 'help', 'version']);

/** meow reports an unknown flag on two lines; the house rule is one line, so the check is ours. */
export function unknownFlag(argv: string[]): string | undefined {
  for (const arg of argv) {
    if (arg === '--') break;
    if (!arg.startsWith('-') || arg === '-') continue;
    const name = arg.replace(/^--?/, '').split('=')[0] ?? '';
    const bare = name.startsWith('no-') ? name.slice(3) : name;
    if (!KNOWN_FLAGS.has(bare)) return arg.split('=')[0];
  }
  return undefined;
}


function existingDir(dir: string, what: string): string {
  const abs = path.resolve(dir);
  let stat;
  try {
    stat = fs.statSync(abs);
  } catch {
    throw new UsageError(`${what} does not exist: ${abs}`);
  }
  if (!stat.isDirectory()) throw new UsageError(`${what} is not a folder: ${abs}`);
  return abs;
}

/** Refuse early (before any write) when the runtime data folders could not be written. */
export function assertWritable(dir: string, what: string): void {
  let probe = path.resolve(dir);
  while (!fs.existsSync(probe)) {
    const parent = path.dirname(probe);
    if (parent === probe) break;
    probe = parent;
  }
  try {
    fs.accessSync(probe, fs.constants.W_OK);
    if (!fs.statSync(probe).isDirectory()) throw new Error('not a folder');
  } catch {
    throw new UsageError(`${what} is not writable: ${dir} (check ${probe})`);
  }
}

/** The roster is issue-3 territory; for now an explicit or present roster must at least be readable YAML. */
export async function assertRosterReadable(root: string, config: string | undefined): Promise<void> {
  const file = config ? path.resolve(config) : path.join(root, 'adws', 'adw_config', 'factory.config.yaml');
  if (!config && !fs.existsSync(file)) return;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`roster unreadable: ${file} (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)})`);
  }
  const { parse: parseYaml } = await import('yaml'); // only when there is a roster: it costs ~20 ms to load
  try {
    parseYaml(text);
  } catch (error) {
    throw new UsageError(`roster is not valid YAML: ${file}: ${errorMessage(error).split('\n')[0]}`);
  }
}

function checkWorkspace(paths: WorkspacePaths): void {
  assertWritable(paths.sessionsDir, 'session folder');
  assertWritable(paths.schemasDir, 'schema folder');
}

async function resolvePiOrUsage(env: NodeJS.ProcessEnv) {
  try {
    return await resolvePi({ env, factoryRoot: factoryRoot() });
  } catch (error) {
    if (error instanceof PiUnavailableError) throw new UsageError(error.message);
    throw error;
  }
}

export function parseRetries(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 10) throw new UsageError(`--retries must be an integer from 0 to 10 (got ${value})`);
  return value;
}

export async function preparePrompt(
  ask: string,
  flags: CommandFlags,
  extra: { env?: NodeJS.ProcessEnv; cwd?: string; close?: () => Promise<void> } = {},
): Promise<PreparedRun> {
  if (!ask.trim()) throw new UsageError('empty ask: factory prompt "<what you want to know>"');
  if (!HARNESSES.includes(flags.harness)) throw new UsageError(`unknown harness ${JSON.stringify(flags.harness)} (available: ${HARNESSES.join(', ')})`);
  const retries = parseRetries(flags.retries);
  if (flags.model !== undefined && !/^[^\s/]+\/\S+$/.test(flags.model)) throw new UsageError(`--model must be provider/id (got ${JSON.stringify(flags.model)})`);
  const cwd = existingDir(extra.cwd ?? flags.cwd ?? process.cwd(), '--cwd');
  const root = resolveWorkspaceRoot(cwd);
  const paths = workspacePaths(root);
  await assertRosterReadable(root, flags.config);
  checkWorkspace(paths);
  const env = extra.env ?? process.env;
  const pi = await resolvePiOrUsage(env);
  const run = new Run(PROMPT_ADW, root);
  const phases = promptPhases({ ask, harness: createPiHarness(pi), workspace: paths, cwd: root, retries, model: flags.model, env });
  return { run, phases, output: () => run.results.dispose, close: extra.close ?? (async () => {}) };
}

export async function prepareCommand(command: string | undefined, args: string[], flags: CommandFlags): Promise<PreparedRun | 'help'> {
  switch (command) {
    case undefined:
      return 'help';
    case 'prompt':
      return preparePrompt(args.join(' '), flags);
    case 'demo': {
      const { prepareDemo } = await import('./demo.js');
      return prepareDemo(flags);
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)} (try: factory --help)`);
  }
}
