// The doctor's checks (SPEC 3.10). Each one probes the real state when it runs: a program spawned, a file read
// and hashed, pi asked for its models. Nothing here reads a ledger, a trace or any record of an earlier run.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SOCLE } from '../harness/types.js';
import { NODE_EXTENSIONS } from '../pi/node.js';
import { compareVersions, PI_MIN_VERSION } from '../pi/resolve.js';
import { batteryCheck } from './battery.js';
import { modelChecks } from './modelChecks.js';
import { rulesCheck, settingsCheck } from './nodeFiles.js';
import { piVersion, sdkManifest, shortHash, toolVersion } from './probes.js';
import type { CheckResult, DoctorCheck, DoctorContext } from './types.js';

const PI_INSTALL = 'npm i -g @earendil-works/pi-coding-agent (or set FACTORY_PI to a pi executable)';

function claudeCommand(ctx: DoctorContext): string {
  return ctx.env.FACTORY_CLAUDE?.trim() || 'claude';
}

function claudeProbe(ctx: DoctorContext) {
  return toolVersion(ctx, claudeCommand(ctx));
}

function rosterHarness(ctx: DoctorContext): 'pi' | 'claude' {
  return ctx.roster instanceof Error ? 'pi' : ctx.roster.harness;
}

/** pi is needed as soon as the workspace is a pi node (`.pi/settings.json`) or the roster runs on pi. */
function piRequired(ctx: DoctorContext): boolean {
  return existsSync(path.join(ctx.root, '.pi', 'settings.json')) || rosterHarness(ctx) === 'pi';
}

function gitCheck(): DoctorCheck {
  return {
    id: 'tools.git',
    category: 'tools',
    severity: 'required',
    title: 'git',
    async run(ctx) {
      const probe = await toolVersion(ctx, 'git');
      if ('version' in probe) return { status: 'ok', detail: `git ${probe.version}` };
      return { status: 'fail', detail: probe.error, fix: 'install git (e.g. `sudo apt-get install git`) and put it on PATH' };
    },
  };
}

function piToolCheck(ctx: DoctorContext): DoctorCheck {
  const required = piRequired(ctx);
  return {
    id: 'tools.pi',
    category: 'tools',
    severity: required ? 'required' : 'optional',
    title: 'pi',
    async run(c) {
      const probe = await piVersion(c);
      if ('version' in probe) return { status: 'ok', detail: `pi ${probe.version} (${c.pi instanceof Error ? '' : c.pi.display})` };
      return { status: required ? 'fail' : 'warn', detail: probe.error, fix: PI_INSTALL };
    },
  };
}

function claudeCheck(ctx: DoctorContext): DoctorCheck {
  const required = rosterHarness(ctx) === 'claude';
  return {
    id: 'tools.claude',
    category: 'tools',
    severity: required ? 'required' : 'optional',
    title: 'claude',
    async run(c) {
      const probe = await claudeProbe(c);
      if ('version' in probe) return { status: 'ok', detail: `claude ${probe.version}` };
      const fix = 'npm i -g @anthropic-ai/claude-code (or set FACTORY_CLAUDE)';
      if (required) return { status: 'fail', detail: `${probe.error} — the roster's harness is claude`, fix };
      if (probe.missing) return { status: 'skipped', detail: 'not installed; only `--harness claude` needs it' };
      return { status: 'warn', detail: probe.error, fix };
    },
  };
}

function sqliteCheck(): DoctorCheck {
  return {
    id: 'tools.sqlite3',
    category: 'tools',
    severity: 'optional',
    title: 'sqlite3',
    async run(ctx) {
      const probe = await toolVersion(ctx, 'sqlite3');
      if ('version' in probe) return { status: 'ok', detail: `sqlite3 ${probe.version}` };
      return { status: 'warn', detail: `${probe.error}; factory.db still works, only hand inspection needs it`, fix: 'sudo apt-get install sqlite3 (or brew install sqlite)' };
    },
  };
}

function harnessCheck(): DoctorCheck {
  return {
    id: 'tools.harness',
    category: 'tools',
    severity: 'required',
    title: 'at least one harness',
    async run(ctx) {
      const [pi, claude] = await Promise.all([piVersion(ctx), claudeProbe(ctx)]);
      const usable = [...('version' in pi ? ['pi'] : []), ...('version' in claude ? ['claude'] : [])];
      if (usable.length > 0) return { status: 'ok', detail: `usable: ${usable.join(', ')}` };
      return { status: 'fail', detail: 'neither pi nor claude runs here', fix: PI_INSTALL };
    },
  };
}

function piVersionCheck(): DoctorCheck {
  return {
    id: 'pi.version',
    category: 'pi',
    severity: 'required',
    title: `pi binary ≥ ${PI_MIN_VERSION}`,
    async run(ctx) {
      const probe = await piVersion(ctx);
      if (!('version' in probe)) return { status: 'fail', detail: probe.error, fix: PI_INSTALL };
      if (compareVersions(probe.version, PI_MIN_VERSION) < 0) {
        return { status: 'fail', detail: `pi ${probe.version} is older than ${PI_MIN_VERSION}`, fix: 'npm i -g @earendil-works/pi-coding-agent@latest' };
      }
      return { status: 'ok', detail: `pi ${probe.version} ≥ ${PI_MIN_VERSION}` };
    },
  };
}

const minor = (v: string) => v.replace(/^v/, '').split('.').slice(0, 2).join('.');

function sdkCheck(): DoctorCheck {
  const fix = 'npm ci (in the factory folder) — the SDK comes with the factory';
  return {
    id: 'pi.sdk',
    category: 'pi',
    severity: 'required',
    title: 'pi SDK in node_modules',
    async run(ctx) {
      const sdk = sdkManifest(ctx.factoryRoot);
      if (!sdk) return { status: 'fail', detail: `@earendil-works/pi-coding-agent is not in ${ctx.factoryRoot}/node_modules`, fix };
      if (!sdk.version) return { status: 'fail', detail: `${sdk.file} is unreadable or has no version`, fix };
      if (compareVersions(sdk.version, PI_MIN_VERSION) < 0) return { status: 'fail', detail: `SDK ${sdk.version} is older than ${PI_MIN_VERSION}`, fix };
      const binary = await piVersion(ctx);
      if (!('version' in binary)) return { status: 'warn', detail: `SDK ${sdk.version}; the pi binary did not answer, minors not compared`, fix: PI_INSTALL };
      if (minor(binary.version) !== minor(sdk.version)) {
        return { status: 'fail', detail: `SDK ${sdk.version} vs pi binary ${binary.version}: not the same minor`, fix: `npm i -g @earendil-works/pi-coding-agent@${sdk.version}` };
      }
      return { status: 'ok', detail: `SDK ${sdk.version}, same minor as pi ${binary.version}` };
    },
  };
}

/** The node's extensions to look at: the socle always (required), the other node extensions when present. */
export function extensionNames(factoryRoot: string): Array<{ name: string; required: boolean }> {
  const dir = path.join(factoryRoot, '.pi', 'extensions');
  // Display order: the node's own list; a socle name the list lacks still comes (it is required).
  const socle = new Set<string>(SOCLE);
  const names: Array<{ name: string; required: boolean }> = [];
  for (const name of [...NODE_EXTENSIONS, ...SOCLE.filter((n) => !(NODE_EXTENSIONS as readonly string[]).includes(n))]) {
    if (socle.has(name)) names.push({ name, required: true });
    else if (existsSync(path.join(dir, `${name}.ts`))) names.push({ name, required: false });
  }
  return names;
}

function extensionCheck(name: string, required: boolean): DoctorCheck {
  return {
    id: `node.ext.${name}`,
    category: 'node',
    severity: required ? 'required' : 'optional',
    title: `extension ${name}`,
    async run(ctx): Promise<CheckResult> {
      const file = path.join(ctx.factoryRoot, '.pi', 'extensions', `${name}.ts`);
      try {
        return { status: 'ok', detail: `.pi/extensions/${name}.ts sha256 ${shortHash(file)}` };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
        return { status: required ? 'fail' : 'warn', detail: `${file}: ${code === 'ENOENT' ? 'missing' : code}`, fix: `git -C ${ctx.factoryRoot} checkout -- .pi/extensions/${name}.ts` };
      }
    },
  };
}

/** Every check that applies to this context, in display order. Cheap: only existence tests run here. */
export function doctorChecks(ctx: DoctorContext): DoctorCheck[] {
  return [
    gitCheck(),
    piToolCheck(ctx),
    claudeCheck(ctx),
    sqliteCheck(),
    harnessCheck(),
    piVersionCheck(),
    sdkCheck(),
    settingsCheck(),
    rulesCheck(),
    ...extensionNames(ctx.factoryRoot).map(({ name, required }) => extensionCheck(name, required)),
    ...modelChecks(ctx),
    batteryCheck(),
  ];
}
