// The .git guard on real repositories: everything an agent could plant under .git to make git run its code or
// read other places (a hook, a filter driver and an fsmonitor in config, info/attributes, alternates), and refs
// it could add, move or delete, are named and undone; the user's .git ends byte for byte as it began. A commit on
// the current branch is left to the tree reset, which undoes it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitDirMotif, restoreGitDir, snapshotGitDir } from '../../src/bon/gitGuard.js';
import { git, makeTempRepo } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function repo(): string {
  const r = makeTempRepo({ files: { 'a.txt': 'a\n' } });
  cleanups.push(r.cleanup);
  git(r.dir, 'branch', 'other');
  git(r.dir, 'tag', 'v1');
  return r.dir;
}

/** Every file under .git but the object store, the index, the logs and the refs, with its mode and bytes; and every ref. */
function dotGit(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const base = path.join(dir, '.git');
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(base, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      // Refs are compared through git below (pack-refs may move them between loose files and packed-refs).
      if (['objects', 'logs', 'index', 'ORIG_HEAD', 'COMMIT_EDITMSG', 'refs', 'packed-refs'].includes(child)) continue;
      const abs = path.join(base, child);
      if (entry.isDirectory()) walk(child);
      else out[child] = `${fs.lstatSync(abs).mode.toString(8)} ${fs.readFileSync(abs, 'utf8')}`;
    }
  };
  walk('');
  out['(refs)'] = git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');
  return out;
}

describe('the .git guard', () => {
  it('names and undoes hooks, config (filter driver, fsmonitor), info, alternates, HEAD and refs', async () => {
    const dir = repo();
    const before = dotGit(dir);
    const snapshot = await snapshotGitDir(dir);
    const hook = path.join(dir, '.git/hooks/post-checkout');
    fs.writeFileSync(hook, '#!/bin/sh\ntouch /tmp/pwned\n', { mode: 0o755 });
    fs.chmodSync(path.join(dir, '.git/hooks/pre-commit.sample'), 0o777);
    git(dir, 'config', 'filter.evil.clean', 'sh -c "touch /tmp/pwned"');
    git(dir, 'config', 'core.fsmonitor', '/tmp/evil');
    fs.mkdirSync(path.join(dir, '.git/info'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.git/info/attributes'), '* filter=evil\n');
    fs.mkdirSync(path.join(dir, '.git/objects/info'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.git/objects/info/alternates'), '/tmp/elsewhere/objects\n');
    git(dir, 'branch', 'planted');
    git(dir, 'update-ref', 'refs/heads/other', git(dir, 'rev-parse', 'HEAD').trim());
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'moves main, which the reset undoes');
    git(dir, 'update-ref', 'refs/heads/other', git(dir, 'rev-parse', 'HEAD').trim());
    git(dir, 'tag', '-d', 'v1');
    git(dir, 'pack-refs', '--all');
    const changes = await restoreGitDir(dir, snapshot);
    expect(changes).toEqual(
      expect.arrayContaining([
        'hooks/post-checkout (added)',
        'hooks/pre-commit.sample (changed)',
        'config (changed)',
        'info/attributes (added)',
        'objects/info/alternates (added)',
        'refs/heads/planted (added)',
        'refs/heads/other (moved)',
        'refs/tags/v1 (deleted)',
      ]),
    );
    git(dir, 'reset', '-q', git(dir, 'rev-parse', 'HEAD~1').trim()); // what resetTree does for the branch
    const after = dotGit(dir);
    expect(after).toEqual(before);
    expect(fs.existsSync(path.join(dir, '.git/objects/info/alternates'))).toBe(false);
    expect(fs.existsSync(hook)).toBe(false);
    expect(fs.readFileSync(path.join(dir, '.git/config'), 'utf8')).not.toMatch(/evil/);
    expect(execFileSync('git', ['log', '-1', '--format=%s'], { cwd: dir, encoding: 'utf8' }).trim()).toBe('initial');
  }, 30_000);

  it('a HEAD switched to another branch is put back; a .git left alone gives no change', async () => {
    const dir = repo();
    const snapshot = await snapshotGitDir(dir);
    expect(await restoreGitDir(dir, snapshot)).toEqual([]);
    git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/other');
    expect(await restoreGitDir(dir, snapshot)).toEqual(['HEAD (changed)']);
    expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
  });

  it('the motif names the first changes on one line', () => {
    expect(gitDirMotif(['hooks/post-checkout (added)', 'config (changed)', 'info/attributes (added)', 'refs/heads/x (added)'])).toBe(
      "it changed the repository's .git (.git/hooks/post-checkout (added), .git/config (changed), .git/info/attributes (added) and 1 more): an agent may not; undone",
    );
  });
});
