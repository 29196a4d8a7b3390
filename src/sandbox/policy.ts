// What an arm's programs (its pi process, the gates and the setup run for it) may write: the arm's own tree and its
// scratch folder, the sessions folder pi writes its session file in, the harness trace the node writes — and
// nothing else on the machine. Everything else is read-only (the user's repository and its .git, the other arms'
// trees, the factory's data, $HOME), and a process that clears its environment, starts a new session or leaves
// pi's process group is still inside. The policy is plain data (JSON-safe: it can travel to another machine's
// dispatcher); ./bwrap.ts and ./seatbelt.ts turn it into a command line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type SandboxKind = 'bwrap' | 'seatbelt';

export interface SandboxPolicy {
  /** Folders (absolute) the program may write, with all they hold. */
  writable: string[];
  /** Files or folders under a writable one that stay read-only (the ledger, the primer's session file). */
  readOnly: string[];
  /** The folder the program starts in (inside a writable one). */
  cwd: string;
}

/** A sandbox this machine has: which, and the program that makes it. */
export interface Sandbox {
  kind: SandboxKind;
  /** The program (absolute path or a name on PATH). */
  program: string;
  /** What `--version` said, for the doctor's row. */
  version?: string;
}

/** A program run inside the sandbox: the command line to spawn instead of `command args`. */
export interface Wrapped {
  command: string;
  args: string[];
  /** Processes between the one spawned and the program (bwrap and its namespace's init: 2; sandbox-exec execs: 0). */
  wrappers: number;
}

/** The environment a sandboxed program gets besides the caller's: its temp folder is its scratch. */
export function sandboxEnv(env: NodeJS.ProcessEnv, scratch: string): NodeJS.ProcessEnv {
  return { ...env, TMPDIR: scratch, TMP: scratch, TEMP: scratch };
}

/** What pi loads code or configuration from in its agent folder: read-only inside, where it exists. */
const PI_LOADS = [
  'extensions',
  'settings.json',
  'models.json',
  'keybindings.json',
  'prompts',
  'skills',
  'themes',
  'agents',
  'AGENTS.md',
  'SYSTEM.md',
  'APPEND_SYSTEM.md',
  'packages',
  'npm',
  'git',
];

/**
 * pi's own folder (PI_CODING_AGENT_DIR, else ~/.pi/agent): pi takes a lock beside its credentials there (and may
 * refresh them), so the folder is writable, but what pi loads code or settings from stays read-only — an arm cannot
 * plant an extension the user's next pi would load. (A new file in a folder that does not exist yet is the gap.)
 */
export function piAgentDir(env: NodeJS.ProcessEnv): { writable: string[]; readOnly: string[] } {
  const chosen = env.PI_CODING_AGENT_DIR?.trim();
  const dir = path.resolve(chosen || path.join(env.HOME ?? os.homedir(), '.pi', 'agent'));
  // pi makes its default folder on first use, so it is made here (a bind needs it); a folder someone named is never
  // made: one that is gone (a demo's, after its end) stays gone, and pi inside gets no writable agent folder.
  if (!chosen) fs.mkdirSync(dir, { recursive: true });
  if (!fs.existsSync(dir)) return { writable: [], readOnly: [] };
  return { writable: [dir], readOnly: PI_LOADS.map((name) => path.join(dir, name)).filter((p) => fs.existsSync(p)) };
}
