// `.env` text and credential names: the two rules both sides of the process boundary need to agree on. The
// cockpit (src/config/env.ts) loads `.env` and builds the vault and the redactor from them; factory-obs, inside pi, reads
// the same `.env` with the same parser, so a value the agent echoes is masked exactly as the cockpit would mask it.
// Pure, imports nothing.

const KEY_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function unescapeDouble(raw: string): string {
  return raw.replace(/\\([nrt"\\$])/g, (_, c: string) => ({ n: '\n', r: '\r', t: '\t' })[c] ?? c);
}

/** Parses `.env` text: KEY=value, `export KEY=…`, quotes ('…' literal, "…" with \n \" \\ escapes, both may
 * span lines), `#` comments (whole line, or after a blank in an unquoted value), blank lines. No expansion. */
export function parseDotEnv(text: string, label = '.env'): { values: Record<string, string>; warnings: string[] } {
  const values: Record<string, string> = {};
  const warnings: string[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = (lines[i] ?? '').trim();
    if (line === '' || line.startsWith('#')) continue;
    const body = line.replace(/^export\s+/, '');
    const eq = body.indexOf('=');
    if (eq < 0) {
      warnings.push(`${label}:${lineNo}: no "=" on this line, skipped`);
      continue;
    }
    const key = body.slice(0, eq).trim();
    if (!KEY_NAME.test(key)) {
      warnings.push(`${label}:${lineNo}: not a variable name before "=", skipped`);
      continue;
    }
    let rest = body.slice(eq + 1).trimStart();
    const quote = rest[0];
    if (quote === '"' || quote === "'" || quote === '`') {
      // Find the closing quote, reading on across lines (a multi-line value such as a PEM key).
      let raw = rest.slice(1);
      let end = closingQuote(raw, quote);
      let j = i;
      while (end < 0 && j + 1 < lines.length) {
        j += 1;
        raw += `\n${lines[j] ?? ''}`;
        end = closingQuote(raw, quote);
      }
      if (end < 0) {
        warnings.push(`${label}:${lineNo}: ${key}: unclosed ${quote} quote, skipped`);
        continue;
      }
      const after = raw.slice(end + 1).trim();
      if (after !== '' && !after.startsWith('#')) {
        warnings.push(`${label}:${lineNo}: ${key}: unexpected text after the closing quote, skipped`);
        i = j;
        continue;
      }
      const inner = raw.slice(0, end);
      values[key] = quote === '"' ? unescapeDouble(inner) : inner;
      i = j;
      continue;
    }
    const comment = rest.search(/\s#/);
    if (comment >= 0) rest = rest.slice(0, comment);
    values[key] = rest.trim();
  }
  return { values, warnings };
}

function closingQuote(raw: string, quote: string): number {
  for (let k = 0; k < raw.length; k++) {
    if (quote === '"' && raw[k] === '\\') {
      k += 1;
      continue;
    }
    if (raw[k] === quote) return k;
  }
  return -1;
}

/** Name segments that mark a credential (`OPENAI_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`). */
const SECRET_SEGMENTS = new Set([
  'KEY',
  'APIKEY',
  'ACCESSKEY',
  'TOKEN',
  'AUTHTOKEN',
  'SECRET',
  'SECRETS',
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'CREDENTIAL',
  'CREDENTIALS',
  'PAT',
  'AUTH',
  'COOKIE',
  'PRIVATE',
]);
const SECRET_SUFFIXES = ['APIKEY', 'TOKEN', 'SECRET', 'PASSWORD', 'PASSWD'];
const NOT_SECRET = new Set(['SSH_AUTH_SOCK']);

/** Does this variable name look like it holds a key, token, secret or password? */
export function isSecretName(name: string): boolean {
  if (NOT_SECRET.has(name)) return false;
  const segments = name
    .toUpperCase()
    .split(/[_\-.]+/)
    .filter(Boolean);
  if (segments.some((s) => SECRET_SEGMENTS.has(s))) return true;
  const last = segments.at(-1) ?? '';
  return SECRET_SUFFIXES.some((suffix) => last.endsWith(suffix));
}

export interface SecretEntry {
  name: string;
  value: string;
}

/**
 * The named values that must never be shown: every `.env` value, every variable of `env` whose name looks like a
 * key/token/secret/password, then `more` (the cockpit adds the auth profiles' keys whatever their names). The
 * first name met for a value is the one its mask shows. Feed `createRedactor`.
 */
export function secretsOf(
  dotenvValues: Record<string, string>,
  env: Record<string, string | undefined>,
  more: ReadonlyArray<{ name: string; value: string | undefined }> = [],
): SecretEntry[] {
  const byValue = new Map<string, string>();
  const add = (name: string, value: string | undefined) => {
    if (value === undefined || value === '' || byValue.has(value)) return;
    byValue.set(value, name);
  };
  for (const [name, value] of Object.entries(dotenvValues)) add(name, value);
  for (const [name, value] of Object.entries(env)) if (isSecretName(name)) add(name, value);
  for (const { name, value } of more) add(name, value);
  return [...byValue].map(([value, name]) => ({ name, value }));
}
