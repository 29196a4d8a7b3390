// The built CLI as the benchmarks run it: a whole process, stderr kept for the error, exit 0 expected.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { factoryRoot } from '../src/pi/resolve.js';

export const FACTORY_BIN = path.join(factoryRoot(), 'bin', 'factory.js');

export function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FACTORY_BIN, ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`factory ${args[0]} exited ${code}: ${stderr.trim().split('\n').slice(-2).join(' | ')}`)),
    );
  });
}
