// P4: `factory --version` wall time against `node -e 0` (the floor any Node CLI pays).
import path from 'node:path';
import { factoryRoot } from '../src/pi/resolve.js';
import { pair } from './timing.js';

export async function benchP4(runs = 15): Promise<{ factoryMs: number; nodeMs: number; ratio: number }> {
  const bin = path.join(factoryRoot(), 'bin', 'factory.js');
  const { a, b } = await pair(
    { label: 'factory --version', command: process.execPath, args: [bin, '--version'] },
    { label: 'node -e 0', command: process.execPath, args: ['-e', '0'] },
    runs,
  );
  return { factoryMs: a, nodeMs: b, ratio: a / b };
}
