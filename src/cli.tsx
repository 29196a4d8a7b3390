#!/usr/bin/env node
// The entry: argv → a prepared command → the headless or the TUI front end → an exit code (./contract/exit.ts). Screens live in src/tui/, the run's course in
// src/cli/runPrepared.ts, signals and cleanup in src/lifecycle.ts. `runCli` is importable: tests drive the real root.
import { errorMessage, UsageError } from './contract/errors.js';
import type { CommandFlags, Prepared, PreparedRun } from './commands/command.js';
import type { Lifecycle } from './lifecycle.js';
import type { ReportRequest, RunIo } from './cli/runPrepared.js';
import { EXIT } from './contract/exit.js';

export interface CliIo extends RunIo {
  /** Whether stdout is a terminal (with --ui, no --json and no CI: the TUI). */
  isTTY: boolean;
  env: NodeJS.ProcessEnv;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, isTTY: Boolean(process.stdout.isTTY), env: process.env };
}

async function printVersion(io: CliIo): Promise<number> {
  const [{ readFileSync }, { factoryRoot }] = await Promise.all([import('node:fs'), import('./pi/resolve.js')]);
  const pkg = JSON.parse(readFileSync(`${factoryRoot()}/package.json`, 'utf8')) as { version: string };
  io.stdout.write(`${pkg.version}\n`);
  return EXIT.green;
}

async function showHelp(io: CliIo): Promise<number> {
  const { helpText } = await import('./cli/help.js');
  io.stdout.write(helpText());
  return EXIT.green;
}

/** Runs one command line to its exit code. Bad input: one line on stderr, exit 2, nothing written. */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  // `factory --version` answers before anything else is loaded: it is what scripts call most.
  if (argv.length === 1 && argv[0] === '--version') return printVersion(io);
  const [{ Lifecycle }, { killAllChildrenSync }] = await Promise.all([
    import('./lifecycle.js'),
    import('./process/supervisor.js'),
  ]);
  const lifecycle = new Lifecycle({
    killAllChildrenSync,
    onWarning: (message) => io.stderr.write(`factory: ${message}\n`),
  });
  lifecycle.installSignals();
  try {
    return await dispatch(argv, io, lifecycle);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`factory: ${error.message}\n`);
    return error.exitCode;
  } finally {
    await lifecycle.dispose();
  }
}

async function dispatch(argv: string[], io: CliIo, lifecycle: Lifecycle): Promise<number> {
  const [{ parseCli }, { prepareCommand }] = await Promise.all([
    import('./cli/args.js'),
    import('./commands/command.js'),
  ]);
  const cli = parseCli(argv);
  if (cli.flags.help) return showHelp(io);
  if (cli.flags.version) return printVersion(io);
  const [command, ...rest] = cli.input;
  const flags = cli.flags;
  const interactive = io.isTTY && flags.ui && !flags.json && !io.env.CI;
  // Read before the command is prepared: a bad --report is one line and exit 2, before anything else happens.
  const report = await reportRequest(flags, io.env);
  if (command === 'prompt' && !interactive) preloadHeadlessRun();
  const prepared: Prepared = await prepareCommand(command, rest, flags, interactive);
  switch (prepared.kind) {
    case 'help':
      return showHelp(io);
    case 'home': {
      // The cockpit home needs a terminal; anywhere else, `factory` alone shows how to use it.
      if (!interactive) return showHelp(io);
      const { runHomeRouter } = await import('./tui/home.js');
      return runHomeRouter(flags, lifecycle, (resumed) => runWith(resumed, true, flags, io, lifecycle, report));
    }
    case 'print':
      io.stdout.write(prepared.stdout);
      return prepared.exit;
    case 'doctor': {
      const { runDoctorScreen } = await import('./tui/doctor.js');
      return runDoctorScreen(prepared.ids, flags, 'command', lifecycle);
    }
    case 'run':
      return runWith(prepared.prepared, interactive, flags, io, lifecycle, report);
  }
}

/**
 * A headless prompt needs all of these before pi can start: asked for at once, their files are read while the
 * workspace's modules compile instead of one module graph after the other. Nothing runs earlier than it did: a
 * module evaluates only definitions. A failure to load surfaces where the module is imported for real.
 */
function preloadHeadlessRun(): void {
  for (const load of [
    () => import('./commands/prompt.js'),
    () => import('./cli/runPrepared.js'),
    () => import('./headless/log.js'),
    () => import('./cli/attachTrace.js'),
  ]) {
    load().catch(() => undefined);
  }
}

/** The front end chosen once: the TUI (run screen or arms board) in a terminal, else the headless log. */
async function runWith(
  prepared: PreparedRun,
  interactive: boolean,
  flags: CommandFlags,
  io: CliIo,
  lifecycle: Lifecycle,
  report?: ReportRequest,
): Promise<number> {
  const { runPrepared } = await import('./cli/runPrepared.js');
  if (!interactive) {
    const { runHeadless } = await import('./headless/log.js');
    return runPrepared(prepared, (p, execute) => runHeadless(p.run, io, flags.json, lifecycle, execute), {
      io,
      json: flags.json,
      interactive,
      lifecycle,
      report,
    });
  }
  const { runFlowScreen, runBonScreen } = await import('./tui/run.js');
  return runPrepared(
    prepared,
    (p, execute) =>
      p.kind === 'bon'
        ? runBonScreen(p, lifecycle, execute, { notify: flags.notify })
        : runFlowScreen(p, lifecycle, execute, { notify: flags.notify }),
    { io, json: false, interactive, lifecycle, report },
  );
}

/** `--report md,junit [--report-dir D]`, read before anything runs: a bad value is one line and exit 2. */
async function reportRequest(flags: CommandFlags, env: NodeJS.ProcessEnv): Promise<ReportRequest | undefined> {
  if (flags.report === undefined) {
    if (flags['report-dir'] !== undefined) throw new UsageError('--report-dir needs --report md, junit or md,junit');
    return undefined;
  }
  const [{ parseReportKinds }, path] = await Promise.all([import('./headless/ciReport.js'), import('node:path')]);
  const kinds = parseReportKinds(flags.report);
  if ('motif' in kinds) throw new UsageError(kinds.motif);
  const dir = flags['report-dir'];
  if (dir !== undefined && dir.trim() === '') throw new UsageError('--report-dir takes a folder');
  return { kinds, env, ...(dir !== undefined ? { dir: path.resolve(dir) } : {}) };
}

/** The process entry (bin/factory.js): the exit code becomes the process's; the process ends on its own. */
export function main(): void {
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`factory: ${errorMessage(error)}\n`);
      process.exitCode = EXIT.infrastructure;
    },
  );
}
