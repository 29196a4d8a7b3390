// Whether a gate's command can start on this machine: the programs its command line runs, looked up the way
// `bash --norc --noprofile -c` looks them up (a builtin or keyword, a path with a slash from the gate's folder, else
// the first executable file of that name on the gate's PATH). A program missing or not executable is a *setup*
// failure, not a test result: the doctor says it, bon and build refuse to start on it (exit 2), and a gate that
// ends the way bash ends when it cannot find or run a program (127, 126) is never excused by the baseline.
import fs from 'node:fs';
import path from 'node:path';
/** roster.ts's ROSTER_FILE, spelt here: roster.ts reads the gates' types, so no import goes back to it. */
const ROSTER_FILE = path.join('adws', 'adw_config', 'factory.config.yaml');

/** bash's reserved words (`compgen -k`) and builtins (`compgen -b`): nothing to look up on PATH. */
const KEYWORDS = new Set(
  'if then else elif fi case esac for select while until do done in function time { } ! [[ ]] coproc'.split(' '),
);
const BUILTINS = new Set(
  '. : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type typeset ulimit umask unalias unset wait'.split(
    ' ',
  ),
);
/** Words that run the next word as a program (their own options skipped): both are looked up. */
const WRAPPERS = new Set(['env', 'exec', 'command', 'nice', 'nohup', 'time', 'timeout', 'stdbuf']);
/** After these words the segment is no simple command (a loop's list, a case's patterns, a function's name). */
const NOT_A_COMMAND = new Set(['for', 'select', 'case', 'function', 'coproc']);

/** A command line cut into simple commands, each as its words (quotes removed); unquoted operators separate them. */
export function simpleCommands(run: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < run.length; i += 1) {
    const c = run[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < run.length) word += run[(i += 1)]!;
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < run.length) {
      if (run[i + 1] === '\n')
        i += 1; // a continued line
      else {
        word += run[(i += 1)]!;
        inWord = true;
      }
    } else if (c === '#' && !inWord) {
      while (i + 1 < run.length && run[i + 1] !== '\n') i += 1;
    } else if (';&|()\n'.includes(c)) {
      endCommand();
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}

/**
 * Builtins after which the lookup is no longer the gate's: another folder (`cd`), another PATH (`export PATH=…`),
 * functions or aliases defined, a file sourced, a command built at run time. What follows is known only when it runs.
 */
const CHANGES_LOOKUP = new Set([
  'cd',
  'pushd',
  'popd',
  'source',
  '.',
  'eval',
  'export',
  'declare',
  'typeset',
  'local',
  'readonly',
  'hash',
  'alias',
  'set',
  'shopt',
  'enable',
  'builtin',
]);
/** A shell function defined in the command line (`f() { …; }`, `function f`): its calls are no program. */
const DEFINES_FUNCTION = /(^|[\s;&|(])(function\s+[\w-]+|[\w-]+\s*\(\s*\))/;

/**
 * The programs a command line starts, in order, as written, up to where the lookup stops being the gate's (a `cd`,
 * an `export PATH=…`); a word bash would expand is left out, and so is a command run with its own PATH.
 */
export function gatePrograms(run: string): string[] {
  const programs: string[] = [];
  if (DEFINES_FUNCTION.test(run)) return programs;
  for (const words of simpleCommands(run)) {
    let i = 0;
    let ownPath = false;
    if (words.every((w) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) && words.some((w) => w.startsWith('PATH=')))
      return programs;
    while (i < words.length) {
      const w = words[i]!;
      if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w) || /^[<>0-9&]*[<>]/.test(w)) {
        if (w.startsWith('PATH=')) ownPath = true;
        i += 1; // an assignment or a redirection before the command
        continue;
      }
      if (ownPath) break; // `PATH=… prog`: looked up on a PATH of its own
      if (CHANGES_LOOKUP.has(w)) return programs;
      if (NOT_A_COMMAND.has(w)) break;
      if (KEYWORDS.has(w)) {
        i += 1;
        continue;
      }
      if (w !== '[' && /[$`*?[\]{}~]/.test(w)) break; // expanded by bash: what it names is known only when it runs
      if (!programs.includes(w)) programs.push(w);
      if (!WRAPPERS.has(w)) break;
      if (w === 'env' && words.slice(i + 1).some((x) => x.startsWith('PATH=') || x === '-i' || x === '-u')) break; // env's own PATH
      i += 1;
      // The wrapper's options and arguments before the program: `env -i A=1 prog`, `timeout 60 prog`, `nice -n 5 prog`.
      while (
        i < words.length &&
        (/^-/.test(words[i]!) ||
          /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) ||
          (w === 'timeout' && /^\d/.test(words[i]!)) ||
          (w === 'nice' && words[i - 1] === '-n'))
      )
        i += 1;
    }
  }
  return programs;
}

export interface ProgramLookup {
  /** The gate's folder: a relative path and an empty PATH entry are taken from it. */
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export type Resolution =
  | { found: 'builtin' }
  | { found: 'file'; file: string }
  | { found: 'missing' }
  | { found: 'not-executable'; file: string };

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function pathDirs(lookup: ProgramLookup): string[] {
  return (lookup.env.PATH ?? '').split(path.delimiter).map((d) => path.resolve(lookup.cwd, d || '.'));
}

/** Where bash finds `program`, as `bash -c` in `cwd` with `env` would. */
export function resolveProgram(program: string, lookup: ProgramLookup): Resolution {
  if (program.includes('/')) {
    const file = path.resolve(lookup.cwd, program);
    if (executable(file)) return { found: 'file', file };
    return isFile(file) ? { found: 'not-executable', file } : { found: 'missing' };
  }
  if (BUILTINS.has(program) || KEYWORDS.has(program)) return { found: 'builtin' };
  let unrunnable: string | undefined;
  for (const dir of pathDirs(lookup)) {
    const file = path.join(dir, program);
    if (executable(file)) return { found: 'file', file };
    if (!unrunnable && isFile(file)) unrunnable = file;
  }
  return unrunnable ? { found: 'not-executable', file: unrunnable } : { found: 'missing' };
}

/** Edit distance of two short names, or Infinity once it exceeds `bound`. */
function distance(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) > bound) return Infinity;
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const next = [i];
    for (let j = 1; j <= b.length; j += 1)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    if (Math.min(...next) > bound) return Infinity;
    row = next;
  }
  return row[b.length]! <= bound ? row[b.length]! : Infinity;
}

/** The programs on PATH a missing name most likely meant: `python` → `python3`, `pythn` → `python3`. */
export function nearestPrograms(program: string, lookup: ProgramLookup): string[] {
  if (program.includes('/') || program.length < 3) return [];
  const names = new Set<string>();
  for (const dir of pathDirs(lookup)) {
    let entries: string[];
    try {
      entries = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of entries) if (!names.has(name) && executable(path.join(dir, name))) names.add(name);
  }
  // python → python3 (the machine has only the versioned name) comes first: it is the usual case.
  const versioned = [...names]
    .filter((n) => n.startsWith(program) && /^\d+(\.\d+)?$/.test(n.slice(program.length)))
    .sort();
  const near = [...names]
    .map((name) => ({ name, d: distance(program, name, 2) }))
    .filter((c) => c.d < Infinity && !versioned.includes(c.name))
    .sort((a, b) => a.d - b.d || a.name.length - b.name.length || a.name.localeCompare(b.name))
    .map((c) => c.name);
  return [...versioned, ...near].slice(0, 3);
}

/** A program of a gate that cannot start here, with the fix in words. */
export interface SetupProblem {
  program: string;
  /** `not found on PATH`, `is not executable (…)`. */
  problem: string;
  /** What to do, in one sentence (a corrected command line when a near name is on PATH). */
  fix: string;
}

/** The command line with `program` (as a word) replaced by `by`. */
function replaced(run: string, program: string, by: string): string {
  const escaped = program.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return run.replace(new RegExp(`(^|[\\s;&|('"])${escaped}(?=$|[\\s;&|)'"])`), `$1${by}`);
}

/** Where a gate's command is written, for the fix (`payload.commands[0] in adws/adw_config/factory.config.yaml`). */
export function gateWhere(index?: number): string {
  return `payload.commands${index === undefined ? '' : `[${index}]`} in ${ROSTER_FILE}`;
}

/** The fix of a program that cannot start in the command line `run`. */
export function setupFix(run: string, program: string, lookup: ProgramLookup, where = gateWhere()): string {
  const near = nearestPrograms(program, lookup);
  if (near.length > 0) return `${near[0]} is on PATH: use \`${replaced(run, program, near[0]!)}\` in ${where}`;
  return `install ${program} (or put it on PATH), or write the command that runs your tests in ${where}`;
}

/** The first program of `run` that cannot start with this lookup, or undefined when each one can (or is unknowable). */
export function missingProgram(run: string, lookup: ProgramLookup, where = gateWhere()): SetupProblem | undefined {
  for (const program of gatePrograms(run)) {
    const found = resolveProgram(program, lookup);
    if (found.found === 'missing')
      return {
        program,
        problem: program.includes('/') ? `not found (${path.resolve(lookup.cwd, program)})` : 'not found on PATH',
        fix: setupFix(run, program, lookup, where),
      };
    if (found.found === 'not-executable')
      return {
        program,
        problem: `is not executable (${found.file})`,
        fix: `chmod +x ${found.file}, or run it through its interpreter in ${where}`,
      };
  }
  return undefined;
}

/** A setup problem as one line: `` `pythn -m pytest`: pythn not found on PATH — python3 is on PATH: use … ``. */
export function setupLine(run: string, problem: SetupProblem): string {
  return `gate \`${run.replace(/\s+/g, ' ').trim()}\` cannot run: ${problem.program} ${problem.problem} — ${problem.fix}`;
}

/**
 * The gates' pre-flight, before any token: the first gate (or `payload.setup`) whose program cannot start here, as
 * its one line; undefined when each can. Read statically: a program that a script runs further in (npm's scripts,
 * make's recipes) is caught when the gate runs (on HEAD first, by best-of-N's baseline).
 */
export function gatePreflight(
  commands: readonly { run: string; cwd: string }[],
  env: NodeJS.ProcessEnv,
  setup?: { run: string; cwd: string },
): string | undefined {
  const all = [
    ...(setup ? [{ cmd: setup, where: `payload.setup in ${ROSTER_FILE}` }] : []),
    ...commands.map((cmd, i) => ({ cmd, where: gateWhere(i) })),
  ];
  for (const { cmd, where } of all) {
    const problem = missingProgram(cmd.run, { cwd: path.resolve(cmd.cwd), env }, where);
    if (problem) return setupLine(cmd.run, problem);
  }
  return undefined;
}

/**
 * How a shell says it cannot run a program: bash (`bash: line 1: pythn: command not found`), dash and npm's scripts
 * (`sh: 1: mocha: not found`), `Permission denied` of a file that is no program, make's recipe (`make: pythn: No such
 * file or directory`); Python's `-m` of a module it does not have (`/usr/bin/python3: No module named pytest`).
 */
const CANNOT_RUN =
  /^(?:\S*\/)?(?:ba|da|k|z)?sh: (?:line \d+: |\d+: )?(\S+): (command not found|not found|Permission denied)$|^make(?:\[\d+\])?: (\S+): (No such file or directory)$/m;
const NO_MODULE = /^(\S*python[\d.]*): No module named (\S+)$/m;

/** Why a red run of `run` is a setup failure (its program could not run), with the fix; undefined when it is a test result. */
export function setupFailure(
  run: string,
  code: number | null,
  output: string,
  lookup: ProgramLookup,
): { what: string; fix: string } | undefined {
  const said = CANNOT_RUN.exec(output);
  if (said) {
    const program = (said[1] ?? said[3])!;
    const how = (said[2] ?? said[4])!;
    const fix =
      how === 'Permission denied'
        ? `make ${program} executable (chmod +x), or run it through its interpreter`
        : setupFix(run, program, lookup);
    return { what: `${program}: ${how}`, fix };
  }
  const module = NO_MODULE.exec(output);
  if (module) {
    const python = path.basename(module[1]!);
    return {
      what: `${python} has no module ${module[2]}`,
      fix: `install ${module[2]} for ${python} (${python} -m pip install ${module[2]}), or run the tests in the project's environment (uv run, poetry run, a virtualenv's python)`,
    };
  }
  if (code !== 127 && code !== 126) return undefined;
  const missing = missingProgram(run, lookup);
  if (missing) return { what: `${missing.program} ${missing.problem}`, fix: missing.fix };
  return {
    what:
      code === 127 ? 'a program it runs was not found (exit 127)' : 'a program it runs is not executable (exit 126)',
    fix: 'install what it runs, or correct the command',
  };
}
