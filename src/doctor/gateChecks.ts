// The doctor's look at the payload gates beyond the roster's words: each gate's programs resolved the way the gates
// spawn them (`bash -c` in the payload folder, with the gates' environment), and with `--gates` the gates run once
// on HEAD as best-of-N's baseline runs them (a worktree of HEAD, so the user's own changes play no part): a gate red
// there would verify nothing, a gate that cannot run there stops every bon and build.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { childEnv } from '../config/env.js';
import { gateWhere, missingProgram, simpleCommands } from '../gates/program.js';
import { runToEnd } from '../process/run.js';
import { treeState } from '../process/git.js';
import { gateCommands, setupCommand, type Roster } from '../config/roster.js';
import type { CheckResult, DoctorCheck, DoctorContext } from './types.js';

/** The gates' environment, as the commands give it to them (commands/workspace.ts gateEnv). */
function gatesEnv(ctx: DoctorContext): NodeJS.ProcessEnv {
  return childEnv({ real: ctx.env, dotenv: ctx.dotenv, profile: { keys: [] } });
}

/**
 * The first gate (or `payload.setup`) of the roster whose program cannot start here, as a failed row with the fix;
 * undefined when each can (or what it runs is only known when it runs).
 */
export async function unrunnableGate(
  ctx: DoctorContext,
  roster: Roster,
  rosterName: string,
): Promise<CheckResult | undefined> {
  const env = gatesEnv(ctx);
  const setup = setupCommand(ctx.root, roster);
  const all = [
    ...(setup ? [{ cmd: setup, where: `payload.setup in ${rosterName}` }] : []),
    ...gateCommands(ctx.root, roster).map((cmd, i) => ({
      cmd,
      where: gateWhere(i).replace(/ in .*$/, ` in ${rosterName}`),
    })),
  ];
  for (const { cmd, where } of all) {
    const problem = missingProgram(cmd.run, { cwd: cmd.cwd, env }, where);
    if (problem)
      return {
        status: 'fail',
        detail: `\`${cmd.run}\`: ${problem.program} ${problem.problem} — the gate cannot run, so it would verify nothing`,
        fix: problem.fix,
      };
    const missing = await missingPythonModule(cmd, env, ctx.probeTimeoutMs ?? 10_000);
    if (missing) {
      return {
        status: 'fail',
        detail: `\`${cmd.run}\`: ${missing.python} has no module ${missing.module} — the gate cannot run, so it would verify nothing`,
        fix: `install ${missing.module} for ${missing.python} (${missing.python} -m pip install ${missing.module}), or run it in the project's environment (uv run, poetry run, a virtualenv's python) in ${where}`,
      };
    }
  }
  return undefined;
}

/** `python3 -m pytest` whose interpreter cannot find the module (asked of that interpreter, in the gate's folder). */
async function missingPythonModule(
  cmd: { run: string; cwd: string },
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ python: string; module: string } | undefined> {
  const words = simpleCommands(cmd.run).find((w) => /(^|\/)python[\d.]*$/.test(w[0] ?? '') && w[1] === '-m' && w[2]);
  if (!words) return undefined;
  const [python, , module] = words as [string, string, string];
  const asked = await runToEnd(
    python,
    ['-c', 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 3)', module],
    { cwd: cmd.cwd, env, timeoutMs, keepOutput: false },
  );
  return asked.code === 3 ? { python: path.basename(python), module } : undefined;
}

function rosterOf(ctx: DoctorContext): Roster | undefined {
  return ctx.roster instanceof Error ? undefined : ctx.roster;
}

/** `factory doctor --gates`: every gate once on HEAD, in a worktree of HEAD (the tree as it is when there is no commit). */
export function headGatesCheck(): DoctorCheck {
  return {
    id: 'repo.gates.head',
    category: 'repo',
    severity: 'required',
    title: 'gates on HEAD',
    async run(ctx): Promise<CheckResult> {
      const roster = rosterOf(ctx);
      if (!roster?.file) return { status: 'skipped', detail: 'no roster: no gate to run' };
      const commands = gateCommands(ctx.root, roster);
      if (commands.length === 0) return { status: 'skipped', detail: 'payload.commands is empty' };
      const env = gatesEnv(ctx);
      const [{ commandGate }, { prepareArmTree }] = await Promise.all([
        import('../gates/judges.js'),
        import('../bon/tree/armTree.js'),
      ]);
      const runTag = `doctor-${randomUUID().slice(0, 8)}`;
      const head = await treeState(ctx.root, { env, runTag })
        .then((s) => s.head)
        .catch(() => undefined);
      const gateFolders = commands.map((c) => path.relative(ctx.root, c.cwd));
      const tree = head
        ? await prepareArmTree(ctx.root, {
            run: runTag,
            name: 'gates',
            commit: head,
            gateFolders,
            git: { env, runTag },
            env,
          })
        : undefined;
      const where = tree ? `HEAD ${head!.slice(0, 8)}` : 'the tree as it is (no commit yet)';
      try {
        const verdicts: string[] = [];
        for (const cmd of commands) {
          const cwd = tree ? path.join(tree.dir, path.relative(ctx.root, cmd.cwd)) : cmd.cwd;
          const report = await commandGate({ ...cmd, cwd }, { env, runTag })();
          if (report.outcome === 'setup')
            return {
              status: 'fail',
              detail: `on ${where}: ${report.motif}`,
              fix: report.fix ?? `correct \`${cmd.run}\` in the roster`,
            };
          if (!report.ok) {
            return {
              status: 'fail',
              detail: `\`${cmd.run}\` is red on ${where}: ${report.motif} — best-of-N would verify nothing with it (an arm failing it the same way is excused)`,
              fix: `make \`${cmd.run}\` pass on HEAD as your own shell runs it (or write the command that does in ${path.relative(ctx.root, roster.file!) || roster.file})`,
            };
          }
          verdicts.push(`✓ ${cmd.run} (${report.seconds.toFixed(1)} s)`);
        }
        return { status: 'ok', detail: `on ${where}: ${verdicts.join(' · ')}` };
      } finally {
        await tree?.release().catch(() => undefined);
      }
    },
  };
}
