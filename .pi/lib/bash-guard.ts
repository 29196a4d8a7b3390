// damage-control's floor for bash: rules by intent that hold whatever the rules file says. The command line
// is read by shell-words.ts; each simple command is unwrapped (sudo, env, xargs, command, \rm, /bin/rm…),
// its redirections and the files it names are placed (path-guard.ts), and these intents are judged:
// - writes (redirections, tee, touch, mkdir, cp/mv/ln/install, dd of=, curl -o, sed -i, chmod, rsync,
//   tar -C, unzip -d…) outside the project, to a protected path or outside the writable folders are
//   refused; the OS temp folder and /dev/null are fine (scratch files of tools, discarded output);
// - deletions (rm in any option order, rmdir, unlink, shred, truncate, find -delete/-exec rm, mv's sources)
//   aimed at /, ~, $HOME, .., the whole project, a protected path or outside the project are refused;
//   inside the project a recursive rm, a find that deletes, shred and truncate are a question (ask);
// - disk formatting, `git clean -x`, git config that plants a command, links leading outside: refused.
// Command lines nested in $(...), backquotes, `bash -c`, `eval`, here-documents fed to a shell and
// `find -exec` are judged the same way. A script file the agent runs is not read: this is a floor against
// destructive spellings, not a sandbox.
import path from 'node:path';
import { ask, checkDelete, checkWrite, deny, knownWord, parseArgs, type Finding, type Scan } from './bash-checks.js';
import { gitCommand } from './bash-git.js';
import {
  copyLike,
  ddCommand,
  downloadCommand,
  modeChange,
  namedWrites,
  sedCommand,
  unpackOrSync,
  writesNamed,
} from './bash-writers.js';
import type { Guard } from './path-guard.js';
import { isAssignment, parseShell, type Redirect, type SimpleCommand, type Word } from './shell-words.js';

export type { Finding } from './bash-checks.js';

const MAX_DEPTH = 8;
const RESERVED = new Set([
  '!',
  '{',
  '}',
  'then',
  'do',
  'else',
  'elif',
  'if',
  'while',
  'until',
  'fi',
  'done',
  'esac',
  'coproc',
]);
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh']);
const DELETERS = new Set(['rm', 'rmdir', 'unlink', 'shred', 'truncate']);
const DISK_TOOLS = /^(mkfs(\..+)?|mke2fs|mkswap|mkntfs|mkdosfs|wipefs)$/;
const WRITE_OPS = new Set(['>', '>>', '>|', '&>', '&>>', '<>']);
/** Long options of the wrappers below that take the next word. */
const WRAPPER_LONG_VALUES = new Set([
  '--user',
  '--group',
  '--chdir',
  '--prompt',
  '--host',
  '--role',
  '--type',
  '--other-user',
  '--signal',
  '--kill-after',
  '--unset',
  '--max-args',
  '--max-lines',
  '--max-procs',
  '--delimiter',
  '--arg-file',
  '--replace',
  '--eof',
  '--max-chars',
  '--adjustment',
  '--class',
  '--classdata',
  '--input',
  '--output',
  '--error',
]);
/** Commands that run the command after their own options, each with its short options that take a value. */
const WRAPPERS: Record<string, string> = {
  sudo: 'ugpChDrtUTR',
  doas: 'uC',
  command: '',
  builtin: '',
  nohup: '',
  unbuffer: '',
  fakeroot: '',
  exec: 'a',
  time: 'of',
  nice: 'n',
  ionice: 'cnpP',
  stdbuf: 'ioe',
  timeout: 'sk',
  xargs: 'nLPsdEIa',
};

/** Every finding of the floor for one bash command line, in the order met. */
export function bashFindings(command: string, guard: Guard): Finding[] {
  const scan: Scan = { guard, findings: [] };
  analyse(scan, command, guard.root, 0);
  return scan.findings;
}

function analyse(scan: Scan, line: string, cwd: string | null, depth: number): void {
  if (depth > MAX_DEPTH) {
    deny(scan, 'too-nested', 'the command nests shells or substitutions too deeply to be checked');
    return;
  }
  let here = cwd;
  for (const command of parseShell(line, scan.guard.home)) {
    for (const nested of command.nested) analyse(scan, nested, here, depth + 1);
    for (const redirect of command.redirects) checkRedirect(scan, redirect, here);
    here = run(scan, command.words, command, here, depth);
  }
}

function checkRedirect(scan: Scan, redirect: Redirect, cwd: string | null): void {
  const duplicate = redirect.op === '>&' && redirect.target.known && /^(\d+|-)$/.test(redirect.target.text);
  if (WRITE_OPS.has(redirect.op) || (redirect.op === '>&' && !duplicate))
    checkWrite(scan, redirect.target, cwd, `the redirection ${redirect.op} writes to`);
}

/** The index of the first word after the options of a wrapper (`values`: its short options with a value). */
function skipOptions(args: Word[], from: number, values: string): number {
  for (let i = from; i < args.length; i += 1) {
    const text = args[i].text;
    if (text === '--') return i + 1;
    if (!text.startsWith('-') || text === '-') return i;
    if (text.startsWith('--')) {
      if (!text.includes('=') && WRAPPER_LONG_VALUES.has(text)) i += 1;
      continue;
    }
    for (let k = 1; k < text.length; k += 1) {
      if (!values.includes(text[k])) continue;
      if (k === text.length - 1) i += 1;
      break;
    }
  }
  return args.length;
}

/** A wrapper's inner command and the folder it runs in; null when it runs nothing; undefined: not a wrapper. */
function unwrap(
  name: string,
  args: Word[],
  cwd: string | null,
  home: string,
): { args: Word[]; cwd: string | null } | null | undefined {
  if (name === 'env') return unwrapEnv(args, cwd, home);
  const values = WRAPPERS[name];
  if (values === undefined) return undefined;
  if (name === 'command' && /^-[a-zA-Z]*[vV]/.test(args[1]?.text ?? '')) return null; // a lookup, nothing runs
  let at = skipOptions(args, 1, values);
  if (name === 'timeout') at += 1; // the duration
  return { args: args.slice(at), cwd };
}

function unwrapEnv(args: Word[], cwd: string | null, home: string): { args: Word[]; cwd: string | null } {
  let here = cwd;
  for (let i = 1; i < args.length; i += 1) {
    const text = args[i].text;
    if (text === '--') return { args: args.slice(i + 1), cwd: here };
    const short = /^-[iv0]*S(.*)$/.exec(text);
    if (short || text === '--split-string' || text.startsWith('--split-string=')) {
      // -S splits its string into the command and its arguments: read it as a command line.
      const inline = text.startsWith('--split-string=') ? text.slice(15) : short?.[1] || undefined;
      const split = inline ?? args[i + 1]?.text ?? '';
      const words = parseShell(split, home).flatMap((c) => c.words);
      return { args: [...words, ...args.slice(inline === undefined ? i + 2 : i + 1)], cwd: here };
    }
    if (text === '-C' || text === '--chdir') {
      const dir = args[i + 1];
      here = dir?.known && (here !== null || path.isAbsolute(dir.text)) ? path.resolve(here ?? '/', dir.text) : null;
      i += 1;
    } else if (text === '-u' || text === '--unset') i += 1;
    else if (!text.startsWith('-') && !isAssignment(args[i])) return { args: args.slice(i), cwd: here };
  }
  return { args: [], cwd: here };
}

/** Judges one simple command; returns the folder later commands of the line run in (a `cd` changes it). */
function run(scan: Scan, words: Word[], command: SimpleCommand, cwd: string | null, depth: number): string | null {
  let args = words;
  let here = cwd;
  for (let round = 0; round < 16; round += 1) {
    let skip = 0;
    while (skip < args.length && (isAssignment(args[skip]) || (args[skip].known && RESERVED.has(args[skip].text))))
      skip += 1;
    args = args.slice(skip);
    const head = args[0];
    if (!head?.known) return cwd; // nothing, or `$CMD …`: what runs cannot be read
    const name = path.basename(head.text);
    if (name === 'cd' || name === 'pushd') return changeDir(args, cwd, scan.guard);
    if (name === 'popd') return null;
    const inner = unwrap(name, args, here, scan.guard.home);
    if (inner === null) return cwd;
    if (inner === undefined) {
      judge(scan, name, args, command, here, depth);
      return cwd;
    }
    args = inner.args;
    here = inner.cwd;
  }
  return cwd;
}

function changeDir(args: Word[], cwd: string | null, guard: Guard): string | null {
  const target = args.slice(1).find((w) => !(w.known && /^-[LPe@]+$/.test(w.text)));
  if (!target) return guard.home;
  if (!target.known || target.text === '-') return null;
  if (path.isAbsolute(target.text)) return path.resolve(target.text);
  return cwd === null ? null : path.resolve(cwd, target.text);
}

function judge(
  scan: Scan,
  name: string,
  args: Word[],
  command: SimpleCommand,
  cwd: string | null,
  depth: number,
): void {
  if (name === 'rm') rmCommand(scan, args, cwd);
  else if (name === 'rmdir' || name === 'unlink') {
    for (const target of parseArgs(args.slice(1)).operands) checkDelete(scan, target, cwd, name, { recursive: false });
  } else if (name === 'shred') {
    for (const target of parseArgs(args.slice(1), 'ns', ['iterations', 'size', 'random-source']).operands)
      checkDelete(scan, target, cwd, 'shred', { recursive: false, askIntent: 'shred' });
  } else if (name === 'truncate') {
    for (const target of parseArgs(args.slice(1), 'sr', ['size', 'reference']).operands)
      checkDelete(scan, target, cwd, 'truncate', { recursive: false, askIntent: 'truncate' });
  } else if (name === 'find') findCommand(scan, args, cwd, depth);
  else if (DISK_TOOLS.test(name)) deny(scan, 'disk-format', `${name} formats or wipes a disk`);
  else if (name === 'dd') ddCommand(scan, args, cwd);
  else if (name === 'cp' || name === 'mv' || name === 'install' || name === 'ln') copyLike(scan, name, args, cwd);
  else if (writesNamed(name)) namedWrites(scan, name, args, cwd);
  else if (name === 'rsync' || name === 'tar' || name === 'unzip') unpackOrSync(scan, name, args, cwd);
  else if (name === 'curl' || name === 'wget') downloadCommand(scan, name, args, cwd);
  else if (name === 'sed') sedCommand(scan, args, cwd);
  else if (name === 'chmod' || name === 'chown' || name === 'chgrp') modeChange(scan, name, args, cwd);
  else if (name === 'git') gitCommand(scan, args, cwd);
  else if (name === 'eval')
    analyse(
      scan,
      args
        .slice(1)
        .map((w) => w.text)
        .join(' '),
      cwd,
      depth + 1,
    );
  else if (SHELLS.has(name)) shellCommand(scan, args, command, cwd, depth);
}

/** rm: options anywhere before `--` (GNU permutes), -r/-R/--recursive in any cluster or abbreviation. */
function rmCommand(scan: Scan, args: Word[], cwd: string | null): void {
  let recursive = false;
  let ended = false;
  const targets: Word[] = [];
  for (const word of args.slice(1)) {
    const text = word.text;
    const option = !ended && text.startsWith('-') && text.length > 1 && word.prefix.startsWith('-');
    if (option && text === '--') ended = true;
    else if (option && text.startsWith('--')) {
      const long = text.slice(2);
      if ('recursive'.startsWith(long)) recursive = true;
      if ('no-preserve-root'.startsWith(long))
        deny(scan, 'rm-no-preserve-root', 'rm --no-preserve-root lifts the protection of /');
    } else if (option) recursive ||= /[rR]/.test(text.slice(1));
    else targets.push(word);
  }
  const act = recursive ? 'rm -r' : 'rm';
  for (const target of targets) checkDelete(scan, target, cwd, act, { recursive });
  if (targets.length === 0 && recursive)
    ask(scan, 'delete-recursive', 'rm -r deletes trees named on its input, which the guard cannot read');
}

/** find: deleting (-delete, -exec rm…) from its start folders; the -exec command is judged as well. */
function findCommand(scan: Scan, args: Word[], cwd: string | null, depth: number): void {
  let i = 1;
  while (i < args.length && (/^-(H|L|P|O\d*)$/.test(args[i].text) || args[i].text === '-D'))
    i += args[i].text === '-D' ? 2 : 1;
  const starts: Word[] = [];
  for (; i < args.length; i += 1) {
    const text = args[i].text;
    if ((text.startsWith('-') && args[i].prefix.startsWith('-')) || text === '(' || text === '!' || text === ',') break;
    starts.push(args[i]);
  }
  let deleting: string | null = null;
  for (; i < args.length; i += 1) {
    const text = args[i].text;
    if (text === '-delete') deleting = 'find -delete';
    else if (['-exec', '-execdir', '-ok', '-okdir'].includes(text)) {
      const inner: Word[] = [];
      for (i += 1; i < args.length && !(args[i].known && (args[i].text === ';' || args[i].text === '+')); i += 1) {
        // `{}` stands for each file found: unknown to the guard.
        inner.push(
          args[i].text.includes('{}') ? { text: args[i].text, prefix: '', known: false, glob: false } : args[i],
        );
      }
      if (inner[0]?.known && DELETERS.has(path.basename(inner[0].text)))
        deleting = `find ${text} ${path.basename(inner[0].text)}`;
      if (inner.length > 0)
        run(scan, inner, { words: inner, redirects: [], nested: [], heredocs: [], after: '' }, cwd, depth + 1);
    } else if (['-fprint', '-fprint0', '-fls', '-fprintf'].includes(text) && args[i + 1]) {
      checkWrite(scan, args[i + 1], cwd, `find ${text} writes to`);
      i += 1;
    }
  }
  if (deleting === null) return;
  for (const start of starts.length > 0 ? starts : [knownWord('.')])
    checkDelete(scan, start, cwd, deleting, { recursive: true, filtered: true });
}

/** A shell given a command line (-c, or a here-document on its input) runs it: judge that line too. */
function shellCommand(scan: Scan, args: Word[], command: SimpleCommand, cwd: string | null, depth: number): void {
  let i = 1;
  let inline = false;
  for (; i < args.length; i += 1) {
    const text = args[i].text;
    if (text === '--' || text === '-') {
      i += 1;
      break;
    }
    if (!/^[-+]./.test(text)) break;
    if (text === '--rcfile' || text === '--init-file' || /^[-+][oO]$/.test(text)) i += 1;
    else if (/^-[a-zA-Z]*c/.test(text)) inline = true;
  }
  if (inline) {
    if (args[i]) analyse(scan, args[i].text, cwd, depth + 1);
  } else if (i >= args.length) {
    for (const body of command.heredocs) analyse(scan, body, cwd, depth + 1);
  }
}
