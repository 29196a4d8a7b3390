// The checks damage-control's bash guard applies to the words it read (shell-words.ts): where a word lands
// (path-guard.ts places), what writing or deleting there means, and a small GNU-style option reader. Every
// finding names its intent, so the refusal tells the model (and the user) which rule spoke.
import path from 'node:path';
import { globInside, isWritable, locate, protectedRuleOf, writableList, type Guard, type Place } from './path-guard.js';
import type { Word } from './shell-words.js';

export interface Finding {
  action: 'deny' | 'ask';
  /** The rule's name, as the refusal shows it. */
  intent: string;
  detail: string;
}

export interface Scan {
  guard: Guard;
  findings: Finding[];
}

export function deny(scan: Scan, intent: string, detail: string): void {
  scan.findings.push({ action: 'deny', intent, detail });
}

export function ask(scan: Scan, intent: string, detail: string): void {
  scan.findings.push({ action: 'ask', intent, detail });
}

/** A word for a message: one line, short. */
export function show(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat || "''";
}

export function knownWord(text: string): Word {
  return { text, prefix: text, known: true, glob: false };
}

/** The word minus its first `n` characters (`of=PATH` → `PATH`), unknown parts kept unknown. */
export function tailWord(word: Word, n: number): Word {
  if (word.known) return knownWord(word.text.slice(n));
  if (word.prefix.length < n) return { text: word.text.slice(n), prefix: '', known: false, glob: false };
  return { text: word.text.slice(n), prefix: word.prefix.slice(n), known: false, glob: word.glob };
}

/** Where the word lands from `cwd` (null: the guard cannot read it, or the folder is unknown after a `cd`). */
export function placeOf(word: Word, cwd: string | null, guard: Guard, follow = true): Place | null {
  let target = word.text;
  let under = false;
  if (!word.known) {
    if (word.prefix === '' && !word.glob) return null;
    const cut = word.prefix.lastIndexOf('/');
    target = cut < 0 ? '' : word.prefix.slice(0, cut + 1);
    under = true;
  } else if (target === '') return null;
  if (cwd === null && !path.isAbsolute(target)) return null;
  return locate(target, cwd ?? guard.root, guard, under, follow);
}

function safePlace(scan: Scan, word: Word, cwd: string | null, act: string, follow = true): Place | null | 'failed' {
  try {
    return placeOf(word, cwd, scan.guard, follow);
  } catch (error) {
    deny(scan, 'unresolvable', `${act} ${show(word.text)}, which cannot be resolved (${(error as Error).message})`);
    return 'failed';
  }
}

/** " (/real/path)" when the word does not say where it lands. */
function really(named: string, real: string): string {
  return named.replace(/(.)\/+$/, '$1') === real ? '' : ` (${real})`;
}

/** A write (a redirection, tee, cp, dd of=…): outside the project, protected or not writable is refused. */
export function checkWrite(scan: Scan, word: Word, cwd: string | null, act: string): void {
  const place = safePlace(scan, word, cwd, act);
  if (place === null || place === 'failed' || place.kind === 'device' || place.kind === 'scratch') return;
  const named = show(word.text);
  if (place.kind === 'outside') {
    const how = place.escape ? ' through a symbolic link' : '';
    deny(scan, 'write-outside', `${act} ${named}${really(named, place.real)}, outside the project${how}`);
    return;
  }
  const glob = protectedRuleOf(place, scan.guard);
  if (glob) deny(scan, 'write-protected', `${act} ${named}, a protected path (rule "${glob}")`);
  else if (!isWritable(place, scan.guard))
    deny(scan, 'not-writable', `${act} ${named}, outside the writable folders (${writableList(scan.guard)})`);
}

export interface DeleteMode {
  /** Takes whole trees (rm -r, find). */
  recursive: boolean;
  /** A find: the start folder is filtered by its expression, so the project root is a question, not a refusal. */
  filtered?: boolean;
  /** A move: the source leaves its place, without being destroyed. */
  move?: boolean;
  /**
   * Destroys contents even inside the project (shred, truncate): a question, named by this intent. These open
   * the file, so a link is followed; rm, mv and find take the link itself.
   */
  askIntent?: string;
}

/** A deletion (rm, find -delete, shred, truncate, mv's sources); `act` names the command ("rm -r"). */
export function checkDelete(scan: Scan, word: Word, cwd: string | null, act: string, mode: DeleteMode): void {
  const place = safePlace(scan, word, cwd, act, mode.askIntent !== undefined);
  if (place === 'failed') return;
  const question = (what: string) => {
    if (mode.askIntent) ask(scan, mode.askIntent, `${act} ${what} destroys its contents`);
    else if (mode.filtered) ask(scan, 'find-delete', `${act} deletes what it finds under ${what}`);
    else if (mode.recursive && !mode.move) ask(scan, 'delete-recursive', `${act} deletes ${what} recursively`);
  };
  const named = show(word.text);
  if (place === null) {
    question(named);
    return;
  }
  if (place.kind === 'device' || place.kind === 'outside') {
    const where =
      place.kind === 'outside' && place.wide
        ? 'a folder that holds the project or the home folder'
        : 'outside the project';
    const real = place.kind === 'outside' ? really(named, place.real) : '';
    deny(scan, 'delete-outside', `${act} aims at ${named}${real}, ${where}`);
    return;
  }
  if (place.kind === 'scratch') {
    if (place.top) deny(scan, 'delete-outside', `${act} aims at ${named}, the temporary folder itself`);
    else question(named);
    return;
  }
  // A glob right at a folder's start (`*`, `./*`) names all of it; `build*` or `$X` only some entries.
  const name = word.known ? null : word.prefix.slice(word.prefix.lastIndexOf('/') + 1);
  const everything = place.under && word.glob && name === '';
  if ((place.top || (everything && place.relatives.includes(''))) && mode.recursive && !mode.filtered) {
    deny(scan, 'delete-project', `${act} aims at ${named}: the whole project`);
    return;
  }
  const trees = (mode.recursive || mode.move) && !mode.filtered && (!place.under || word.glob);
  const held = trees
    ? place.relatives
        .map((r) => globInside(scan.guard.protectedGlobs, r, place.under ? (name ?? '') : undefined))
        .find(Boolean)
    : null;
  const glob = protectedRuleOf(place, scan.guard) ?? held ?? null;
  if (glob)
    deny(scan, 'delete-protected', `${act} aims at ${named}, which is or holds a protected path (rule "${glob}")`);
  else if (!isWritable(place, scan.guard))
    deny(scan, 'not-writable', `${act} aims at ${named}, outside the writable folders (${writableList(scan.guard)})`);
  else question(named);
}

export interface Args {
  /** Short option letters and long option names seen (without dashes). */
  flags: Set<string>;
  /** Values of the options that take one, by letter or long name. */
  values: Map<string, Word[]>;
  operands: Word[];
}

/**
 * GNU-style options, anywhere before `--` (GNU tools permute: `rm / -rf` is recursive). `short` lists the
 * letters that take a value (attached or next word); `long` the long names that take the next word.
 */
export function parseArgs(args: Word[], short = '', long: string[] = []): Args {
  const out: Args = { flags: new Set(), values: new Map(), operands: [] };
  const put = (key: string, value: Word | undefined) => {
    out.flags.add(key);
    if (value) out.values.set(key, [...(out.values.get(key) ?? []), value]);
  };
  for (let i = 0; i < args.length; i += 1) {
    const word = args[i];
    const text = word.text;
    if (text === '--' && word.known) {
      out.operands.push(...args.slice(i + 1));
      break;
    }
    if (!text.startsWith('-') || text === '-' || !word.prefix.startsWith('-')) {
      out.operands.push(word);
    } else if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      if (eq > 0) put(text.slice(2, eq), tailWord(word, eq + 1));
      else if (long.includes(text.slice(2))) put(text.slice(2), args[++i]);
      else put(text.slice(2), undefined);
    } else {
      for (let k = 1; k < text.length; k += 1) {
        const letter = text[k];
        if (!short.includes(letter)) {
          put(letter, undefined);
          continue;
        }
        put(letter, k + 1 < text.length ? tailWord(word, k + 1) : args[++i]);
        break;
      }
    }
  }
  return out;
}

/** The values of an option under any of its names. */
export function valuesOf(args: Args, ...names: string[]): Word[] {
  return names.flatMap((name) => args.values.get(name) ?? []);
}

export function hasFlag(args: Args, ...names: string[]): boolean {
  return names.some((name) => args.flags.has(name));
}
