// A project node that loads the factory's socle minus some extensions: the settings filter is narrowed, so
// the real pi really starts without them (the inventory must then name what is missing).
import fs from 'node:fs';
import path from 'node:path';
import { installNode } from '../../src/pi/node.js';
import { factoryRoot } from '../../src/pi/resolve.js';

export function installPartialNode(repo: string, omit: string[]): void {
  installNode(repo, factoryRoot());
  const file = path.join(repo, '.pi', 'settings.json');
  const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as { packages: { extensions?: string[] }[] };
  for (const entry of settings.packages) {
    if (entry && typeof entry === 'object' && Array.isArray(entry.extensions)) {
      entry.extensions = entry.extensions.filter((ext) => !omit.some((name) => ext.endsWith(`/${name}.ts`)));
    }
  }
  fs.writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
}
