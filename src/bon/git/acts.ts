// What an agent did to the user's repository, named as a person would say it: "moved refs/heads/main", "added
// refs/tags/v9", "added remote evil", "set core.hooksPath". The guard (./guard.ts) undoes; this names.
import fs from 'node:fs';
import { gitx, type GitxOptions } from './command.js';

/** `key=value` per entry of a config file, as git reads it (`--list`, no includes); none when there is no file. */
export async function readConfig(root: string, file: string, opts?: GitxOptions): Promise<string[]> {
  if (!fs.existsSync(file)) return [];
  const listed = await gitx(root, ['config', '--file', file, '--list', '-z'], opts);
  // A config git cannot read names no entry: its bytes are compared (and written back) all the same.
  if (listed.code !== 0) return [];
  return listed.stdout
    .toString('utf8')
    .split('\0')
    .filter((e) => e !== '')
    .map((e) => {
      const nl = e.indexOf('\n');
      return nl < 0 ? `${e}=` : `${e.slice(0, nl)}=${e.slice(nl + 1)}`;
    });
}

function keyOf(entry: string): string {
  return entry.slice(0, entry.indexOf('='));
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** git lowercases a variable's name; the file has it as written (`core.hooksPath`). */
function spelled(key: string, text: string): string {
  const dot = key.lastIndexOf('.');
  const name = key.slice(dot + 1);
  const found = new RegExp(`^\\s*(${escape(name)})\\s*(=|$)`, 'im').exec(text);
  return found ? `${key.slice(0, dot + 1)}${found[1]}` : key;
}

/** A remote's name from `remote.<name>.<var>`, or undefined. */
function remoteOf(key: string): string | undefined {
  const match = /^remote\.(.+)\.[^.]+$/.exec(key);
  return match?.[1];
}

/** The acts between two configs: remotes added, removed or changed; other variables set or unset. */
export function configActs(before: string[], after: string[], afterText: string): string[] {
  const had = new Set(before);
  const has = new Set(after);
  const acts: string[] = [];
  const push = (act: string) => {
    if (!acts.includes(act)) acts.push(act);
  };
  const remotesBefore = new Set(
    before
      .map(keyOf)
      .map(remoteOf)
      .filter((r) => r !== undefined),
  );
  const remotesAfter = new Set(
    after
      .map(keyOf)
      .map(remoteOf)
      .filter((r) => r !== undefined),
  );
  const changedKeys = new Set([...after.filter((e) => !had.has(e)), ...before.filter((e) => !has.has(e))].map(keyOf));
  for (const key of changedKeys) {
    const remote = remoteOf(key);
    if (remote !== undefined) {
      push(
        !remotesBefore.has(remote)
          ? `added remote ${remote}`
          : !remotesAfter.has(remote)
            ? `removed remote ${remote}`
            : `changed remote ${remote}`,
      );
      continue;
    }
    const present = after.some((e) => keyOf(e) === key);
    push(present ? `set ${spelled(key, afterText)}` : `unset ${key}`);
  }
  return acts;
}

/** The acts between two ref lists: each ref moved, added or deleted (`except`, the agent's own branch, left out). */
export function refActs(before: Map<string, string>, after: Map<string, string>, except?: string): string[] {
  const acts: string[] = [];
  for (const [name, id] of before) {
    if (name === except) continue;
    const now = after.get(name);
    if (now === undefined) acts.push(`deleted ${name}`);
    else if (now !== id) acts.push(`moved ${name}`);
  }
  for (const name of after.keys()) if (name !== except && !before.has(name)) acts.push(`added ${name}`);
  return acts;
}
