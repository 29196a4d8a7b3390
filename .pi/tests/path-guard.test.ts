// The path guard of damage-control on real folders: writes and edits stay inside the project however the path
// is spelled (`..`, absolute, `~`, `@`, file://) and whatever symlinks lie on the way; protected globs and the
// role's writable folders hold for the write and edit tools and for bash redirections alike.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideToolCall, loadRules, type Rules } from '../extensions/damage-control.js';
import { globInside, makeGuard, realTarget, toolPath } from '../lib/path-guard.js';
import { writableEntries, writablePaths, writableRoots } from '../lib/writable.js';
import { FACTORY_ROOT } from './helpers/node-rig.js';

const HOME = '/nonexistent-home/u';

function shippedRules(): Rules {
  const loaded = loadRules(path.join(FACTORY_ROOT, '.pi', 'damage-control-rules.yaml'));
  if (!loaded.ok) throw new Error(loaded.error);
  return loaded.rules;
}

const EMPTY_RULES: Rules = { bash: { deny: [], ask: [] }, paths: { protected: [] } };

describe('the path guard on a real project', () => {
  let base: string;
  let project: string;
  let outside: string;
  const rules = shippedRules();

  beforeAll(() => {
    base = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-path-guard-')));
    project = path.join(base, 'project');
    outside = path.join(base, 'outside');
    mkdirSync(path.join(project, 'src'), { recursive: true });
    mkdirSync(path.join(project, '.git', 'hooks'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'secret.txt'), 'x');
    symlinkSync(outside, path.join(project, 'escape')); // a folder inside that points outside
    symlinkSync(path.join(outside, 'missing.txt'), path.join(project, 'dangling')); // a dangling link to outside
    symlinkSync(path.join(outside, 'secret.txt'), path.join(project, 'secret-link')); // a file link to outside
    symlinkSync('src', path.join(project, 'alias')); // a link that stays inside
    symlinkSync('.git/hooks', path.join(project, 'hooks')); // a link into a protected folder
    symlinkSync('loop-b', path.join(project, 'loop-a'));
    symlinkSync('loop-a', path.join(project, 'loop-b'));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const write = (p: string, env: NodeJS.ProcessEnv = {}, r: Rules = rules) =>
    decideToolCall(r, 'write', { path: p, content: 'x' }, project, { env, home: HOME, scratch: [] });
  const edit = (p: string, env: NodeJS.ProcessEnv = {}) =>
    decideToolCall(rules, 'edit', { path: p, edits: [] }, project, { env, home: HOME, scratch: [] });
  const bash = (command: string, env: NodeJS.ProcessEnv = {}) =>
    decideToolCall(rules, 'bash', { command }, project, { env, home: HOME, scratch: [] });

  it('allows ordinary writes and edits inside the project', () => {
    for (const p of [
      'src/a.ts',
      './src/new/deep/file.ts',
      '@src/a.ts',
      'README.md',
      path.join(project, 'src/abs.ts'),
      'alias/b.ts',
      `file://${project}/src/c.ts`,
    ]) {
      expect(write(p), p).toEqual({ action: 'allow' });
    }
    expect(edit('src/a.ts')).toEqual({ action: 'allow' });
  });

  it.each([
    ['../outside.txt', 'resolves to'],
    ['src/../../x.txt', 'resolves to'],
    ['/etc/passwd', 'is outside the project'],
    ['~/.bashrc', 'resolves to'],
    ['@../x.txt', 'resolves to'],
    ['file:///etc/hosts', 'resolves to'],
  ])('refuses %s: outside the project', (p, motif) => {
    const decision = write(p);
    expect(decision.action).toBe('deny');
    if (decision.action === 'deny') {
      expect(decision.reason).toContain(motif);
      expect(decision.reason).toMatch(/outside the project .* \(intent write-outside\)$/);
    }
  });

  it('refuses symlink escapes: a linked folder, a dangling link, a linked file, and loops', () => {
    for (const p of ['escape/new.txt', 'escape/secret.txt', 'dangling', 'secret-link']) {
      const decision = write(p);
      expect(decision, p).toMatchObject({ action: 'deny' });
      if (decision.action === 'deny') expect(decision.reason).toContain('through a symbolic link');
      expect(edit(p).action, p).toBe('deny');
    }
    expect(write('loop-a/x').action).toBe('deny');
    expect(realTarget('dangling', project)).toBe(path.join(outside, 'missing.txt'));
    expect(realTarget('escape/../x', project)).toBe(path.join(base, 'x')); // `..` after a link is the link target's parent
  });

  it('honours protected globs, also through a link into a protected folder, and the factory data', () => {
    expect(write('hooks/pre-commit')).toEqual({
      action: 'deny',
      reason: 'hooks/pre-commit is a protected path (rule ".git/**")',
    });
    expect(write('.git/hooks/pre-commit').action).toBe('deny');
    expect(write('adws/adw_data/bon/a1/arm-1.patch')).toEqual({
      action: 'deny',
      reason: 'adws/adw_data/bon/a1/arm-1.patch is a protected path (rule "adws/adw_data/**")',
    });
    expect(edit('adws/adw_data/bon/a1/arm-1.patch').action).toBe('deny');
    expect(write('.pi/extensions/damage-control.ts').action).toBe('deny');
    expect(write('.pi/lib/path-guard.ts').action).toBe('deny');
    expect(write('.pi/settings.json').action).toBe('deny');
  });

  it('keeps a floor when the rules file protects nothing, including a moved data folder', () => {
    for (const p of [
      '.git/config',
      '.git',
      'adws/adw_data/x',
      '.pi/damage-control-rules.yaml',
      '.pi/extensions/evil.ts',
    ]) {
      expect(write(p, {}, EMPTY_RULES).action, p).toBe('deny');
    }
    expect(write('.env', {}, EMPTY_RULES)).toEqual({ action: 'allow' }); // .env is the rules file's, not the floor's
    expect(write('var/data/x.json', { FACTORY_DATA_DIR: path.join(project, 'var/data') }, EMPTY_RULES)).toEqual({
      action: 'deny',
      reason: 'var/data/x.json is a protected path (rule "var/data/**")',
    });
  });

  it("enforces the role's writable folders for write, edit and bash redirections", () => {
    const env = { FACTORY_WRITABLE: 'src, test' };
    expect(write('src/a.ts', env)).toEqual({ action: 'allow' });
    expect(write('test/new/a.test.ts', env)).toEqual({ action: 'allow' });
    expect(write('alias/a.ts', env)).toEqual({ action: 'allow' }); // the link leads into src
    expect(write('README.md', env)).toEqual({
      action: 'deny',
      reason: 'README.md is outside the writable folders of this role (src, test) (intent not-writable)',
    });
    expect(edit('package.json', env).action).toBe('deny');
    expect(write('srcx/a.ts', env).action).toBe('deny'); // a sibling with the same prefix is not inside src
    expect(bash('echo x > src/out.txt', env)).toEqual({ action: 'allow' });
    expect(bash('echo x > notes.txt', env)).toEqual({
      action: 'deny',
      reason: 'the redirection > writes to notes.txt, outside the writable folders (src, test) (intent not-writable)',
    });
    expect(bash('cd src && echo x > ok.txt', env)).toEqual({ action: 'allow' });
    expect(bash('npm test 2>/dev/null', env)).toEqual({ action: 'allow' });
    // A writable entry outside the project widens nothing: writes stay inside the project.
    expect(write(path.join(outside, 'x.txt'), { FACTORY_WRITABLE: outside }).action).toBe('deny');
  });

  it('lets rm and mv take a link itself, but follows it for what a trailing slash or a glob reaches, and for truncate', () => {
    const floorOf = (command: string) =>
      decideToolCall(EMPTY_RULES, 'bash', { command }, project, { env: {}, home: HOME, scratch: [] });
    expect(floorOf('rm escape')).toEqual({ action: 'allow' }); // removes the link, not what it points at
    expect(floorOf('rm dangling loop-a')).toEqual({ action: 'allow' });
    expect(floorOf('mv secret-link old-link')).toEqual({ action: 'allow' });
    expect(floorOf('rm -rf escape')).toMatchObject({ action: 'ask' });
    expect(floorOf('rm -rf escape/')).toMatchObject({
      action: 'deny',
      reason: expect.stringContaining('(intent delete-outside)'),
    });
    expect(floorOf('rm -rf escape/*')).toMatchObject({
      action: 'deny',
      reason: expect.stringContaining('(intent delete-outside)'),
    });
    expect(floorOf('truncate -s 0 secret-link')).toMatchObject({
      action: 'deny',
      reason: expect.stringContaining('(intent delete-outside)'),
    });
    expect(floorOf('find escape/ -delete')).toMatchObject({ action: 'deny' });
  });

  it('judges bash redirections on the real path too', () => {
    expect(bash('echo x > escape/x.txt')).toMatchObject({ action: 'deny' });
    expect(bash('echo x > dangling').action).toBe('deny');
    expect(bash('echo x > hooks/pre-commit')).toMatchObject({ action: 'deny' });
    expect(bash('echo x > alias/y.txt')).toEqual({ action: 'allow' });
  });
});

describe('path helpers', () => {
  it('reads a tool path as pi does', () => {
    expect(toolPath('@src/a.ts', HOME)).toBe('src/a.ts');
    expect(toolPath('~', HOME)).toBe(HOME);
    expect(toolPath('~/x', HOME)).toBe(`${HOME}/x`);
    expect(toolPath('file:///etc/hosts', HOME)).toBe('/etc/hosts');
    expect(toolPath('a\u00A0b', HOME)).toBe('a b');
  });

  it('knows which protected globs a folder holds', () => {
    const globs = ['.git/**', 'adws/adw_data/**', '.env', '**/secrets/*.json'];
    expect(globInside(globs, '.git')).toBe('.git/**');
    expect(globInside(globs, 'adws')).toBe('adws/adw_data/**');
    expect(globInside(globs, '')).toBe('.git/**');
    expect(globInside(globs, 'src')).toBeNull();
    expect(globInside(globs, '', '.')).toBe('.git/**'); // `.*` at the root takes .git
    expect(globInside(globs, '', 'build')).toBeNull();
  });

  it('parses FACTORY_WRITABLE one way for the model and for the guard', () => {
    expect(writableEntries(' src, test ,src,, ')).toEqual(['src', 'test']);
    expect(writablePaths({ FACTORY_WRITABLE: 'src,test' }, '/p')).toEqual(['src', 'test']);
    expect(writablePaths({}, '/p')).toEqual(['/p']);
    expect(writableRoots({ FACTORY_WRITABLE: 'src,/abs,~/h' }, '/p', '/home/u')).toEqual([
      '/p/src',
      '/abs',
      '/home/u/h',
    ]);
    expect(makeGuard('/p', [], { env: { FACTORY_WRITABLE: 'src' }, home: HOME, scratch: [] }).writableShown).toEqual([
      'src',
    ]);
  });
});
