// `factory init [--into <repo>]`: make a repository ready for the cockpit in one step — the pi node's rules (the
// node itself is given to pi by the cockpit at each start: nothing committed names this machine's install), an
// example spec, a commented roster whose gate is the repository's own test command,
// neutral role briefs, and `adws/adw_data/` ignored. Everything the user already has is kept (merge, never
// overwrite), a second run changes nothing, and every refusal comes before the first write.
import fs from 'node:fs';
import path from 'node:path';
import { errorMessage, firstLine, UsageError } from '../contract/errors.js';
import { gitRaw, isWorkTree, topLevel } from '../process/git.js';
import { seedNode } from '../pi/node.js';
import { BRIEFS_DIR, loadRoster, ROSTER_FILE, WORKFLOW_ROLES } from '../config/roster.js';
import { guessGate, readManifest, yamlScalar, type GateGuess } from './gateCommand.js';

/** What must never be committed: the runtime data, and the keys the README tells users to put in `.env`. */
export const IGNORED = [
  { pattern: 'adws/adw_data/', probe: 'adws/adw_data/probe', why: 'runtime data (sessions, traces, factory.db)' },
  { pattern: '.env', probe: '.env', why: 'provider keys' },
] as const;
/** The example spec init writes (never over one the user has): what a good spec holds. */
export const EXAMPLE_SPEC = 'specs/example.md';
/** What init writes, relative to the repository root: the paths the user is told to commit. */
export const INIT_PATHS = ['.pi', path.posix.join('adws', 'adw_config'), '.gitignore', EXAMPLE_SPEC];

export type InitAction = 'written' | 'updated' | 'kept';

export interface InitStep {
  /** Relative to the repository root, POSIX slashes. */
  file: string;
  action: InitAction;
  detail: string;
}

export interface InitResult {
  root: string;
  steps: InitStep[];
  /** The roster's gate when init wrote the roster (an existing roster keeps its own). */
  gate?: GateGuess;
  /** Paths under INIT_PATHS that git sees as new or changed: what to commit before the first bon. */
  toCommit: string[];
}

export interface InitOptions {
  /** The repository (its root or any folder inside it). */
  into: string;
  /** The factory folder whose node and templates are used. */
  factoryRoot: string;
}

function refuse(message: string): never {
  throw new UsageError(firstLine(message));
}

function templatesDir(factoryRoot: string): string {
  return path.join(factoryRoot, 'templates');
}

/** The template roster with the gate filled in. */
export function rosterText(factoryRoot: string, gate: GateGuess): string {
  const template = fs.readFileSync(path.join(templatesDir(factoryRoot), 'factory.config.yaml'), 'utf8');
  const note = gate.placeholder
    ? 'no test command found: put yours here (the doctor flags this line)'
    : `from ${gate.from}`;
  return template.replace('{{GATE}}', yamlScalar(gate.run)).replace('{{GATE_NOTE}}', note);
}

function readIfPresent(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    refuse(
      `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}); nothing was written`,
    );
  }
}

/** `.pi/settings.json` must already be a JSON object with a `packages` list (or absent) before anything is written. */
function assertSettingsMergeable(root: string): void {
  const file = path.join(root, '.pi', 'settings.json');
  const text = readIfPresent(file);
  if (text === undefined) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    refuse(`${file} is not valid JSON (${(error as Error).message}); nothing was written`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    refuse(`${file} must hold a JSON object; nothing was written`);
  const packages = (parsed as { packages?: unknown }).packages;
  if (packages !== undefined && !Array.isArray(packages))
    refuse(`${file}: "packages" must be an array; nothing was written`);
}

async function repositoryRoot(into: string): Promise<string> {
  const dir = path.resolve(into);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) refuse(`${dir} is not a folder; nothing was written`);
  if (!(await isWorkTree(dir)))
    refuse(`${dir} is not inside a git repository (run \`git init\` there first); nothing was written`);
  return fs.realpathSync(await topLevel(dir));
}

async function isIgnored(root: string, rel: string): Promise<boolean> {
  const probe = await gitRaw(root, ['check-ignore', '-q', '--no-index', '--', rel]);
  return probe.code === 0;
}

async function pendingPaths(root: string): Promise<string[]> {
  const out = await gitRaw(root, ['status', '--porcelain', '-z', '--untracked-files=all', '--', ...INIT_PATHS]);
  return out.stdout
    .toString('utf8')
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3));
}

function writeNew(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { flag: 'wx' }); // never over a file that appeared meanwhile
}

export async function initRepo(opts: InitOptions): Promise<InitResult> {
  const root = await repositoryRoot(opts.into);
  const factory = fs.realpathSync(path.resolve(opts.factoryRoot));
  if (root === factory) refuse(`${root} is the factory itself: it is set up already; nothing was written`);
  if (!fs.existsSync(path.join(templatesDir(factory), 'factory.config.yaml')))
    refuse(`${factory} has no templates/ folder (a broken install: reinstall the cockpit); nothing was written`);

  // Every read that may refuse comes first: a refusal leaves the repository exactly as it was.
  const rosterFile = path.join(root, ROSTER_FILE);
  const hasRoster = fs.existsSync(rosterFile);
  if (hasRoster) {
    try {
      await loadRoster(rosterFile);
    } catch (error) {
      refuse(`the roster is invalid, fix it first — ${errorMessage(error)}; nothing was written`);
    }
  }
  const manifest = readManifest(root);
  assertSettingsMergeable(root);
  const gitignore = path.join(root, '.gitignore');
  const ignoreText = readIfPresent(gitignore);
  const missing = [];
  for (const rule of IGNORED) if (!(await isIgnored(root, rule.probe))) missing.push(rule);

  const steps: InitStep[] = [];
  const settingsExisted = fs.existsSync(path.join(root, '.pi', 'settings.json'));
  const node = seedNode(root, factory);
  if (node.settingsChanged) {
    steps.push({
      file: '.pi/settings.json',
      action: 'updated',
      detail: `removed the machine path ${node.removed.join(', ')} (the cockpit gives pi its node at each start)`,
    });
  } else if (settingsExisted) {
    steps.push({
      file: '.pi/settings.json',
      action: 'kept',
      detail: 'your pi settings (the cockpit gives pi its node at each start)',
    });
  }
  steps.push({
    file: '.pi/damage-control-rules.yaml',
    action: node.rulesCopied ? 'written' : 'kept',
    detail: node.rulesCopied ? 'default damage-control rules' : 'your damage-control rules',
  });
  const exampleFile = path.join(root, EXAMPLE_SPEC);
  if (fs.existsSync(exampleFile)) {
    steps.push({ file: EXAMPLE_SPEC, action: 'kept', detail: 'your example spec' });
  } else {
    writeNew(exampleFile, fs.readFileSync(path.join(templatesDir(factory), 'specs', 'example.md'), 'utf8'));
    steps.push({
      file: EXAMPLE_SPEC,
      action: 'written',
      detail: 'an example spec: goal, context, acceptance criteria, out of scope, files likely touched',
    });
  }

  let gate: GateGuess | undefined;
  if (hasRoster) {
    steps.push({ file: ROSTER_FILE, action: 'kept', detail: 'your roster (valid)' });
  } else {
    gate = guessGate(root, manifest);
    writeNew(rosterFile, rosterText(factory, gate));
    steps.push({
      file: ROSTER_FILE,
      action: 'written',
      detail: gate.placeholder
        ? 'roster; gate: a placeholder (no test command found — edit payload.commands)'
        : `roster; gate: ${gate.run} (${gate.from})`,
    });
  }

  for (const role of WORKFLOW_ROLES) {
    const rel = path.posix.join(BRIEFS_DIR.split(path.sep).join('/'), `${role}.md`);
    const file = path.join(root, rel);
    const current = readIfPresent(file);
    if (current !== undefined && current.trim() !== '') {
      steps.push({ file: rel, action: 'kept', detail: `your ${role} brief` });
      continue;
    }
    const neutral = fs.readFileSync(path.join(templatesDir(factory), 'briefs', `${role}.md`), 'utf8');
    if (current === undefined) writeNew(file, neutral);
    else fs.writeFileSync(file, neutral); // a blank brief gives the agent nothing: it is filled
    steps.push({
      file: rel,
      action: current === undefined ? 'written' : 'updated',
      detail: `neutral ${role} brief (add your repository's rules)`,
    });
  }

  if (missing.length === 0) {
    steps.push({
      file: '.gitignore',
      action: 'kept',
      detail: `${IGNORED.map((r) => r.pattern).join(' and ')} already ignored`,
    });
  } else {
    const glue = ignoreText === undefined || ignoreText === '' || ignoreText.endsWith('\n') ? '' : '\n';
    fs.appendFileSync(gitignore, `${glue}${missing.map((r) => `# factory: ${r.why}\n${r.pattern}\n`).join('')}`);
    steps.push({
      file: '.gitignore',
      action: ignoreText === undefined ? 'written' : 'updated',
      detail: `${missing.map((r) => r.pattern).join(' and ')} ignored`,
    });
  }
  return { root, steps, gate, toCommit: await pendingPaths(root) };
}

/** Shell-quotes a path for the printed `git add` line when it needs it. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./@+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** What init prints: one line per file, then exactly what to commit and what to run next. */
export function describeInit(result: InitResult): string {
  const width = Math.max(...result.steps.map((s) => s.file.length));
  const mark: Record<InitAction, string> = { written: '+', updated: '~', kept: '=' };
  const lines = [
    `factory init in ${result.root}`,
    ...result.steps.map((s) => `  ${mark[s.action]} ${s.file.padEnd(width)}  ${s.action}: ${s.detail}`),
  ];
  if (result.toCommit.length > 0) {
    lines.push('', 'Commit these before the first `factory bon` (it needs a clean tree):');
    lines.push(
      `  git add -- ${result.toCommit.map(shellWord).join(' ')} && git commit -m "Set up the factory cockpit"`,
    );
  } else {
    lines.push('', 'Nothing to commit: the factory files are committed already.');
  }
  if (result.gate?.placeholder) lines.push('', `Then set your test command in ${ROSTER_FILE} (payload.commands).`);
  lines.push('', `Write a spec like ${EXAMPLE_SPEC}, then \`factory bon specs/<your-spec>.md\`.`);
  lines.push('', 'Next: put your provider key in .env (e.g. OPENROUTER_API_KEY=…), then `factory doctor`.');
  return `${lines.join('\n')}\n`;
}
