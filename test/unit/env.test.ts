import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  childEnv,
  emptyDotEnv,
  isSecretName,
  loadDotEnv,
  missingProfileKeys,
  parseDotEnv,
  secretEntries,
  secretValues,
  type DotEnv,
} from '../../src/config/env.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-env-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('parseDotEnv', () => {
  it('reads KEY=value, export, quotes, comments and blank lines', () => {
    const text = [
      '\uFEFF# a comment',
      '',
      'PLAIN=value',
      'export EXPORTED=yes',
      'SPACED = around the equals  ',
      'INLINE=abc # trailing comment',
      'HASH=abc#def',
      'DOUBLE="two words # not a comment"',
      'ESCAPED="line1\\nline2 \\"quoted\\" back\\\\slash"',
      "SINGLE='raw \\n $HOME'",
      'EMPTY=',
      'EMPTY_QUOTED=""',
      'MULTI="-----BEGIN KEY-----',
      'abc',
      '-----END KEY-----"',
      'AFTER=still read',
      'DUP=first',
      'DUP=second',
      'WINDOWS=crlf\r',
    ].join('\n');
    const { values, warnings } = parseDotEnv(text);
    expect(warnings).toEqual([]);
    expect(values).toEqual({
      PLAIN: 'value',
      EXPORTED: 'yes',
      SPACED: 'around the equals',
      INLINE: 'abc',
      HASH: 'abc#def',
      DOUBLE: 'two words # not a comment',
      ESCAPED: 'line1\nline2 "quoted" back\\slash',
      SINGLE: 'raw \\n $HOME',
      EMPTY: '',
      EMPTY_QUOTED: '',
      MULTI: '-----BEGIN KEY-----\nabc\n-----END KEY-----',
      AFTER: 'still read',
      DUP: 'second',
      WINDOWS: 'crlf',
    });
  });

  it('skips malformed lines with a warning naming the line, never the value', () => {
    const text = [
      'GOOD=1',
      'no equals sign sk-secret-aaaa',
      '9BAD=sk-secret-bbbb',
      'OPEN="sk-secret-cccc',
      'NEXT=2',
    ].join('\n');
    const { values, warnings } = parseDotEnv(text, '/repo/.env');
    // The unclosed quote swallows nothing: the parser gives up on that line only.
    expect(values).toEqual({ GOOD: '1', NEXT: '2' });
    expect(warnings).toEqual([
      '/repo/.env:2: no "=" on this line, skipped',
      '/repo/.env:3: not a variable name before "=", skipped',
      '/repo/.env:4: OPEN: unclosed " quote, skipped',
    ]);
    expect(warnings.join('\n')).not.toContain('sk-secret');
  });

  it('refuses text after a closing quote', () => {
    const { values, warnings } = parseDotEnv('A="x" y\nB=2');
    expect(values).toEqual({ B: '2' });
    expect(warnings).toEqual(['.env:1: A: unexpected text after the closing quote, skipped']);
  });
});

describe('loadDotEnv', () => {
  it('the real environment wins and is not vault', () => {
    fs.writeFileSync(path.join(dir, '.env'), 'OPENROUTER_API_KEY=sk-or-from-file\nZAI_API_KEY=zai-from-file\n');
    const dotenv = loadDotEnv(dir, { OPENROUTER_API_KEY: 'sk-or-from-shell' });
    expect(dotenv.file).toBe(path.join(dir, '.env'));
    expect(dotenv.values).toEqual({ OPENROUTER_API_KEY: 'sk-or-from-file', ZAI_API_KEY: 'zai-from-file' });
    expect([...dotenv.fromFile]).toEqual(['ZAI_API_KEY']);
    const env = childEnv({ real: { OPENROUTER_API_KEY: 'sk-or-from-shell' }, dotenv });
    expect(env.OPENROUTER_API_KEY).toBe('sk-or-from-shell');
    expect(env.ZAI_API_KEY).toBe('zai-from-file');
  });

  it('no file: empty, no warning; an unreadable one: a warning, never a throw', () => {
    expect(loadDotEnv(dir, {})).toEqual(emptyDotEnv(dir));
    fs.mkdirSync(path.join(dir, '.env'));
    const dotenv = loadDotEnv(dir, {});
    expect(dotenv.values).toEqual({});
    expect(dotenv.warnings).toEqual([`${path.join(dir, '.env')}: unreadable (EISDIR), ignored`]);
  });
});

describe('childEnv', () => {
  const real: NodeJS.ProcessEnv = {
    PATH: '/usr/bin',
    HOME: '/home/me',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'xterm',
    SSH_AUTH_SOCK: '/tmp/agent.sock',
    GIT_AUTHOR_NAME: 'Me',
    GIT_ASKPASS: '/usr/bin/askpass',
    GIT_CONFIG_PARAMETERS: "'http.extraheader=Authorization: Bearer ghp_x'",
    GIT_DIR: '/elsewhere/.git',
    GIT_TOKEN: 'git-token-value',
    PI_CODING_AGENT_DIR: '/tmp/pi',
    PI_OFFLINE: '1',
    PI_SKIP_VERSION_CHECK: '1',
    PI_TELEMETRY: '0',
    PI_UNRELATED: 'x',
    FACTORY_PI: '/opt/pi',
    ANTHROPIC_API_KEY: 'sk-ant-real',
    AWS_REGION: 'eu-west-1',
    GITHUB_TOKEN: 'ghp_real',
    DATABASE_URL: 'postgres://u:p@h/db',
    NODE_OPTIONS: '--inspect',
    RANDOM_THING: 'x',
    UNSET: undefined,
  };
  const dotenv = (values: Record<string, string>, realEnv = real): DotEnv => {
    fs.writeFileSync(
      path.join(dir, '.env'),
      Object.entries(values)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
    return loadDotEnv(dir, realEnv);
  };

  it('keeps what the outcome of a suite hangs on: colour switches and toolchain homes, as the shell has them', () => {
    const shell = {
      ...real,
      NODE_DISABLE_COLORS: '1',
      CLICOLOR_FORCE: '1',
      PY_COLORS: '1',
      JAVA_HOME: '/opt/jdk',
      VIRTUAL_ENV: '/w/.venv',
      PYENV_VERSION: '3.12.1',
      CARGO_HOME: '/c',
    };
    const env = childEnv({ real: shell, dotenv: emptyDotEnv() });
    for (const name of [
      'NODE_DISABLE_COLORS',
      'CLICOLOR_FORCE',
      'PY_COLORS',
      'JAVA_HOME',
      'VIRTUAL_ENV',
      'PYENV_VERSION',
      'CARGO_HOME',
    ]) {
      expect(env[name], name).toBe(shell[name as keyof typeof shell]);
    }
  });

  it('keeps only the allowlist of the real environment', () => {
    const env = childEnv({ real, dotenv: emptyDotEnv() });
    for (const name of [
      'PATH',
      'HOME',
      'LANG',
      'LC_ALL',
      'TERM',
      'GIT_AUTHOR_NAME',
      'PI_CODING_AGENT_DIR',
      'PI_OFFLINE',
      'PI_SKIP_VERSION_CHECK',
      'PI_TELEMETRY',
      'FACTORY_PI',
    ]) {
      expect(env[name], name).toBe(real[name]);
    }
    for (const name of [
      'GIT_ASKPASS',
      'GIT_CONFIG_PARAMETERS',
      'GIT_DIR',
      'GIT_TOKEN',
      'PI_UNRELATED',
      'GITHUB_TOKEN',
      'DATABASE_URL',
      'NODE_OPTIONS',
      'RANDOM_THING',
      'UNSET',
    ]) {
      expect(name in env, name).toBe(false);
    }
  });

  it('without a profile the vault is open: every .env value and the real provider variables pass', () => {
    const env = childEnv({
      real,
      dotenv: dotenv({ OPENROUTER_API_KEY: 'sk-or-file', ZAI_API_KEY: 'zai-file', APP_MODE: 'dev' }),
    });
    expect(env).toMatchObject({
      OPENROUTER_API_KEY: 'sk-or-file',
      ZAI_API_KEY: 'zai-file',
      APP_MODE: 'dev',
      ANTHROPIC_API_KEY: 'sk-ant-real',
      AWS_REGION: 'eu-west-1',
    });
    expect(env.SSH_AUTH_SOCK).toBe('/tmp/agent.sock');
    expect('GITHUB_TOKEN' in env).toBe(false); // the user's credentials that are not a provider's stay out
  });

  it('a profile closes the vault: only its keys come back, from .env or the real environment', () => {
    const file = dotenv({ OPENROUTER_API_KEY: 'sk-or-file', ZAI_API_KEY: 'zai-file', APP_MODE: 'dev' });
    const env = childEnv({
      real,
      dotenv: file,
      profile: { keys: ['OPENROUTER_API_KEY', 'GITHUB_TOKEN'] },
      extra: { FACTORY_PHASE: 'build', MAX_THINKING_TOKENS: '8192' },
    });
    expect(env.OPENROUTER_API_KEY).toBe('sk-or-file');
    expect(env.GITHUB_TOKEN).toBe('ghp_real'); // named by the profile: the real environment's value
    for (const name of ['ZAI_API_KEY', 'APP_MODE', 'ANTHROPIC_API_KEY', 'AWS_REGION', 'SSH_AUTH_SOCK', 'GIT_TOKEN']) {
      expect(name in env, name).toBe(false);
    }
    expect(env).toMatchObject({
      PATH: '/usr/bin',
      HOME: '/home/me',
      PI_CODING_AGENT_DIR: '/tmp/pi',
      FACTORY_PHASE: 'build',
      MAX_THINKING_TOKENS: '8192',
    });
  });

  it('a profile with no keys (a subscription route) leaves no key at all', () => {
    const env = childEnv({ real, dotenv: dotenv({ OPENROUTER_API_KEY: 'sk-or-file' }), profile: { keys: [] } });
    expect(Object.keys(env).filter(isSecretName)).toEqual([]);
    expect('OPENROUTER_API_KEY' in env).toBe(false);
  });

  it('the real environment wins over .env under a profile too', () => {
    const realEnv = { ...real, OPENROUTER_API_KEY: 'sk-or-shell' };
    const env = childEnv({
      real: realEnv,
      dotenv: dotenv({ OPENROUTER_API_KEY: 'sk-or-file' }, realEnv),
      profile: { keys: ['OPENROUTER_API_KEY'] },
    });
    expect(env.OPENROUTER_API_KEY).toBe('sk-or-shell');
  });

  it('missingProfileKeys names the keys found nowhere', () => {
    const file = dotenv({ ZAI_API_KEY: 'zai-file' });
    expect(missingProfileKeys({ keys: ['ZAI_API_KEY', 'GITHUB_TOKEN', 'KIMI_API_KEY'] }, real, file)).toEqual([
      'KIMI_API_KEY',
    ]);
  });
});

describe('secret names and values', () => {
  it('recognises credential names without flagging ordinary ones', () => {
    for (const name of [
      'OPENAI_API_KEY',
      'OPENROUTER_APIKEY',
      'GITHUB_TOKEN',
      'HF_TOKEN',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'DB_PASSWORD',
      'MYSQL_PWD_PASSWD',
      'NPM_AUTH',
      'CLIENT_SECRET',
      'GITHUBTOKEN',
      'ssh-private',
    ]) {
      expect(isSecretName(name), name).toBe(true);
    }
    for (const name of [
      'PATH',
      'SSH_AUTH_SOCK',
      'GIT_AUTHOR_NAME',
      'TOKENIZERS_PARALLELISM',
      'KEYBOARD_LAYOUT',
      'MONKEY',
      'PI_OFFLINE',
      'AWS_REGION',
    ]) {
      expect(isSecretName(name), name).toBe(false);
    }
  });

  it('every .env value, every secret-looking real value and the profile keys, deduplicated', () => {
    fs.writeFileSync(path.join(dir, '.env'), 'OPENROUTER_API_KEY=sk-or-file\nAPP_MODE=production\nSAME=sk-ant-real\n');
    const real = {
      OPENROUTER_API_KEY: 'sk-or-shell',
      ANTHROPIC_API_KEY: 'sk-ant-real',
      ACCOUNT_ID: 'acct-123456',
      PATH: '/usr/bin',
      EMPTY_TOKEN: '',
    };
    const file = loadDotEnv(dir, real);
    expect(secretEntries(real, file, { keys: ['ACCOUNT_ID'] })).toEqual([
      { name: 'OPENROUTER_API_KEY', value: 'sk-or-file' }, // shadowed by the shell, still a secret written in a file
      { name: 'APP_MODE', value: 'production' },
      { name: 'SAME', value: 'sk-ant-real' },
      { name: 'OPENROUTER_API_KEY', value: 'sk-or-shell' },
      { name: 'ACCOUNT_ID', value: 'acct-123456' },
    ]);
    expect(secretValues(real, file)).toEqual(['sk-or-file', 'production', 'sk-ant-real', 'sk-or-shell']);
  });
});
