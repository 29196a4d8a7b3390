// The battery check: the factory's pi node run whole by the pi the cockpit will use (the doctor's resolved
// pi: FACTORY_PI, the roster's `pi`, pi on PATH or the bundled one), at zero tokens. It is plain code
// (src/doctor/nodeBattery.ts), so an installed cockpit without dev dependencies runs it too. `--quick` skips it.
import { runNodeBattery } from './nodeBattery.js';
import type { CheckResult, DoctorCheck, DoctorContext } from './types.js';

const DEFAULT_BATTERY_TIMEOUT_MS = 180_000;

export function batteryCheck(): DoctorCheck {
  return {
    id: 'tests.battery',
    category: 'tests',
    severity: 'required',
    title: 'node battery (real pi, scripted model)',
    slow: true,
    async run(ctx: DoctorContext): Promise<CheckResult> {
      if (ctx.pi instanceof Error)
        return { status: 'fail', detail: `no pi to run the node with: ${ctx.pi.message}`, fix: 'see tools.pi' };
      const timeoutMs = ctx.batteryTimeoutMs ?? DEFAULT_BATTERY_TIMEOUT_MS;
      const outcome = await runNodeBattery({ pi: ctx.pi, factoryRoot: ctx.factoryRoot, env: ctx.env, timeoutMs });
      const seconds = (outcome.ms / 1000).toFixed(1);
      if (outcome.timedOut) {
        return {
          status: 'fail',
          detail: `the battery did not finish within ${Math.round(timeoutMs / 1000)} s (its pi processes were ended)`,
          fix: `check that \`${ctx.pi.display} --version\` starts quickly, then \`factory doctor tests.battery\``,
        };
      }
      const red = outcome.probes.filter((p) => !p.ok);
      const on = `pi ${outcome.piVersion ?? '?'}`;
      if (red.length === 0)
        return { status: 'ok', detail: `${outcome.probes.length} probes green on ${on} in ${seconds} s` };
      const more =
        red.length > 1
          ? ` (and ${red.length - 1} more: ${red
              .slice(1)
              .map((p) => p.name)
              .join(', ')})`
          : '';
      return {
        status: 'fail',
        detail: `${red[0]!.name}: ${red[0]!.detail}${more}`,
        fix: `check the node files (node.ext.*) of ${ctx.factoryRoot}, then \`factory doctor tests.battery\``,
      };
    },
  };
}
