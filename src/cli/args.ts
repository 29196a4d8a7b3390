// The command line's flags, in one table: parsed with Node's own `util.parseArgs` (no module to load: every
// `factory` start pays for its argument parser, and meow's bundle alone cost ~40 ms of the CLI's start-up before
// pi could be spawned). Unknown flags are refused in one line, numbers are read as numbers (NaN when they are not,
// so each command's own check names the flag), and `--no-<flag>` negates a boolean.
import { parseArgs } from 'node:util';
import { UsageError } from '../contract/errors.js';

type Spec = { type: 'string' } | { type: 'number'; default?: number } | { type: 'boolean'; default: boolean };

const FLAG_SPECS = {
  model: { type: 'string' },
  harness: { type: 'string' },
  retries: { type: 'number', default: 2 },
  cwd: { type: 'string' },
  dir: { type: 'string' },
  config: { type: 'string' },
  ui: { type: 'boolean', default: true },
  json: { type: 'boolean', default: false },
  arms: { type: 'number' },
  models: { type: 'string' },
  apply: { type: 'boolean', default: false },
  'in-place': { type: 'boolean', default: false },
  unsandboxed: { type: 'boolean', default: false },
  concurrency: { type: 'number' },
  'max-cost': { type: 'string' },
  'stop-after-green': { type: 'number' },
  deadline: { type: 'string' },
  yes: { type: 'boolean', default: false },
  force: { type: 'boolean', default: false },
  judge: { type: 'boolean', default: false },
  notify: { type: 'boolean', default: true },
  report: { type: 'string' },
  'report-dir': { type: 'string' },
  quick: { type: 'boolean', default: false },
  strict: { type: 'boolean', default: false },
  gates: { type: 'boolean', default: false },
  layer: { type: 'string' },
  into: { type: 'string' },
  'older-than': { type: 'string' },
  keep: { type: 'number' },
  'dry-run': { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
  version: { type: 'boolean', default: false },
} as const satisfies Record<string, Spec>;

type Specs = typeof FLAG_SPECS;
type ValueOf<S> = S extends { type: 'string' } ? string : S extends { type: 'number' } ? number : boolean;
type HasDefault<S> = S extends { default: unknown } ? true : false;

/** Every flag as the commands read it: defaults filled in, optional flags possibly absent. */
export type CliFlags = { [K in keyof Specs as HasDefault<Specs[K]> extends true ? K : never]: ValueOf<Specs[K]> } & {
  [K in keyof Specs as HasDefault<Specs[K]> extends true ? never : K]?: ValueOf<Specs[K]>;
};

const KNOWN_FLAGS: ReadonlySet<string> = new Set(Object.keys(FLAG_SPECS));
const VALUED: ReadonlySet<string> = new Set(
  Object.entries(FLAG_SPECS)
    .filter(([, s]) => s.type !== 'boolean')
    .map(([n]) => n),
);

/**
 * A flag that takes a value takes the next word whatever it looks like: `--arms -3` is the value -3 (for the
 * command's own check to name the flag and its range), not an unknown flag `-3`. Written `--arms=-3` for parseArgs.
 */
export function joinValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const name = /^--([^=]+)$/.exec(arg)?.[1];
    if (name !== undefined && VALUED.has(name) && i + 1 < argv.length && argv[i + 1] !== '--') {
      out.push(`--${name}=${argv[i + 1]}`);
      i += 1;
    } else out.push(arg);
  }
  return out;
}

/** The first flag the CLI does not know (a `no-` prefix is a negation), or undefined. */
export function unknownFlag(argv: string[]): string | undefined {
  for (const arg of argv) {
    if (arg === '--') break;
    if (!arg.startsWith('-') || arg === '-') continue;
    const name = arg.replace(/^--?/, '').split('=')[0] ?? '';
    const bare = name.startsWith('no-') ? name.slice(3) : name;
    if (!KNOWN_FLAGS.has(bare)) return arg.split('=')[0];
  }
  return undefined;
}

export function parseCli(raw: string[]): { input: string[]; flags: CliFlags } {
  const argv = joinValues(raw);
  const unknown = unknownFlag(argv);
  if (unknown) throw new UsageError(`unknown flag ${unknown} (see factory --help)`);
  const options = Object.fromEntries(
    Object.entries(FLAG_SPECS).map(([name, spec]) => [
      name,
      { type: spec.type === 'boolean' ? ('boolean' as const) : ('string' as const) },
    ]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, allowNegative: true, strict: true });
  } catch (error) {
    // e.g. `--cwd` with no value, or `--json=yes` for a boolean: one line, like every other bad input.
    throw new UsageError((error as Error).message.split('\n')[0]!.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
  const flags: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(FLAG_SPECS) as Array<[string, Spec]>) {
    const value = parsed.values[name];
    if (value === undefined) {
      if ('default' in spec && spec.default !== undefined) flags[name] = spec.default;
      continue;
    }
    const last = Array.isArray(value) ? value.at(-1) : value; // a repeated flag: the last one wins
    flags[name] = spec.type === 'number' ? (String(last).trim() === '' ? Number.NaN : Number(last)) : last;
  }
  return { input: parsed.positionals, flags: flags as CliFlags };
}
