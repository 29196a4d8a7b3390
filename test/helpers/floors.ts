// The house's floors, read by the wall test (test/unit/architecture.test.ts) and checked against the floor table
// of docs/architecture.md (test/unit/docs.test.ts).
/**
 * The house, lowest floor first. A file imports its own folder and the floors below it: never a floor above,
 * never a neighbour on its own floor. Type-only imports count: a type that points up is a
 * dependency all the same. A folder that is on no floor fails the test: a new room gets its floor first.
 */
export const FLOORS: readonly (readonly string[])[] = [
  ['.pi/lib'], // the pi node's own code, shared with the core (contract names, redaction, .env reading)
  ['src/contract'], // events, errors, formats, text, numbers, zod, the agent contract: what every floor speaks
  ['src/lifecycle.ts', 'src/scripted'], // the cleanup registry and interrupt ladder; the scripted model server
  ['src/process'], // children (spawn, process groups), git read-only, the work tree
  ['src/sandbox'], // the OS sandbox around an arm's commands
  ['src/gates', 'src/envelope'], // zero-token judges; the typed answers agents owe
  ['src/config'], // roster, routes, .env, where the data lives
  ['src/trace'], // the ledger, the run logs, the SQLite store
  ['src/pi'], // the pi client: argv, json stream, RPC, the node it loads
  ['src/harness'], // the port the engine speaks (pi, claude)
  ['src/engine'], // the runner, agent phases, phase groups, resume
  ['src/bon'], // best-of-N: worktree arms, harvest, ranking, apply
  ['adws'], // the workflows
  ['src/init', 'src/clean'],
  ['src/doctor'],
  ['state'], // stores fed by core events
  ['src/headless', 'src/commands'],
  ['components'], // pure Ink views
  ['src/tui', 'src/cli'], // the front ends: mount views on stores; compose a run from start to close
  ['src/cli.tsx'], // the entry
];

/**
 * best-of-N's own rooms (src/bon/), lowest first: an arm's git, then its tree, its patch, the harvest's judgements; the
 * spend watch beside git. Each imports its own room and the rooms below; the run itself (the files at src/bon's root
 * and dispatch/, the port an arm runs behind) sits above them all, and no room imports it.
 */
export const BON_ROOT = 'src/bon';
export const BON_RUN_FOLDERS: readonly string[] = ['src/bon/dispatch'];
export const BON_FLOORS: readonly (readonly string[])[] = [
  ['src/bon/git', 'src/bon/spend'], // git: the guard, the watch, an arm's own git, the factory's private git · spend: watch, forecast, budget server, prefix gate
  ['src/bon/tree'], // worktrees, the arm's repository, includes, submodules, scratch dependencies
  ['src/bon/patch'], // the patch harvested, sealed, read as git reads it, applied
  ['src/bon/harvest'], // ranking, overlap, line alignment, scope, what an arm tried
];
