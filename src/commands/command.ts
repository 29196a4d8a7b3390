// Commands as the CLI sees them: validate the input (bad input = UsageError, exit 2, nothing written), then
// build a Run and its phases. No view code here: the entry (../cli.tsx) picks the front end that shows the run.
import { UsageError } from '../contract/errors.js';
import type { PreparedRun } from './prepared.js';
import type { CommandFlags } from './workspace.js';
import { EXIT } from '../contract/exit.js';

export type { CommandFlags } from './workspace.js';
export type { PreparedRun } from './prepared.js';

/** What a command asks of the entry: run a workflow, or print something and exit. */
export type Prepared =
  | { kind: 'run'; prepared: PreparedRun }
  | { kind: 'help' }
  | { kind: 'home' }
  | { kind: 'doctor'; ids: string[] }
  | { kind: 'print'; stdout: string; exit: number };

/** The commands that open a workspace from `--cwd` (or the current folder) as their first step. */
const WORKSPACE_COMMANDS = new Set(['prompt', 'build', 'bon', 'apply', 'resume', 'runs', 'show', 'clean']);

// Each command's modules are imported when it runs: start-up pays only for the command at hand.
export async function prepareCommand(
  command: string | undefined,
  args: string[],
  flags: CommandFlags,
  interactive = false,
): Promise<Prepared> {
  if (command !== undefined && WORKSPACE_COMMANDS.has(command)) {
    // git finds the top-level while the command's modules load (see prefetchWorkspaceRoot).
    const { prefetchWorkspaceRoot } = await import('../config/paths.js');
    prefetchWorkspaceRoot(flags.cwd ?? process.cwd());
  }
  const { openWorkspace } = await import('./workspace.js');
  switch (command) {
    case undefined:
      return { kind: 'home' };
    case 'prompt': {
      const { askFrom, preparePromptRun, promptArgs } = await import('./prompt.js');
      const input = promptArgs(await askFrom(args), flags);
      return { kind: 'run', prepared: await preparePromptRun(await openWorkspace(flags), input, flags) };
    }
    case 'build': {
      if (args.length > 1) throw new UsageError(`factory build takes one spec (got ${args.length})`);
      const { buildArgs, prepareBuildRun } = await import('./build.js');
      const input = buildArgs(args[0], flags);
      return { kind: 'run', prepared: await prepareBuildRun(await openWorkspace(flags), input, flags) };
    }
    case 'bon': {
      if (args.length > 1) throw new UsageError(`factory bon takes one spec (got ${args.length})`);
      const { bonArgs, prepareBonRun } = await import('./bon.js');
      const input = bonArgs(args[0], flags);
      return { kind: 'run', prepared: await prepareBonRun(await openWorkspace(flags), input, flags) };
    }
    case 'apply': {
      const { applyArgs, applyOutput } = await import('./apply.js');
      const input = applyArgs(args, { force: flags.force, yes: flags.yes });
      const done = await applyOutput(await openWorkspace(flags), input, flags.json);
      return { kind: 'print', stdout: done.stdout, exit: done.exit };
    }
    case 'resume': {
      if (args.length !== 1) throw new UsageError('usage: factory resume <adw_id>');
      const { prepareResumeRun, resumeApply } = await import('./resume.js');
      const { sweepScratch } = await import('../process/scratch.js');
      sweepScratch(); // what a killed cockpit left in the temp folder
      const ws = await openWorkspace(flags);
      // Killed between its harvest and the apply it asked for: the apply is what is left of the run.
      const applied = await resumeApply(ws, args[0], flags.json);
      if (applied) return { kind: 'print', stdout: applied.stdout, exit: applied.exit };
      return { kind: 'run', prepared: await prepareResumeRun(ws, args[0], flags) };
    }
    case 'runs': {
      if (args.length > 0) throw new UsageError('usage: factory runs [--json]');
      const { runsOutput } = await import('./runs.js');
      const ws = await openWorkspace(flags, { rosterOptional: true });
      return { kind: 'print', stdout: await runsOutput(ws.paths, flags.json), exit: EXIT.green };
    }
    case 'show': {
      if (args.length !== 1) throw new UsageError('usage: factory show <adw_id> [--json]');
      const { showOutput } = await import('./runs.js');
      const ws = await openWorkspace(flags, { rosterOptional: true });
      return { kind: 'print', stdout: await showOutput(ws.paths, args[0], flags.json), exit: EXIT.green };
    }
    case 'clean': {
      const { cleanArgs, cleanOutput } = await import('./clean.js');
      cleanArgs(args, flags); // bad input before the workspace opens
      return {
        kind: 'print',
        stdout: await cleanOutput(await openWorkspace(flags, { rosterOptional: true }), args, flags),
        exit: EXIT.green,
      };
    }
    case 'init': {
      if (args.length > 0) throw new UsageError('usage: factory init [--into <repo>] [--json]');
      const { initOutput } = await import('./init.js');
      return { kind: 'print', stdout: await initOutput(flags), exit: EXIT.green };
    }
    case 'doctor': {
      const { doctorHeadless, prescriptionOutput } = await import('./doctor.js');
      if (flags.layer !== undefined || flags.into !== undefined)
        return { kind: 'print', stdout: prescriptionOutput(flags), exit: EXIT.green };
      // In a terminal the checklist resolves live on screen; elsewhere it never waits on a key.
      if (interactive) return { kind: 'doctor', ids: args };
      const done = await doctorHeadless(args, flags);
      return { kind: 'print', stdout: done.stdout, exit: done.exit };
    }
    case 'demo': {
      if (args.length > 1 || (args[0] !== undefined && args[0] !== 'prompt' && args[0] !== 'bon'))
        throw new UsageError('usage: factory demo [bon|prompt] [--dir <path>]');
      const { prepareDemo } = await import('./demo.js');
      return { kind: 'run', prepared: await prepareDemo(flags, args[0] === 'prompt' ? 'prompt' : 'bon') };
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)} (try: factory --help)`);
  }
}
