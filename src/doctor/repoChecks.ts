// The repository's own set-up: the gate commands that judge a build or an arm, and the brief each role will
// get. Read from the roster and the files on disk when the check runs (no record of an earlier run).
import path from 'node:path';
import { PLACEHOLDER_MARK } from '../init/gateCommand.js';
import { briefSource, ROSTER_FILE, WORKFLOW_ROLES, type Roster } from '../config/roster.js';
import { headGatesCheck, unrunnableGate } from './gateChecks.js';
import type { CheckResult, DoctorCheck, DoctorContext } from './types.js';

function rosterOf(ctx: DoctorContext): Roster | undefined {
  return ctx.roster instanceof Error ? undefined : ctx.roster;
}

function rosterName(ctx: DoctorContext, roster: Roster): string {
  return roster.file ? path.relative(ctx.root, roster.file) || roster.file : ROSTER_FILE;
}

function gatesCheck(): DoctorCheck {
  return {
    id: 'repo.gates',
    category: 'repo',
    severity: 'required',
    title: 'payload gates',
    async run(ctx): Promise<CheckResult> {
      const roster = rosterOf(ctx);
      if (!roster) return { status: 'skipped', detail: 'the roster is invalid (see models.roster)' };
      if (!roster.file)
        return {
          status: 'warn',
          detail: 'no roster: build and bon have no gate command to judge with',
          fix: 'factory init (writes a roster whose gate is your test command)',
        };
      const commands = roster.payload.commands;
      if (commands.length === 0)
        return {
          status: 'warn',
          detail: 'payload.commands is empty: only the declared files are checked',
          fix: `add your test command under payload.commands in ${rosterName(ctx, roster)}`,
        };
      const placeholder = commands.findIndex((c) => c.run.includes(PLACEHOLDER_MARK));
      if (placeholder >= 0) {
        return {
          status: 'fail',
          detail: `payload.commands[${placeholder}] is factory init's placeholder (it always fails)`,
          fix: `set payload.commands[${placeholder}].run to your test command in ${rosterName(ctx, roster)}`,
        };
      }
      const unrunnable = await unrunnableGate(ctx, roster, rosterName(ctx, roster));
      if (unrunnable) return unrunnable;
      const where = roster.payload.dir === '.' ? '' : ` in ${roster.payload.dir}`;
      return { status: 'ok', detail: `${commands.map((c) => c.run).join(' · ')}${where}` };
    },
  };
}

function briefCheck(role: string): DoctorCheck {
  return {
    id: `repo.brief.${role}`,
    category: 'repo',
    severity: 'optional',
    title: `brief of ${role}`,
    async run(ctx): Promise<CheckResult> {
      const source = briefSource(ctx.root, role, ctx.factoryRoot);
      const own = path.join('adws', 'adw_config', 'briefs', `${role}.md`);
      if (!source)
        return { status: 'warn', detail: `no brief at all for ${role}`, fix: `factory init (writes ${own})` };
      if (source.origin === 'default') {
        return {
          status: 'warn',
          detail: `the repository has none: ${role} gets the factory's neutral default`,
          fix: `factory init (writes ${own} for you to edit)`,
        };
      }
      const shown = path.relative(ctx.root, source.file);
      const neutral = briefSource(ctx.factoryRoot, role, ctx.factoryRoot, { defaultOnly: true });
      if (neutral && neutral.text === source.text)
        return { status: 'ok', detail: `${shown}: neutral brief from factory init, not edited yet` };
      return { status: 'ok', detail: `${shown} (${source.text.length} characters)` };
    },
  };
}

/** The roles whose brief matters: the workflows' roles and every role the roster names. */
function roles(ctx: DoctorContext): string[] {
  return [...new Set<string>([...WORKFLOW_ROLES, ...Object.keys(rosterOf(ctx)?.agents ?? {})])];
}

export function repoChecks(ctx: DoctorContext): DoctorCheck[] {
  return [gatesCheck(), ...(ctx.runGates ? [headGatesCheck()] : []), ...roles(ctx).map(briefCheck)];
}
