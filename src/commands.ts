// Commands as the CLI sees them: validate the input (bad input = UsageError, exit 2, nothing written), then
// build a Run and its phases. No view code here: the composition root decides how the run is shown.
import { UsageError } from './errors.js';
import { buildArgs, prepareBuildRun } from './commands/build.js';
import type { PreparedRun } from './commands/prepared.js';
import { preparePromptRun, promptArgs } from './commands/prompt.js';
import { openWorkspace, type CommandFlags } from './commands/workspace.js';

export type { CommandFlags } from './commands/workspace.js';
export type { PreparedRun } from './commands/prepared.js';

const KNOWN_FLAGS = new Set(['model', 'harness', 'retries', 'cwd', 'dir', 'config', 'ui', 'json', 'help', 'version', 'limit']);

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

/** What a command asks of the composition root: run a workflow, or print something and exit. */
export type Prepared = { kind: 'run'; prepared: PreparedRun } | { kind: 'help' } | { kind: 'home' } | { kind: 'print'; stdout: string; exit: number };

export async function prepareCommand(command: string | undefined, args: string[], flags: CommandFlags): Promise<Prepared> {
  switch (command) {
    case undefined:
      return { kind: 'home' };
    case 'prompt': {
      const input = promptArgs(args.join(' '), flags);
      return { kind: 'run', prepared: await preparePromptRun(await openWorkspace(flags), input, flags) };
    }
    case 'build': {
      if (args.length > 1) throw new UsageError(`factory build takes one spec (got ${args.length})`);
      const input = buildArgs(args[0], flags);
      return { kind: 'run', prepared: await prepareBuildRun(await openWorkspace(flags), input, flags) };
    }
    case 'demo': {
      const { prepareDemo } = await import('./demo.js');
      return { kind: 'run', prepared: await prepareDemo(flags) };
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)} (try: factory --help)`);
  }
}
