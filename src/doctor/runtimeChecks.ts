// The doctor's word on Node: the runtime the cockpit itself runs on (a version past its end of life is warned, with
// the fix), the one pi runs on (the cockpit's own when it is recent enough for pi, else the bundled Node 22), and
// whether the native SQLite binding (better-sqlite3, built for one Node ABI) loads on this one.
import path from 'node:path';
import { compareVersions, PI_MIN_NODE } from '../pi/resolve.js';
import { toolVersion } from './probes.js';
import type { CheckResult, DoctorCheck, DoctorContext } from './types.js';

/** The lowest Node the cockpit starts on (package.json engines); bin/factory.js refuses anything older. */
export const NODE_FLOOR = 20;

/** When each Node line leaves maintenance (nodejs.org's release schedule): past it, no security fixes. */
export const NODE_END_OF_LIFE: Readonly<Record<number, string>> = {
  18: '2025-04-30',
  20: '2026-04-30',
  22: '2027-04-30',
  24: '2028-04-30',
  26: '2029-04-30',
};

/** The Node line users should run today: the active LTS. */
export const NODE_RECOMMENDED = 24;

const UPGRADE = `install Node ${NODE_RECOMMENDED} LTS (e.g. \`nvm install ${NODE_RECOMMENDED}\`, or your package manager's nodejs ${NODE_RECOMMENDED}), then reinstall the cockpit on it`;

/** The cockpit's own Node, judged on `today` (an ISO date): below the floor, past its end of life, or fine. */
export function cockpitNodeVerdict(version: string, today: string): CheckResult {
  const bare = version.replace(/^v/, '');
  const major = Number(bare.split('.')[0]);
  if (!Number.isInteger(major) || major < NODE_FLOOR)
    return { status: 'fail', detail: `Node ${bare} is older than the cockpit's floor (${NODE_FLOOR})`, fix: UPGRADE };
  const eol = NODE_END_OF_LIFE[major];
  if (eol !== undefined && today > eol)
    return {
      status: 'warn',
      detail: `Node ${bare} reached its end of life on ${eol}: no security fixes any more`,
      fix: UPGRADE,
    };
  if (major % 2 === 1) return { status: 'warn', detail: `Node ${bare} is a short-lived odd release`, fix: UPGRADE };
  const pi = compareVersions(bare, PI_MIN_NODE) >= 0 ? '; pi runs on it too' : '';
  return { status: 'ok', detail: `Node ${bare}${eol ? `, supported until ${eol}` : ''}${pi}` };
}

function cockpitNodeCheck(): DoctorCheck {
  return {
    id: 'tools.node',
    category: 'tools',
    severity: 'required',
    title: `Node for the cockpit (≥ ${NODE_FLOOR}, ${NODE_RECOMMENDED} LTS recommended)`,
    run: async () => cockpitNodeVerdict(process.version, new Date().toISOString().slice(0, 10)),
  };
}

/** What pi runs on: the Node that starts its JavaScript CLI, or its own runtime when it is an executable. */
function piNodeCheck(): DoctorCheck {
  return {
    id: 'tools.pi-node',
    category: 'tools',
    severity: 'optional',
    title: 'Node for pi',
    async run(ctx: DoctorContext): Promise<CheckResult> {
      if (ctx.pi instanceof Error) return { status: 'skipped', detail: 'no pi resolves (see tools.pi)' };
      const script = ctx.pi.prefixArgs[0];
      if (!script)
        return { status: 'ok', detail: `${ctx.pi.command} is an executable: it brings or picks its own runtime` };
      if (ctx.pi.command === process.execPath)
        return { status: 'ok', detail: `the cockpit's own Node ${process.versions.node}: one runtime` };
      const probe = await toolVersion(ctx, ctx.pi.command);
      if (!('version' in probe))
        return {
          status: 'fail',
          detail: probe.error,
          fix: 'npm rebuild in the factory folder (it provisions a Node 22 for pi), or set FACTORY_PI',
        };
      const why =
        compareVersions(process.versions.node, PI_MIN_NODE) < 0
          ? ` (the cockpit's Node ${process.versions.node} is older than pi's ${PI_MIN_NODE})`
          : '';
      return { status: 'ok', detail: `Node ${probe.version} at ${ctx.pi.command}${why}` };
    },
  };
}

/** better-sqlite3 is a native addon: built for one Node ABI, it fails to load on another. */
/** Node's module ABI (NODE_MODULE_VERSION) → its release line, for a line a person can act on. */
const ABI_LINES: Readonly<Record<number, number>> = {
  108: 18,
  115: 20,
  120: 21,
  127: 22,
  131: 23,
  137: 24,
  141: 25,
  147: 26,
};

/**
 * Why a native addon does not load, cause first: built for another Node (its ABI and this one's, named as Node
 * lines: a user who switched Node with nvm or fnm), or the loader's own first line with the path trimmed to a name.
 */
export function addonLoadCause(
  message: string,
  node = process.versions.node,
  abi = Number(process.versions.modules),
): string {
  const versions = /NODE_MODULE_VERSION (\d+)[\s\S]*?NODE_MODULE_VERSION (\d+)/.exec(message);
  if (versions) {
    const built = Number(versions[1]);
    const line = ABI_LINES[built];
    return `it was built for ${line ? `Node ${line}` : 'another Node'} (ABI ${built}), and this is Node ${node} (ABI ${abi})`;
  }
  return (message.split('\n')[0] ?? message).replace(/'[^']*\/([^/']+\.node)'/g, "'$1'");
}

export async function sqliteBindingVerdict(
  load: () => Promise<unknown> = () => import('better-sqlite3'),
  factoryRoot?: string,
): Promise<CheckResult> {
  try {
    const mod = (await load()) as {
      default: new (file: string) => { prepare(sql: string): { get(): unknown }; close(): void };
    };
    const db = new mod.default(':memory:');
    const row = db.prepare('select sqlite_version() as v').get() as { v?: string };
    db.close();
    return {
      status: 'ok',
      detail: `better-sqlite3 loads on Node ${process.versions.node} (ABI ${process.versions.modules}), SQLite ${row.v ?? '?'}`,
    };
  } catch (error) {
    const cause = addonLoadCause(String((error as Error)?.message ?? error));
    // The rebuild must run in the cockpit's own folder, with the Node the cockpit runs on now on PATH (nvm's or fnm's
    // current one is not always it): that Node's folder is put first.
    const where = factoryRoot ? `cd '${factoryRoot}' && ` : '';
    const fix = `${where}PATH='${path.dirname(process.execPath)}':$PATH npm rebuild better-sqlite3 (rebuilds it for Node ${process.versions.node}; or run the cockpit on the Node it was installed with)`;
    return { status: 'fail', detail: `better-sqlite3 does not load: ${cause}`, fix };
  }
}

function sqliteBindingCheck(): DoctorCheck {
  return {
    id: 'tools.sqlite-binding',
    category: 'tools',
    severity: 'required',
    title: 'native SQLite binding (factory.db)',
    run: (ctx) => sqliteBindingVerdict(undefined, ctx.factoryRoot),
  };
}

export function runtimeChecks(): DoctorCheck[] {
  return [cockpitNodeCheck(), piNodeCheck(), sqliteBindingCheck()];
}
