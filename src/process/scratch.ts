// Scratch folders in the temp folder (a private git for an arm's patch, a sealed patch's private copy, a temporary
// index): each holds a file naming the process that made it, so that what a killed cockpit left there is found and
// removed by the next run or resume — and never what a living cockpit still uses.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processAlive } from './alive.js';

const OWNER = '.factory-owner';
/** The kinds of scratch the factory makes (the folder's name is `factory-<kind>-XXXXXX`). */
const KINDS = ['privgit', 'apply', 'check', 'armref'] as const;
const NAME = new RegExp(`^factory-(${KINDS.join('|')})-`);
/** A folder of that name without an owner (made by a cockpit before owners were written) is left a day. */
const OWNERLESS_MS = 24 * 3600 * 1000;

/** A new scratch folder of `kind`, owned by this process. */
export function makeScratch(kind: (typeof KINDS)[number]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `factory-${kind}-`));
  fs.writeFileSync(path.join(dir, OWNER), `${process.pid}\n`);
  return dir;
}

/** Removes the scratch folders whose owner is gone (a killed cockpit's); returns their names. */
export function sweepScratch(tmp = os.tmpdir(), now = Date.now()): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(tmp).filter((name) => NAME.test(name));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const dir = path.join(tmp, name);
    let dead: boolean;
    try {
      const pid = Number(fs.readFileSync(path.join(dir, OWNER), 'utf8').trim());
      dead = !Number.isInteger(pid) || pid <= 0 || (pid !== process.pid && !processAlive(pid));
      if (pid === process.pid) dead = false;
    } catch {
      try {
        dead = now - fs.statSync(dir).mtimeMs > OWNERLESS_MS;
      } catch {
        continue;
      }
    }
    if (!dead) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
