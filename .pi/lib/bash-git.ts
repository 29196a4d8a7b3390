// git through bash: ordinary work (status, diff, add, commit…) passes; refused are the spellings that let an
// agent plant code git runs later or elsewhere (hooks, filters, aliases, pagers… set with `git config` or
// `git -c`), config written outside the project, and `git clean -x`, which also deletes ignored files.
import path from 'node:path';
import { checkWrite, deny, hasFlag, parseArgs, show, valuesOf, type Scan } from './bash-checks.js';
import type { Word } from './shell-words.js';

/** Config keys whose value git runs as a command or a hook, or that make git load more config. */
const EXEC_KEY =
  /^(core\.(hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|sequence\.editor|diff\.external|gpg\.(.+\.)?program|credential\.(.+\.)?helper|include\.path|includeif\..+|filter\..+|alias\..+|pager\..+|(diff|merge)\..+\.(textconv|command|driver)|remote\..+\.(uploadpack|receivepack|vcs)|uploadpack\.packobjectshook)$/i;

export function runsCode(key: string): boolean {
  return EXEC_KEY.test(key.trim());
}

/** git's own options before the subcommand that take the next word. */
const GLOBAL_VALUES = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--exec-path',
  '--super-prefix',
  '--config-env',
  '--attr-source',
]);

const CONFIG_SUBCOMMANDS = new Set([
  'get',
  'list',
  'set',
  'unset',
  'rename-section',
  'remove-section',
  'edit',
  'get-color',
  'get-colorbool',
]);
const CONFIG_READS = ['get', 'get-all', 'get-regexp', 'get-urlmatch', 'list', 'l', 'get-color', 'get-colorbool'];
const CONFIG_WRITES = ['add', 'replace-all', 'unset', 'unset-all', 'rename-section', 'remove-section', 'edit', 'e'];

export function gitCommand(scan: Scan, args: Word[], cwd: string | null): void {
  let gitCwd = cwd;
  let i = 1;
  for (; i < args.length; i += 1) {
    const text = args[i].text;
    const inline = /^--config-env=([^=]+)=/.exec(text);
    if (text === '-c' || text === '--config-env' || inline) {
      const pair = inline ? inline[1] : (args[i + 1]?.text ?? '');
      const key = pair.split('=')[0];
      if (runsCode(key))
        deny(scan, 'git-config-exec', `git -c ${show(key)} makes git run a command of the agent's choosing`);
      if (!inline) i += 1;
    } else if (text === '-C') {
      const dir = args[i + 1];
      gitCwd =
        dir?.known && (gitCwd !== null || path.isAbsolute(dir.text)) ? path.resolve(gitCwd ?? '/', dir.text) : null;
      i += 1;
    } else if (GLOBAL_VALUES.has(text)) i += 1;
    else if (!text.startsWith('-')) break;
  }
  const sub = args[i]?.text;
  const rest = args.slice(i + 1);
  if (sub === 'clean') cleanCommand(scan, rest);
  else if (sub === 'config') configCommand(scan, rest, gitCwd);
}

function cleanCommand(scan: Scan, rest: Word[]): void {
  const parsed = parseArgs(rest, 'e', ['exclude']);
  if (hasFlag(parsed, 'x', 'X') && !hasFlag(parsed, 'n', 'dry-run')) {
    deny(
      scan,
      'git-clean-ignored',
      'git clean -x/-X also deletes ignored files (.env, node_modules, caches), which git cannot bring back',
    );
  }
}

function configCommand(scan: Scan, rest: Word[], cwd: string | null): void {
  const parsed = parseArgs(rest, 'f', ['file', 'blob', 'type', 'default', 'comment', 'value', 'url']);
  const positional = parsed.operands;
  const sub = positional[0] && CONFIG_SUBCOMMANDS.has(positional[0].text) ? positional[0].text : null;
  const removing =
    sub === 'unset' || sub === 'remove-section' || hasFlag(parsed, 'unset', 'unset-all', 'remove-section');
  const writing = sub
    ? ['set', 'unset', 'rename-section', 'remove-section', 'edit'].includes(sub)
    : CONFIG_WRITES.some((flag) => hasFlag(parsed, flag)) ||
      (!CONFIG_READS.some((flag) => hasFlag(parsed, flag)) && positional.length >= 2);
  if (!writing) return;
  const key = (sub ? positional[1] : positional[0])?.text ?? '';
  if (hasFlag(parsed, 'global', 'system')) {
    deny(scan, 'git-config-outside', `git config --global/--system writes ${show(key)} outside the project`);
    return;
  }
  for (const file of valuesOf(parsed, 'f', 'file')) checkWrite(scan, file, cwd, 'git config --file writes to');
  if (!removing && runsCode(key))
    deny(scan, 'git-config-exec', `git config ${show(key)} makes git run a command of the agent's choosing`);
}
