// Run the built CLI (`bin/factory.js` → dist/) as a user would, headless — or any program to its end.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { factoryRoot } from '../../src/pi/resolve.js';

export const FACTORY_BIN = path.join(factoryRoot(), 'bin', 'factory.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Called with the child and its stderr so far, on every stderr chunk (to send a signal at the right time). */
  onStderr?: (child: import('node:child_process').ChildProcess, stderr: string) => void;
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliRun> {
  return runToEnd(process.execPath, [FACTORY_BIN, ...args], { ...opts, cwd: opts.cwd ?? factoryRoot() });
}

/**
 * Any program run to its end, its output collected, without blocking the event loop (a scripted model served
 * from the test process must keep answering); killed after `timeoutMs` so a broken test fails instead of hanging.
 */
export function runToEnd(command: string, args: string[], opts: CliOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd ?? process.cwd(),
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      opts.onStderr?.(child, stderr);
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}
