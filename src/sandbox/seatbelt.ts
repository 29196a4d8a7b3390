// The policy (./policy.ts) as a macOS Seatbelt profile, the counterpart of ./bwrap.ts: run as
// `/usr/bin/sandbox-exec -p <profile> -- command args` (the full path: PATH is the caller's). Everything is allowed
// but writing: every write anywhere is denied, then each writable folder is allowed again, then the device files
// ordinary programs write (the null device, the terminal, the pseudo-terminals a shell opens), then each read-only
// exception is denied again — in SBPL the last rule that matches wins, so the order of the rules is the policy.
// `--` ends sandbox-exec's own options, so a command named like a flag stays a command (OpenAI codex passes it too).
// macOS reaches /tmp, /var and /etc through symlinks into /private, and Seatbelt judges the resolved path: a folder
// named by its short form gets its /private twin too (the per-user TMPDIR, /var/folders/…, is one of them), and so
// does a read-only exception, or the twin's allow would win over it.
// sandbox-exec has no --chdir: the caller spawns it with the policy's cwd as its working folder.
// Unproven until run on a Mac: these machines are Linux, so only the text of the profile is tested here.
// Weaker than bwrap in one way: macOS has no pid namespace, so a job that detaches (setsid, a double fork) can
// outlive the arm's program — the Seatbelt profile still follows it, but the process sweep has to reach it.
// The network is not cut, as with bwrap: the model route and the run's spend gate are on it.
import type { SandboxPolicy, Wrapped } from './policy.js';

/** Device files a program writes in the course of things; the regexes cover /dev/fd/N and the ptys /dev/ttysNNN. */
const DEVICE_LITERALS = ['/dev/null', '/dev/zero', '/dev/tty', '/dev/dtracehelper', '/dev/ptmx'];
const DEVICE_REGEXES = ['^/dev/fd/', '^/dev/ttys[0-9]+'];

/** The top-level folders macOS links into /private. */
const PRIVATE_LINKED = ['/var', '/tmp', '/etc'];

/** A path as it may stand in the profile: absolute, one line, no NUL; trailing slashes dropped (but "/" kept). */
function checkedPath(p: string, what: string): string {
  if (typeof p !== 'string' || !p.startsWith('/'))
    throw new Error(`seatbelt: ${what} path is not absolute: ${JSON.stringify(p)}`);
  if (/[\n\r\0]/.test(p)) throw new Error(`seatbelt: ${what} path holds a newline or NUL: ${JSON.stringify(p)}`);
  const trimmed = p.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/** An SBPL string literal: backslash and double quote escaped, the rest as it is. */
function sbplString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The path and, when it lies under /var, /tmp or /etc, its /private twin. */
function withPrivateTwin(p: string): string[] {
  const linked = PRIVATE_LINKED.some((top) => p === top || p.startsWith(`${top}/`));
  return linked ? [p, `/private${p}`] : [p];
}

export function seatbeltProfile(policy: SandboxPolicy): string {
  const writable = policy.writable.map((p) => checkedPath(p, 'writable'));
  const readOnly = policy.readOnly.map((p) => checkedPath(p, 'read-only'));
  const lines = [
    '(version 1)',
    '(allow default)',
    '; no writes anywhere ...',
    '(deny file-write* (subpath "/"))',
    "; ... but in the arm's own folders",
  ];
  for (const dir of writable)
    for (const p of withPrivateTwin(dir)) lines.push(`(allow file-write* (subpath ${sbplString(p)}))`);
  lines.push('; the devices programs write');
  for (const dev of DEVICE_LITERALS) lines.push(`(allow file-write* (literal ${sbplString(dev)}))`);
  for (const re of DEVICE_REGEXES) lines.push(`(allow file-write* (regex #"${re}"))`);
  lines.push('; the read-only exceptions last, so that they win');
  for (const file of readOnly) {
    for (const p of withPrivateTwin(file))
      lines.push(`(deny file-write* (literal ${sbplString(p)}) (subpath ${sbplString(p)}))`);
  }
  return `${lines.join('\n')}\n`;
}

export function wrapSeatbelt(
  program: string,
  policy: SandboxPolicy,
  command: string,
  args: readonly string[],
): Wrapped {
  return { command: program, args: ['-p', seatbeltProfile(policy), '--', command, ...args], wrappers: 0 };
}
