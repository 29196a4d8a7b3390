// The policy (./policy.ts) as a bubblewrap command line (Linux). The whole file system is bound read-only, then
// each writable folder is bound over itself read-write, then each read-only exception over itself again (later
// binds win). A new /dev (no host devices but the usual ones) and a new /proc in a pid namespace of its own: when
// the program ends, the kernel ends every process left in that namespace — a job that called setsid, cleared its
// environment or was started with `env -i` included — so nothing an arm starts outlives it. No --new-session: the
// factory already starts every program in a session of its own without a terminal, and the process-group kill
// ladder must still reach the program (bwrap's own setsid would move it out of that group). The network is not
// cut: the model route and the run's spend gate are on it (bubblewrap cannot filter by host).
import type { SandboxPolicy, Wrapped } from './policy.js';

export function bwrapArgs(policy: SandboxPolicy): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/dev/shm', '--unshare-pid'];
  for (const dir of policy.writable) args.push('--bind', dir, dir);
  for (const file of policy.readOnly) args.push('--ro-bind-try', file, file);
  args.push('--chdir', policy.cwd);
  return args;
}

export function wrapBwrap(program: string, policy: SandboxPolicy, command: string, args: readonly string[]): Wrapped {
  return { command: program, args: [...bwrapArgs(policy), '--', command, ...args], wrappers: 2 };
}
