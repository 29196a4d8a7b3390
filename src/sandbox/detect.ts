// Which OS sandbox this machine can run arms in, asked once per process: on Linux, bubblewrap (tried for real — a
// kernel or an AppArmor rule that forbids unprivileged user namespaces makes it fail, and then it is not there);
// on macOS, Seatbelt's sandbox-exec (unproven: designed and unit-tested on Linux). FACTORY_BWRAP names another
// bwrap program (a test names a missing one to stand for a machine without it).
import fs from 'node:fs';
import { firstLine } from '../contract/errors.js';
import type { Sandbox } from './policy.js';

export const BWRAP_ENV = 'FACTORY_BWRAP';
const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

export type SandboxProbe = { ok: true; sandbox: Sandbox } | { ok: false; motif: string; fix: string };

const probes = new Map<string, Promise<SandboxProbe>>();

/** The sandbox arms run in here, or why there is none and what to do (one line each). */
export function detectSandbox(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<SandboxProbe> {
  const program = platform === 'darwin' ? SANDBOX_EXEC : env[BWRAP_ENV]?.trim() || 'bwrap';
  const key = `${platform}:${program}`;
  let probe = probes.get(key);
  if (!probe) {
    probe =
      platform === 'darwin'
        ? seatbelt()
        : platform === 'linux'
          ? bubblewrap(program, env)
          : Promise.resolve(none(platform));
    probes.set(key, probe);
  }
  return probe;
}

/** The sandbox this machine has, or undefined (no line: a caller that needs one says so itself). */
export async function availableSandbox(env: NodeJS.ProcessEnv = process.env): Promise<Sandbox | undefined> {
  const probe = await detectSandbox(env);
  return probe.ok ? probe.sandbox : undefined;
}

function none(platform: string): SandboxProbe {
  return {
    ok: false,
    motif: `no OS sandbox is known for ${platform}`,
    fix: 'run the arms in place (--in-place), or accept them unsandboxed (--unsandboxed)',
  };
}

async function seatbelt(): Promise<SandboxProbe> {
  if (!fs.existsSync(SANDBOX_EXEC))
    return {
      ok: false,
      motif: `${SANDBOX_EXEC} is missing`,
      fix: 'macOS ships it; run --in-place or --unsandboxed meanwhile',
    };
  return {
    ok: true,
    sandbox: { kind: 'seatbelt', program: SANDBOX_EXEC, version: 'Seatbelt (unproven: not yet run on a Mac)' },
  };
}

async function bubblewrap(program: string, env: NodeJS.ProcessEnv): Promise<SandboxProbe> {
  const { runToEnd } = await import('../process/run.js');
  const fix = 'apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora)';
  const version = await runToEnd(program, ['--version'], { env, timeoutMs: 10_000 });
  if (version.spawnError) return { ok: false, motif: `bubblewrap (${program}) is not installed`, fix };
  // What an arm needs of it: a read-only root, a new /proc in a pid namespace of its own.
  const tried = await runToEnd(
    program,
    ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--die-with-parent', '--', 'true'],
    { env, timeoutMs: 10_000 },
  );
  if (tried.code !== 0) {
    const said = firstLine(tried.stderr.toString('utf8').trim()) || `exit ${tried.code ?? tried.signal}`;
    return {
      ok: false,
      motif: `bubblewrap cannot make a sandbox here: ${said}`,
      fix: 'allow unprivileged user namespaces (Ubuntu 24.04: an AppArmor profile for bwrap, or sysctl kernel.apparmor_restrict_unprivileged_userns=0)',
    };
  }
  return {
    ok: true,
    sandbox: { kind: 'bwrap', program, version: version.stdout.toString('utf8').trim() || 'bubblewrap' },
  };
}
