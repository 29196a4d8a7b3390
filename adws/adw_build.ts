// adw_build: implement a spec, judged by zero-token gates. A code phase checks the spec and records the tree,
// an agent phase builds and owes a BuildEnvelope, a code phase runs the gates. A red gate sends the build
// back into its live session with the gate's exact motif (the runner's `judges`), up to the build's retries.
import path from 'node:path';
import { agentPhase, fromWorkflow, type AgentWorkflowOptions } from '../src/engine/agentPhase.js';
import { gitDirMotif, restoreGitDir, snapshotGitDir, type GitDirSnapshot } from '../src/bon/git/guard.js';
import type { GateCommand, GateReport } from '../src/gates/judges.js';
import { isWorkTree, treeState, type TreeState } from '../src/process/git.js';
import { InfrastructureError, PhaseFailure } from '../src/contract/errors.js';
import type { Phase, Run } from '../src/engine/runner.js';
import { checkSpecFile } from '../src/config/specFile.js';

export const ADW_NAME = 'adw_build';

/** A builder edits: the default when the roster names no tools. */
export const BUILD_TOOLS = ['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls'];

/** Its retries are spent on envelope refusals and on red gates alike, in the same session. */
export interface BuildAdwOptions extends AgentWorkflowOptions {
  /** The spec to implement, absolute or relative to `cwd`. */
  specPath: string;
  /** The builder's brief (the roster's `briefs/builder.md`), put before the mission when given. */
  brief?: string;
  /** The payload's gate commands; a relative `cwd` is taken from the build's `cwd`. */
  payloadCommands: GateCommand[];
  /** The environment of the code phases' children (gate commands, git); defaults to the cockpit's. */
  gateEnv?: NodeJS.ProcessEnv;
}

/** What the check phase hands on: the spec as the builder is told it, and the tree before the build. */
export interface BuildCheck {
  spec: string;
  specBytes: number;
  tree: TreeState;
}

/** What the gates judge: the BuildEnvelope fields they read. */
interface BuildOutcome {
  status: string;
  summary?: string;
  changed_files?: string[];
}

/** The spec path as the builder should read it: relative to the tree when it lies inside, else absolute. */
function specForAgent(cwd: string, specPath: string): string {
  const abs = path.resolve(cwd, specPath);
  const rel = path.relative(cwd, abs);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs;
}

function commandsFor(opts: BuildAdwOptions): GateCommand[] {
  return opts.payloadCommands.map((c) => ({ ...c, cwd: path.resolve(opts.cwd, c.cwd) }));
}

function describeGates(opts: BuildAdwOptions): string {
  const lines = commandsFor(opts).map((c) => {
    const where = path.relative(opts.cwd, c.cwd) || '.';
    return `- \`${c.run}\` (in ${where}) must exit 0`;
  });
  return ['- every file you list in changed_files must exist in the repository', ...lines].join('\n');
}

export function buildAsk(opts: BuildAdwOptions, check: BuildCheck): string {
  const mission = [
    `Implement the spec in \`${check.spec}\`. Read it whole first, then the files it names.`,
    'Make the change it asks for in this repository, keep the existing tests passing, and add or update tests where the spec calls for them.',
    'When you are done, code will judge your work without you, in this order:',
    describeGates(opts),
    'A red gate sends you its exact motif in this same conversation, so list in changed_files every file you created or modified.',
  ].join('\n');
  return opts.brief && opts.brief.trim() ? `${opts.brief.trim()}\n\n${mission}` : mission;
}

/** The user's .git before the builder ran: kept here, not in the phase's result (which the trace records). */
interface GitWatch {
  snapshot?: GitDirSnapshot;
}

function checkPhase(opts: BuildAdwOptions, watch: GitWatch): Phase {
  return {
    name: 'check',
    kind: 'code',
    async action(run): Promise<BuildCheck> {
      const spec = checkSpecFile(opts.cwd, opts.specPath);
      const git = { runTag: run.adwId, env: opts.gateEnv };
      if (!(await isWorkTree(opts.cwd, git))) {
        throw new PhaseFailure(
          `${opts.cwd} is not a git work tree: the build needs git to record its starting point`,
          undefined,
          'check',
        );
      }
      // A gate whose program cannot start here would judge nothing: refused before any token, with the fix.
      const { gatePreflight } = await import('../src/gates/program.js');
      const cannot = gatePreflight(commandsFor(opts), opts.gateEnv ?? process.env);
      if (cannot) throw new PhaseFailure(cannot, undefined, 'check');
      const tree = await treeState(opts.cwd, git);
      watch.snapshot = await snapshotGitDir(opts.cwd, git);
      return { spec: specForAgent(opts.cwd, opts.specPath), specBytes: spec.bytes, tree };
    },
  };
}

function gatesPhase(opts: BuildAdwOptions, watch: GitWatch): Phase {
  return {
    name: 'gates',
    kind: 'code',
    judges: 'build',
    async action(run, ctx): Promise<GateReport[]> {
      // Before any gate or test runner reads the repository: what the builder changed under .git is undone, and a
      // builder that reached there is not sent back to try again ('guard' is final).
      if (watch.snapshot) {
        const changes = await restoreGitDir(opts.cwd, watch.snapshot, { runTag: run.adwId, env: opts.gateEnv });
        if (changes.length > 0) throw new PhaseFailure(gitDirMotif(changes), undefined, 'guard');
      }
      const envelope = run.results.build as BuildOutcome;
      if (envelope.status !== 'success') {
        throw new PhaseFailure(`the builder reports a failure: ${JSON.stringify(envelope.summary ?? '')}`);
      }
      const { runGateList } = await import('../src/engine/payloadGates.js');
      const {
        reports,
        motif: why,
        detail,
        setup,
      } = await runGateList({
        run,
        phase: 'gates',
        cwd: opts.cwd,
        changedFiles: envelope.changed_files,
        commands: commandsFor(opts),
        signal: ctx.signal,
        env: opts.gateEnv,
      });
      // An interrupted gate list proves nothing, even when every gate that ran was green.
      if (ctx.signal.aborted) throw new PhaseFailure('interrupted by the user', undefined, 'interrupted');
      // A gate that could not run is the machine's failure, not the builder's: no retry, exit 2, the fix in its motif.
      if (setup) throw new InfrastructureError(setup.motif ?? `gate \`${setup.gate}\` cannot run`);
      if (why) throw new PhaseFailure(why, detail, 'gate');
      return reports;
    },
  };
}

export function buildPhases(opts: BuildAdwOptions): Phase[] {
  const watch: GitWatch = {};
  return [
    checkPhase(opts, watch),
    agentPhase({
      name: 'build',
      role: 'builder',
      envelope: 'BuildEnvelope',
      ask: (run: Run) => buildAsk(opts, run.results.check as BuildCheck),
      ...fromWorkflow(opts, { tools: BUILD_TOOLS, timeoutMs: 20 * 60_000 }),
    }),
    gatesPhase(opts, watch),
  ];
}
