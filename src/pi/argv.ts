// The one pi flag builder, shared by json mode (one process per attempt) and RPC mode (best-of-N).
// Secrets never travel here: keys go by environment only.
import { REPORT_TOOL } from '../contract/typedGate.js';

export interface PiFlags {
  sessionId: string;
  /** Absolute: pi resolves a relative session dir against its own cwd. */
  sessionDir: string;
  model?: string;
  thinking?: string;
  /** Roster tools; the typed gate is appended (it must always be callable). */
  tools?: string[];
  /**
   * `--no-mcp`: the user's MCP servers (~/.pi/agent/mcp.json, and .pi/mcp.json since --approve grants trust) stay
   * out of a factory node. Only for a pi known to take it (≥ 0.99.0, see piVersion.ts): 0.85 refuses the flag.
   */
  noMcp?: boolean;
  /**
   * `--fork <session file>`: start as a copy of that session (a best-of-N arm of its primer), written under
   * `sessionId` in `sessionDir` with this process's cwd in its header. Absolute, like the session dir.
   */
  fork?: string;
  /**
   * `-e <file>` each: the node's extensions when the project does not load them itself (see node.ts,
   * nodeExtensionFiles). Absolute, so pi's cwd does not matter.
   */
  extensions?: string[];
}

function commonFlags(flags: PiFlags): string[] {
  if (!flags.sessionDir.startsWith('/')) throw new Error(`session dir must be absolute: ${flags.sessionDir}`);
  const argv = [
    '--approve',
    '--session-id',
    flags.sessionId,
    '--session-dir',
    flags.sessionDir,
    '--no-skills',
    '--no-prompt-templates',
  ];
  if (flags.fork !== undefined) {
    if (!flags.fork.startsWith('/')) throw new Error(`fork source must be an absolute session file: ${flags.fork}`);
    argv.push('--fork', flags.fork);
  }
  for (const file of flags.extensions ?? []) {
    if (!file.startsWith('/')) throw new Error(`extension must be an absolute path: ${file}`);
    argv.push('-e', file);
  }
  if (flags.noMcp) argv.push('--no-mcp');
  if (flags.model) argv.push('--model', flags.model);
  if (flags.thinking) argv.push('--thinking', flags.thinking);
  if (flags.tools && flags.tools.length > 0) {
    const tools = [...new Set([...flags.tools.filter((t) => t !== REPORT_TOOL), REPORT_TOOL])];
    argv.push('--tools', tools.join(','));
  }
  return argv;
}

/** `pi -p --mode json <flags> --`: the prompt goes on stdin, never in argv. */
export function jsonModeArgs(flags: PiFlags): string[] {
  return ['-p', '--mode', 'json', ...commonFlags(flags), '--'];
}

/** `pi --mode rpc <flags>`: same flags, no `-p`, no `--`. */
export function rpcModeArgs(flags: PiFlags): string[] {
  return ['--mode', 'rpc', ...commonFlags(flags)];
}
