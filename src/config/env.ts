// `.env` and the key vault. Neither pi nor claude reads `.env`: the factory loads it once, at the composition
// root, and decides per child what it may see. Pure apart from `loadDotEnv` reading the file.
//
// THE RULE (what a child process — pi, claude, a gate command, git — receives):
// 1. An allowlist of the real environment: what a program needs to run (PATH, HOME, locale, terminal, temp,
//    proxies and CA bundles), git's own settings (GIT_*, minus anything that can carry or fetch a credential or
//    bind git to another repository), pi's process switches (PI_CODING_AGENT_DIR, PI_OFFLINE,
//    PI_SKIP_VERSION_CHECK, PI_TELEMETRY) and the factory's FACTORY_*. Nothing else from the real environment.
// 2. No auth profile (vault open): every `.env` value passes, and so do the real environment's provider
//    variables (any *_API_KEY, and the variables of known providers: OPENROUTER_*, AWS_*, AZURE_* …).
//    The user's other credentials (GITHUB_TOKEN, NPM_TOKEN, …) are not a provider's and stay out.
// 3. An auth profile (vault closed): only the profile's keys are put back (the real environment's value wins,
//    else `.env`'s); every other `.env` key, every other secret-looking variable and SSH_AUTH_SOCK are absent.
// 4. `extra` (what the core sets for the phase: FACTORY_*, MAX_THINKING_TOKENS, …) always applies last.
// A variable already in the real environment always wins over `.env` and is not vault: it belongs to the user.
import fs from 'node:fs';
import path from 'node:path';
import { isSecretName, parseDotEnv, secretsOf, type SecretEntry } from '../../.pi/lib/dotenv.js';

// The parser and the credential-name rule are shared with factory-obs (inside pi): one definition of both.
export { isSecretName, parseDotEnv, type SecretEntry };

export interface DotEnv {
  /** The file read (absent or not). */
  file: string;
  /** Every entry the file defines (the last definition of a key wins), shadowed or not. */
  values: Record<string, string>;
  /** The vault: keys whose value comes from the file because the real environment does not set them. */
  fromFile: Set<string>;
  /** One line per skipped line or unreadable file; they name the line, never a value. */
  warnings: string[];
}

export interface AuthProfileKeys {
  keys: string[];
}

/** Reads `<root>/.env` once (call it once per command, as commands/workspace.ts does, and pass the result around). Never throws. */
export function loadDotEnv(root: string, real: NodeJS.ProcessEnv = process.env): DotEnv {
  const file = path.join(root, '.env');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const warnings = code === 'ENOENT' ? [] : [`${file}: unreadable (${code ?? 'error'}), ignored`];
    return { file, values: {}, fromFile: new Set(), warnings };
  }
  const { values, warnings } = parseDotEnv(text, file);
  const fromFile = new Set(Object.keys(values).filter((key) => real[key] === undefined));
  return { file, values, fromFile, warnings };
}

export function emptyDotEnv(root = '.'): DotEnv {
  return { file: path.join(root, '.env'), values: {}, fromFile: new Set(), warnings: [] };
}

const ALLOWED_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'TMPDIR',
  'TZ',
  'NO_COLOR',
  'FORCE_COLOR',
  'CI',
  'SSH_AUTH_SOCK',
  // Variables a test suite's outcome can hang on (a colour library asserting escape codes, a toolchain found
  // through its home): a gate must see them as the user's shell has them (issue 23, point 1). None is a secret.
  'NODE_DISABLE_COLORS',
  'CLICOLOR',
  'CLICOLOR_FORCE',
  'PY_COLORS',
  'COLORFGBG',
  // The terminal's name as the shell has it (supports-color reads TERM_PROGRAM for the colour level) and the tmux
  // it runs in: TERM=tmux-* without TMUX sends a child's tmux probe (pi runs one) to the default server instead.
  'TERM_PROGRAM',
  'TERM_PROGRAM_VERSION',
  'TMUX',
  'TMUX_PANE',
  'VIRTUAL_ENV',
  'PYENV_ROOT',
  'PYENV_VERSION',
  'CONDA_PREFIX',
  'JAVA_HOME',
  'GOPATH',
  'GOROOT',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'NVM_DIR',
  'VOLTA_HOME',
  'PNPM_HOME',
  'BUN_INSTALL',
  'DENO_DIR',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
  'XDG_RUNTIME_DIR',
  // Network plumbing a provider call may need behind a corporate proxy or a private CA.
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  // Windows equivalents, so the same rule holds there.
  'SYSTEMROOT',
  'SystemRoot',
  'COMSPEC',
  'PATHEXT',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'TEMP',
  'TMP',
  'PI_CODING_AGENT_DIR',
  'PI_OFFLINE',
  'PI_SKIP_VERSION_CHECK',
  'PI_TELEMETRY',
  // The user's prompt-cache lifetime: with `long`, pi sends the cache-routing key the arms share (issue 12).
  'PI_CACHE_RETENTION',
]);

/** GIT_* that can carry or fetch a credential (askpass, injected config such as http.extraHeader), or that
 * would bind the child's git to the cockpit's repository instead of its own folder. */
const GIT_EXCLUDED =
  /^GIT_(ASKPASS|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+|DIR|WORK_TREE|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|NAMESPACE)$/;

/** Provider configuration that travels with its key when the vault is open (region, account, endpoint …). */
const PROVIDER_PREFIXES = [
  'ANTHROPIC_',
  'OPENAI_',
  'OPENROUTER_',
  'AZURE_',
  'AWS_',
  'GOOGLE_',
  'GEMINI_',
  'VERTEX_',
  'MISTRAL_',
  'GROQ_',
  'CEREBRAS_',
  'XAI_',
  'DEEPSEEK_',
  'CLOUDFLARE_',
  'ZAI_',
  'MINIMAX_',
  'KIMI_',
  'MOONSHOT_',
  'FIREWORKS_',
  'TOGETHER_',
  'HF_',
  'NVIDIA_',
  'OPENCODE_',
  'QWEN_',
  'XIAOMI_',
  'BASETEN_',
  'AI_GATEWAY_',
  'CLAUDE_CODE_',
];

function isAllowlisted(name: string): boolean {
  if (ALLOWED_NAMES.has(name) || name.startsWith('LC_') || name.startsWith('FACTORY_')) return true;
  return name.startsWith('GIT_') && !GIT_EXCLUDED.test(name) && !isSecretName(name);
}

/** A provider's key or setting: `*_API_KEY` of any provider, or any variable of a known provider. Other
 * credentials of the user (GITHUB_TOKEN, NPM_TOKEN, DB_PASSWORD …) never reach a child from the real env. */
function isProviderVariable(name: string): boolean {
  return /_API_?KEY$/i.test(name) || PROVIDER_PREFIXES.some((prefix) => name.startsWith(prefix));
}

export interface ChildEnvOptions {
  real: NodeJS.ProcessEnv;
  dotenv: DotEnv;
  /** An auth profile closes the vault (see THE RULE above). */
  profile?: AuthProfileKeys;
  extra?: Record<string, string | undefined>;
}

/** The environment of a child process (pi, claude, a gate command, git), by THE RULE at the top of this file. */
export function childEnv(opts: ChildEnvOptions): Record<string, string> {
  const { real, dotenv, profile } = opts;
  const env: Record<string, string> = {};
  const vaultClosed = profile !== undefined;
  const profileKeys = new Set(profile?.keys ?? []);
  for (const [name, value] of Object.entries(real)) {
    if (value === undefined) continue;
    if (vaultClosed) {
      if (profileKeys.has(name)) env[name] = value;
      else if (isAllowlisted(name) && !isSecretName(name) && name !== 'SSH_AUTH_SOCK') env[name] = value;
    } else if (isAllowlisted(name) || isProviderVariable(name)) {
      env[name] = value;
    }
  }
  for (const key of dotenv.fromFile) {
    const value = dotenv.values[key];
    if (value === undefined || real[key] !== undefined) continue; // the real environment wins
    if (!vaultClosed || profileKeys.has(key)) env[key] = value;
  }
  for (const [name, value] of Object.entries(opts.extra ?? {})) {
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Profile keys found neither in the real environment nor in `.env` (worth a warning before a run). */
export function missingProfileKeys(profile: AuthProfileKeys, real: NodeJS.ProcessEnv, dotenv: DotEnv): string[] {
  return profile.keys.filter(
    (key) => real[key] === undefined && !(dotenv.fromFile.has(key) && dotenv.values[key] !== undefined),
  );
}

/**
 * The named values that must never be shown: every `.env` value, every real-environment value whose name
 * looks like a key/token/secret/password, and the profile's keys whatever their names. Feed `createRedactor`.
 */
export function secretEntries(real: NodeJS.ProcessEnv, dotenv: DotEnv, profile?: AuthProfileKeys): SecretEntry[] {
  return secretsOf(
    dotenv.values,
    real,
    (profile?.keys ?? []).map((key) => ({ name: key, value: real[key] ?? dotenv.values[key] })),
  );
}

/** `secretEntries` as bare values. */
export function secretValues(real: NodeJS.ProcessEnv, dotenv: DotEnv, profile?: AuthProfileKeys): string[] {
  return secretEntries(real, dotenv, profile).map((entry) => entry.value);
}
