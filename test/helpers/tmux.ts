// Drive a command in a real terminal: a private tmux server (its own socket), send-keys and capture-pane. The socket
// lives in the session's own temp folder (-S), not in tmux's shared /tmp/tmux-<uid>/ (-L), which would outlive the run;
// TMUX_TMPDIR points there too, for the tmux a program in the pane runs (pi probes the terminal's features with one).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface TmuxSession {
  capture(): string;
  /** The pane with its SGR escapes (`capture-pane -e`), for tests of colour. */
  captureWithEscapes(): string;
  sendKeys(...keys: string[]): void;
  /**
   * Polls the screen until `test` holds; throws with the last screen when it never does. The timeout is a hang
   * guard (two minutes by default), never a measure of the machine's speed.
   */
  waitForScreen(test: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
  /** The command's exit code once it has ended. */
  waitForExit(timeoutMs?: number): Promise<number>;
  close(): void;
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function startTmux(
  argv: string[],
  opts: { cwd: string; env: Record<string, string>; cols?: number; rows?: number },
): TmuxSession {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-tmux-'));
  const socket = path.join(dir, 'tmux.sock');
  const exitFile = path.join(dir, 'exit');
  const script = path.join(dir, 'run.sh');
  const exports = Object.entries(opts.env).map(([k, v]) => `export ${k}=${shellQuote(v)}`);
  fs.writeFileSync(
    script,
    [
      'unset CI',
      ...exports,
      `cd ${shellQuote(opts.cwd)}`,
      `${argv.map(shellQuote).join(' ')}`,
      `echo $? > ${shellQuote(exitFile)}`,
      'sleep 600',
      '',
    ].join('\n'),
  );
  const tmux = (...args: string[]) =>
    execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8', env: { ...process.env, TMUX_TMPDIR: dir } });
  tmux(
    'new-session',
    '-d',
    '-s',
    'main',
    '-x',
    String(opts.cols ?? 100),
    '-y',
    String(opts.rows ?? 30),
    `bash ${shellQuote(script)}`,
  );
  const session: TmuxSession = {
    capture: () => tmux('capture-pane', '-p', '-t', 'main'),
    captureWithEscapes: () => tmux('capture-pane', '-e', '-p', '-t', 'main'),
    sendKeys: (...keys) => {
      tmux('send-keys', '-t', 'main', ...keys);
    },
    async waitForScreen(test, timeoutMs = 120_000) {
      const end = Date.now() + timeoutMs;
      let screen = '';
      while (Date.now() < end) {
        screen = session.capture();
        if (test(screen)) return screen;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`screen never matched; last screen:\n${screen}`);
    },
    async waitForExit(timeoutMs = 120_000) {
      const end = Date.now() + timeoutMs;
      while (Date.now() < end) {
        if (fs.existsSync(exitFile)) {
          const text = fs.readFileSync(exitFile, 'utf8').trim();
          if (text) return Number(text);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`command did not exit; last screen:\n${session.capture()}`);
    },
    close() {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return session;
}
