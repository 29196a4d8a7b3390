// The version of the pi a PiCommand will run, known WITHOUT spawning it: some flags exist only in newer pi
// (`--no-mcp` from 0.99.0; 0.85 refuses it with "Unknown option"), and a `pi --version` per attempt would cost
// ~0.5 s of start-up (P2 keeps the CLI within 150 ms of a raw pi). So, in this order:
//   1. the package.json above the CLI file (realpath, walking up to the package named
//      @earendil-works/pi-coding-agent): an npm install, the bundled pi, a .js FACTORY_PI; a few stat/read calls;
//   2. the version checkPi saw for that same file (realpath + mtime + size) earlier in this process (the doctor,
//      the cockpit home): a standalone binary has no package.json;
//   3. unknown: version-gated flags are then left out (pi runs as it would by hand).
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compareVersions, type PiCommand } from './piCommand.js';

const PI_PACKAGE = '@earendil-works/pi-coding-agent';

/** pi 0.99.0 made MCP a built-in extension and added `--no-mcp`; 0.85 rejects the flag. */
export const PI_NO_MCP_SINCE = '0.99.0';

/** The file that is pi: the script a Node runs, else the executable. */
function piFile(cmd: PiCommand): string {
  return cmd.prefixArgs[0] ?? cmd.command;
}

/** realpath + mtime + size: the same file, unchanged since it was looked at (a `pi update` changes it). */
function identityOf(file: string): { real: string; key: string } | undefined {
  try {
    const real = realpathSync(file);
    const stat = statSync(real);
    return { real, key: `${real}\0${stat.mtimeMs}\0${stat.size}` };
  } catch {
    return undefined;
  }
}

const checked = new Map<string, string>();
const fromManifest = new Map<string, string | undefined>();

/** Records what `pi --version` answered for this command (checkPi calls it), for later spawns in this process. */
export function rememberPiVersion(cmd: PiCommand, version: string): void {
  const id = identityOf(piFile(cmd));
  if (id) checked.set(id.key, version);
}

/** The version in the pi package.json above `file` (its realpath), if there is one. */
export function packageVersionAbove(file: string): string | undefined {
  let dir = dirname(file);
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (manifest.name === PI_PACKAGE) return typeof manifest.version === 'string' ? manifest.version : undefined;
    } catch {
      // no (readable) package.json here: keep walking
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The version this command would report, from its package.json or an earlier checkPi; undefined when unknown. */
export function knownPiVersion(cmd: PiCommand): string | undefined {
  const id = identityOf(piFile(cmd));
  if (!id) return undefined;
  if (!fromManifest.has(id.key)) fromManifest.set(id.key, packageVersionAbove(id.real));
  return fromManifest.get(id.key) ?? checked.get(id.key);
}

/** Whether pi takes `--no-mcp`: only when its version is known to be ≥ 0.99.0. */
export function piAcceptsNoMcp(cmd: PiCommand): boolean {
  const version = knownPiVersion(cmd);
  return version !== undefined && compareVersions(version, PI_NO_MCP_SINCE) >= 0;
}
