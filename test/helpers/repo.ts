// A throwaway git repository for tests that need a real work tree (pi runs tools in it, gates diff it).

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface TempRepo {
  /** Absolute, symlink-free path (pi matches a session's cwd exactly). */
  dir: string;
  cleanup(): void;
}

export interface TempRepoOptions {
  /** Relative path → content, committed in the initial commit. */
  files?: Record<string, string>;
}

/** Git without the machine's global/system config, so a user's hooks or signing never leak in. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' },
  });
}

export function makeTempRepo(opts: TempRepoOptions = {}): TempRepo {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'factory-repo-')));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Factory Test');
  git(dir, 'config', 'user.email', 'factory-test@example.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  for (const [path, content] of Object.entries(opts.files ?? {})) {
    const abs = join(dir, path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'initial');
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh real-path temp folder, removed by the caller's afterEach through `cleanups`. */
export function tempDir(prefix: string, cleanups: (() => void)[]): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
