// The commands that write files by naming them as arguments (not by redirection): where each one writes,
// read from its own options, and checked like a redirection target (bash-checks.ts checkWrite).
import { statSync } from 'node:fs';
import path from 'node:path';
import {
  checkDelete,
  checkWrite,
  deny,
  hasFlag,
  knownWord,
  parseArgs,
  placeOf,
  show,
  tailWord,
  valuesOf,
  type Scan,
} from './bash-checks.js';
import { realTarget } from './path-guard.js';
import type { Word } from './shell-words.js';

/** The options that take a value, per command (GNU coreutils). */
const COPY_VALUES: Record<string, string> = { cp: 'tS', mv: 'tS', ln: 'tS', install: 'tSmog' };
const COPY_VERBS: Record<string, string> = {
  cp: 'cp copies into',
  mv: 'mv moves into',
  ln: 'ln makes a link at',
  install: 'install copies into',
};

function isFolder(word: Word, cwd: string | null): boolean {
  if (!word.known) return false;
  if (/(^|\/)\.{1,2}$|\/$/.test(word.text)) return true; // `.`, `..`, `dir/`: a folder by its spelling
  if (cwd === null && !path.isAbsolute(word.text)) return false;
  try {
    return statSync(realTarget(word.text, cwd ?? '/')).isDirectory();
  } catch {
    return false;
  }
}

/** cp, mv, install, ln: the destination is written; mv also takes its sources away; ln must not point outside. */
export function copyLike(scan: Scan, name: string, args: Word[], cwd: string | null): void {
  const parsed = parseArgs(args.slice(1), COPY_VALUES[name] ?? '', ['target-directory', 'suffix']);
  const verb = COPY_VERBS[name] ?? `${name} writes to`;
  if (name === 'install' && hasFlag(parsed, 'd', 'directory')) {
    for (const folder of parsed.operands) checkWrite(scan, folder, cwd, 'install -d creates');
    return;
  }
  const targetDir = valuesOf(parsed, 't', 'target-directory')[0];
  let dest: Word;
  let sources: Word[];
  if (targetDir) [dest, sources] = [targetDir, parsed.operands];
  else if (parsed.operands.length >= 2)
    [dest, sources] = [parsed.operands[parsed.operands.length - 1], parsed.operands.slice(0, -1)];
  else if (name === 'ln' && parsed.operands.length === 1) [dest, sources] = [knownWord('.'), parsed.operands];
  else return;
  checkWrite(scan, dest, cwd, verb);
  // Into an existing folder each source keeps its name: `cp ../x/.env .` writes ./.env.
  if (isFolder(dest, cwd) && !hasFlag(parsed, 'T', 'no-target-directory')) {
    for (const source of sources)
      if (source.known) checkWrite(scan, knownWord(path.join(dest.text, path.basename(source.text))), cwd, verb);
  }
  if (name === 'mv')
    for (const source of sources) checkDelete(scan, source, cwd, 'mv', { recursive: false, move: true });
  if (name === 'ln') linkSources(scan, sources, dest, cwd, hasFlag(parsed, 's', 'symbolic'));
}

/** A link inside the project must not lead outside it: a later write through it would land there. */
function linkSources(scan: Scan, sources: Word[], dest: Word, cwd: string | null, symbolic: boolean): void {
  const linkFolder = symbolic ? (isFolder(dest, cwd) ? dest.text : path.dirname(dest.text)) : '.';
  const base = cwd === null ? null : path.resolve(cwd, linkFolder);
  for (const source of sources) {
    const place = placeOf(source, base, scan.guard);
    if (place?.kind !== 'outside') continue;
    const what = symbolic
      ? `ln -s makes ${show(dest.text)} point at ${show(source.text)}`
      : `ln links ${show(source.text)} into the project`;
    deny(scan, 'link-outside', `${what}, outside the project`);
  }
}

/** Short options that take a value, for the commands that write (or create) every file they name. */
const NAMED_WRITES: Record<string, string> = { tee: '', sponge: '', touch: 'drt', mkdir: 'm' };

export function writesNamed(name: string): boolean {
  return name in NAMED_WRITES;
}

/** tee, sponge, touch, mkdir: every operand is written or created. */
export function namedWrites(scan: Scan, name: string, args: Word[], cwd: string | null): void {
  for (const file of parseArgs(args.slice(1), NAMED_WRITES[name] ?? '').operands)
    checkWrite(scan, file, cwd, `${name} writes to`);
}

/** rsync writes its last operand (a local one) and, with --delete…, deletes in it; tar -x and unzip -d unpack into a folder. */
export function unpackOrSync(scan: Scan, name: string, args: Word[], cwd: string | null): void {
  if (name === 'rsync') {
    const parsed = parseArgs(args.slice(1), 'efTB');
    const dest = parsed.operands.length >= 2 ? parsed.operands[parsed.operands.length - 1] : undefined;
    if (!dest || /^[^/]*:/.test(dest.text)) return; // host:path is another machine's
    checkWrite(scan, dest, cwd, 'rsync writes to');
    if ([...parsed.flags].some((f) => f.startsWith('delete') || f === 'remove-source-files'))
      checkDelete(scan, dest, cwd, 'rsync --delete', { recursive: true });
  } else if (name === 'tar') {
    const parsed = parseArgs(args.slice(1), 'fCbFgKLNTVXH', ['directory', 'file']);
    // `tar xzf a.tgz` (no dash): the letters are the options and the archive is the next word.
    const oldStyle = /^[a-zA-Z]+$/.test(args[1]?.text ?? '') ? args[1].text : '';
    if (hasFlag(parsed, 'x', 'extract', 'get') || oldStyle.includes('x')) {
      for (const dir of valuesOf(parsed, 'C', 'directory')) checkWrite(scan, dir, cwd, 'tar -x extracts into');
    }
    if (hasFlag(parsed, 'c', 'create', 'r', 'append', 'u', 'update') || /[cru]/.test(oldStyle)) {
      const archives = oldStyle.includes('f') && args[2] ? [args[2]] : valuesOf(parsed, 'f', 'file');
      for (const archive of archives)
        if (!(archive.known && archive.text === '-')) checkWrite(scan, archive, cwd, 'tar writes the archive');
    }
  } else if (name === 'unzip') {
    const at = args.findIndex((w) => w.text === '-d');
    if (at > 0 && args[at + 1]) checkWrite(scan, args[at + 1], cwd, 'unzip -d extracts into');
  }
}

/** dd writes its `of=` file (a disk, when it names one). */
export function ddCommand(scan: Scan, args: Word[], cwd: string | null): void {
  for (const word of args.slice(1))
    if (word.text.startsWith('of=')) checkWrite(scan, tailWord(word, 3), cwd, 'dd writes to');
}

/** curl and wget write the files their output options name ("-" is the standard output). */
export function downloadCommand(scan: Scan, name: string, args: Word[], cwd: string | null): void {
  const curl = name === 'curl';
  const parsed = curl
    ? parseArgs(args.slice(1), 'ADbcCdeEFHKmoPQrTtuUwxXyYz', [
        'output',
        'dump-header',
        'cookie-jar',
        'trace',
        'trace-ascii',
        'stderr',
      ])
    : parseArgs(args.slice(1), 'OoaPeiBtTwQUlARDIXY', [
        'output-document',
        'output-file',
        'append-output',
        'directory-prefix',
      ]);
  const files = curl
    ? valuesOf(parsed, 'o', 'output', 'D', 'dump-header', 'c', 'cookie-jar', 'trace', 'trace-ascii', 'stderr')
    : valuesOf(parsed, 'O', 'output-document', 'o', 'output-file', 'a', 'append-output', 'P', 'directory-prefix');
  for (const file of files) if (!(file.known && file.text === '-')) checkWrite(scan, file, cwd, `${name} writes to`);
}

/** sed -i rewrites the files it reads (the first operand is the script unless -e or -f gave one). */
export function sedCommand(scan: Scan, args: Word[], cwd: string | null): void {
  const parsed = parseArgs(args.slice(1), 'efl', ['expression', 'file', 'line-length']);
  if (!hasFlag(parsed, 'i', 'in-place')) return;
  const scripted = valuesOf(parsed, 'e', 'expression', 'f', 'file').length > 0;
  const operands = parsed.operands.filter((w) => !(w.known && w.text === '')); // BSD sed's `-i ''`: an empty suffix
  for (const file of scripted ? operands : operands.slice(1)) checkWrite(scan, file, cwd, 'sed -i edits');
}

/** chmod, chown, chgrp change the files they name (a chmod mode may look like an option: `-x`). */
export function modeChange(scan: Scan, name: string, args: Word[], cwd: string | null): void {
  const operands: Word[] = [];
  let reference = false;
  let recursive = false;
  let ended = false;
  const rest = args.slice(1);
  for (let i = 0; i < rest.length; i += 1) {
    const text = rest[i].text;
    if (!ended && text === '--') ended = true;
    else if (!ended && text.startsWith('--')) {
      if (text.startsWith('--reference')) reference = true;
      if (text === '--reference' || text === '--from') i += 1;
      if (text.length > 2 && 'recursive'.startsWith(text.slice(2))) recursive = true;
    } else if (!ended && /^-[RcfvhHLP]+$/.test(text)) recursive ||= text.includes('R');
    else operands.push(rest[i]);
  }
  const act = `${name}${recursive ? ' -R' : ''} changes`;
  for (const file of reference ? operands : operands.slice(1)) checkWrite(scan, file, cwd, act);
}
