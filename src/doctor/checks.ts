// The doctor's checks (SPEC 3.10). Each one probes the real state when it runs: a program spawned, a file read
// and hashed, pi asked for its models. Nothing here reads a ledger, a trace or any record of an earlier run.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SOCLE } from '../harness/types.js';
import { NODE_EXTENSIONS } from '../pi/node.js';
import { compareVersions, PI_MAX_TESTED, PI_MIN_VERSION } from '../pi/resolve.js';
import { batteryCheck } from './battery.js';
import { endpointChecks } from './endpointChecks.js';
import { modelChecks } from './modelChecks.js';
import { rulesCheck, settingsCheck } from './nodeFiles.js';
import { repoChecks } from './repoChecks.js';
import { runtimeChecks } from './runtimeChecks.js';
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
      return {
        status: 'fail',
        detail: probe.error,
        fix: 'install git (e.g. `sudo apt-get install git`) and put it on PATH',
      };
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
      if ('version' in probe)
        return { status: 'ok', detail: `pi ${probe.version} (${c.pi instanceof Error ? '' : c.pi.display})` };
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
      return {
        status: 'warn',
        detail: `${probe.error}; factory.db still works, only hand inspection needs it`,
        fix: 'sudo apt-get install sqlite3 (or brew install sqlite)',
      };
    },
  };
}

/** The OS sandbox best-of-N's worktree arms run in: missing, `factory bon` refuses them unless `--unsandboxed`. */
function sandboxCheck(): DoctorCheck {
  return {
    id: 'tools.sandbox',
    category: 'tools',
    severity: 'optional',
    title: 'OS sandbox for best-of-N arms',
    async run(ctx) {
      const { detectSandbox } = await import('../sandbox/detect.js');
      const probe = await detectSandbox(ctx.env);
      if (probe.ok)
        return {
          status: 'ok',
          detail: `${probe.sandbox.version ?? probe.sandbox.kind}: each arm writes only its own tree`,
        };
      return {
        status: 'warn',
        detail: `${probe.motif}: \`factory bon\` in worktrees refuses to run without --unsandboxed`,
        fix: probe.fix,
      };
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

const majorMinor = (v: string) => v.trim().replace(/^v/i, '').split(/[.+-]/).slice(0, 2).join('.');

/**
 * pi's version against the range CI tests: PI_MIN_VERSION (the floor, bundled) to PI_MAX_TESTED (the ceiling leg,
 * any patch of that minor). Below: fail, update. Above: a warning only, the cockpit still runs. Never a downgrade.
 */
export function piVersionVerdict(version: string): CheckResult {
  if (compareVersions(version, PI_MIN_VERSION) < 0) {
    return {
      status: 'fail',
      detail: `pi ${version} is older than ${PI_MIN_VERSION}`,
      fix: 'pi update (or npm i -g @earendil-works/pi-coding-agent@latest)',
    };
  }
  if (compareVersions(majorMinor(version), PI_MAX_TESTED) > 0) {
    return {
      status: 'warn',
      detail: `pi ${version} is newer than the newest pi tested (${PI_MAX_TESTED}.x); report problems`,
      fix: 'nothing to do if it works; otherwise report it with `factory doctor --json`',
    };
  }
  return { status: 'ok', detail: `pi ${version}, within the tested ${PI_MIN_VERSION} – ${PI_MAX_TESTED}.x` };
}

function piVersionCheck(): DoctorCheck {
  return {
    id: 'pi.version',
    category: 'pi',
    severity: 'required',
    title: `pi binary ${PI_MIN_VERSION} – ${PI_MAX_TESTED}.x (tested)`,
    async run(ctx) {
      const probe = await piVersion(ctx);
      if (!('version' in probe)) return { status: 'fail', detail: probe.error, fix: PI_INSTALL };
      return piVersionVerdict(probe.version);
    },
  };
}

/**
 * Information only. Nothing loads the SDK from node_modules at run time: inside pi, the extensions' imports of
 * @earendil-works/pi-coding-agent are mapped to pi's own copies, so the SDK need not match the pi binary. It
 * serves the type check (`npm run typecheck`) and, as the bundled pi, the fallback when no pi is on PATH.
 */
function sdkCheck(): DoctorCheck {
  return {
    id: 'pi.sdk',
    category: 'pi',
    severity: 'optional',
    title: 'pi SDK in node_modules (types only)',
    async run(ctx) {
      const sdk = sdkManifest(ctx.factoryRoot);
      if (!sdk) return { status: 'skipped', detail: 'not installed; only the type check and the bundled pi use it' };
      const binary = await piVersion(ctx);
      const runs = 'version' in binary ? `; the extensions run on pi ${binary.version}'s own copy` : '';
      return { status: 'ok', detail: `SDK ${sdk.version ?? '(no version)'} for the types${runs}` };
    },
  };
}

/**
 * The node's extensions to look at: every one the node ships (its own list, then any socle name the list lacks),
 * each required — a missing one is a failing row, never a row that disappears.
 */
export function extensionNames(): Array<{ name: string; required: boolean }> {
  return [...NODE_EXTENSIONS, ...SOCLE.filter((n) => !(NODE_EXTENSIONS as readonly string[]).includes(n))].map(
    (name) => ({ name, required: true }),
  );
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
        // factory-obs is where masking is read about: say plainly what the factory does not mask.
        const note =
          name === 'factory-obs'
            ? "; it masks the harness traces, but pi's own session files (adws/adw_data/sessions/<time>_<id>.jsonl) are pi's: not masked"
            : '';
        return { status: 'ok', detail: `.pi/extensions/${name}.ts sha256 ${shortHash(file)}${note}` };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
        return {
          status: required ? 'fail' : 'warn',
          detail: `${file}: ${code === 'ENOENT' ? 'missing' : code}`,
          fix: `git -C ${ctx.factoryRoot} checkout -- .pi/extensions/${name}.ts`,
        };
      }
    },
  };
}

/** Every check that applies to this context, in display order. Cheap: only existence tests run here. */
export function doctorChecks(ctx: DoctorContext): DoctorCheck[] {
  return [
    ...runtimeChecks(),
    gitCheck(),
    piToolCheck(ctx),
    claudeCheck(ctx),
    sqliteCheck(),
    sandboxCheck(),
    harnessCheck(),
    piVersionCheck(),
    sdkCheck(),
    settingsCheck(),
    rulesCheck(),
    ...extensionNames().map(({ name, required }) => extensionCheck(name, required)),
    ...repoChecks(ctx),
    ...modelChecks(ctx),
    ...endpointChecks(ctx),
    batteryCheck(),
  ];
}
