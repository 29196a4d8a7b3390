// Models: every roster route and the fallback route must be one pi lists (`pi --list-models`). An unknown
// `--model` does not fail pi — it bills a synthetic clone of the provider's default — so absence is a hard
// fail. And every auth profile's keys must be set (names only: a value is never read into a detail).
import { missingProfileKeys } from '../config/env.js';
import { agentFor, effectiveFallback, fallbackRoute, ROSTER_FILE, type Roster } from '../config/roster.js';
import { KNOWN_ROLES } from '../config/rosterVocabulary.js';
import { listModels } from './probes.js';
import type { CheckResult, DoctorCheck, DoctorContext } from './types.js';

/** The roles a workflow runs on every use (the judge runs only with --judge, on the builder's model by default). */
const WORKFLOW_ROLES = KNOWN_ROLES.filter((r) => r.role !== 'judge');

function rosterFile(ctx: DoctorContext, roster?: Roster): string {
  return roster?.file ?? ROSTER_FILE;
}

/** `pi --list-models <provider>` as the user types it: `pi`, or `"$FACTORY_PI"` when that is the pi asked. */
export function listModelsCommand(ctx: Pick<DoctorContext, 'pi'>, provider: string): string {
  const pi = !(ctx.pi instanceof Error) && ctx.pi.source === 'FACTORY_PI' ? '"$FACTORY_PI"' : 'pi';
  return `${pi} --list-models ${provider}`;
}

function routeCheck(
  id: string,
  title: string,
  routeOf: string,
  where: string,
  keys: readonly string[] = [],
): DoctorCheck {
  return {
    id,
    category: 'models',
    severity: 'required',
    title,
    async run(ctx): Promise<CheckResult> {
      const listing = await listModels(ctx);
      if ('error' in listing)
        return {
          status: 'fail',
          detail: `cannot list pi's models: ${listing.error}`,
          fix: 'pi --list-models (it must run and list models)',
        };
      if (listing.routes.has(routeOf)) return { status: 'ok', detail: `${routeOf} listed by pi` };
      const provider = routeOf.split('/')[0] ?? '';
      const providerListed = [...listing.routes].some((r) => r.startsWith(`${provider}/`));
      // A provider pi lists nothing of while the role's key is missing: the key's own row says it, once for every role.
      const missing = missingProfileKeys({ keys: [...keys] }, ctx.env, ctx.dotenv);
      if (!providerListed && missing.length > 0)
        return { status: 'skipped', detail: `not checked: ${missing.join(', ')} is missing (its own row)` };
      const why = providerListed
        ? `${routeOf} is not among pi's ${provider} models (pi would bill its default model instead)`
        : `no ${provider} model is listed by pi (its key is not set, or the provider is unknown)`;
      const list = listModelsCommand(ctx, provider);
      return {
        status: 'fail',
        detail: why,
        fix: providerListed
          ? `correct ${where} — \`${list}\` lists the ids`
          : `set ${provider}'s API key in .env, then \`${list}\``,
      };
    },
  };
}

/** One row per key the roster's profiles name, with the roles that need it: a missing key is one ✗, not one per role. */
function keyCheck(key: string, roles: readonly string[]): DoctorCheck {
  const needs = `for ${roles.join(', ')}`;
  return {
    id: `models.key.${key}`,
    category: 'models',
    severity: 'required',
    title: `${key} ${needs}`,
    async run(ctx): Promise<CheckResult> {
      if (missingProfileKeys({ keys: [key] }, ctx.env, ctx.dotenv).length > 0) {
        return {
          status: 'fail',
          detail: `missing: ${key}, needed ${needs}`,
          fix: `add ${key}=… to ${ctx.dotenv.file} (git-ignored) or export it`,
        };
      }
      return { status: 'ok', detail: `${key} (${ctx.env[key] !== undefined ? 'env' : '.env'}) ${needs}` };
    },
  };
}

export function modelChecks(ctx: DoctorContext): DoctorCheck[] {
  const roster = ctx.roster;
  if (roster instanceof Error) {
    return [
      {
        id: 'models.roster',
        category: 'models',
        severity: 'required',
        title: 'roster',
        run: async () => ({
          status: 'fail',
          detail: roster.message,
          fix: `correct the roster (${ROSTER_FILE}) at the path the message names`,
        }),
      },
    ];
  }
  const checks: DoctorCheck[] = [];
  const where = (field: string) => `${field} in ${rosterFile(ctx, roster)}`;
  if (roster.harness === 'claude') {
    checks.push({
      id: 'models.routes',
      category: 'models',
      severity: 'optional',
      title: 'model routes',
      run: async () => ({ status: 'skipped', detail: 'the roster runs on claude: pi routes do not apply' }),
    });
  } else {
    for (const role of Object.keys(roster.agents).sort()) {
      const profile = agentFor(roster, role);
      if (profile.route)
        checks.push(
          routeCheck(
            `models.route.${role}`,
            `route of ${role}`,
            profile.route,
            where(`agents.${role}.model`),
            profile.auth?.keys,
          ),
        );
    }
    // A roster that routes some roles but lacks one the workflows run leaves that role on pi's default model,
    // which is rarely what was meant (a role dropped, or renamed by a typo since): named, with the fix.
    if (Object.keys(roster.agents).some((role) => agentFor(roster, role).route)) {
      for (const { role, runBy } of WORKFLOW_ROLES.filter((r) => !Object.hasOwn(roster.agents, r.role))) {
        checks.push({
          id: `models.route.${role}`,
          category: 'models',
          severity: 'optional',
          title: `route of ${role}`,
          run: async () => ({
            status: 'warn',
            detail: `the roster has no ${role}: ${runBy} would run on pi's default model`,
            fix: `add agents.${role}.model in ${rosterFile(ctx, roster)}`,
          }),
        });
      }
    }
    const fallback = effectiveFallback(roster, ctx.env, ctx.dotenv.values);
    const origin = fallbackRoute(roster)
      ? where('fallback_model')
      : ctx.env.FACTORY_FALLBACK_MODEL !== undefined
        ? 'FACTORY_FALLBACK_MODEL (env)'
        : `FACTORY_FALLBACK_MODEL (${ctx.dotenv.file})`;
    if (fallback) checks.push(routeCheck('models.route.fallback', 'fallback route', fallback, origin));
    if (checks.length === 0) {
      checks.push({
        id: 'models.routes',
        category: 'models',
        severity: 'optional',
        title: 'model routes',
        run: async () => ({ status: 'skipped', detail: "the roster names no model: pi's default model applies" }),
      });
    }
  }
  const rolesOfKey = new Map<string, string[]>();
  for (const role of Object.keys(roster.agents).sort()) {
    for (const key of roster.agents[role]?.auth?.keys ?? [])
      rolesOfKey.set(key, [...(rolesOfKey.get(key) ?? []), role]);
  }
  for (const [key, roles] of [...rolesOfKey].sort(([a], [b]) => a.localeCompare(b))) checks.push(keyCheck(key, roles));
  return checks;
}
