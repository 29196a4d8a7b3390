// The node contract: the words both sides of the process boundary speak — the cockpit (src/), which launches a
// factory node, and the extensions (.pi/extensions/), which run inside pi. One leaf that imports nothing, read by
// both, so neither side can rename a variable or a tool the other still uses (test/unit/node-contract.test.ts
// checks that the extensions read no FACTORY_ variable this file does not name).

/** The five extensions every factory node must load (FACTORY_EXPECTED names them at run time). */
export const SOCLE_NAMES = [
  'factory-report',
  'factory-inventory',
  'damage-control',
  'factory-obs',
  'factory-guard',
] as const;

/** The gate tool: the agent's one way to hand over its typed answer. */
export const REPORT_TOOL = 'report_phase';

/** The environment a node is launched with, by meaning. */
export const NODE_ENV = {
  /** Path of the JSON schema the answer must satisfy (no schema: no report tool). */
  envelopeSchema: 'FACTORY_ENVELOPE_SCHEMA',
  /** The socle, comma-separated: the inventory compares it with what loaded. */
  expected: 'FACTORY_EXPECTED',
  /** Who the node is: the phase (its presence marks a factory node), the role, the run. */
  phase: 'FACTORY_PHASE',
  role: 'FACTORY_ROLE',
  adwId: 'FACTORY_ADW_ID',
  /** Where the node writes its traces (default `<cwd>/adws/adw_data`). */
  dataDir: 'FACTORY_DATA_DIR',
  /** Circuit breakers (absent: unlimited). */
  maxTurns: 'FACTORY_MAX_TURNS',
  maxToolCalls: 'FACTORY_MAX_TOOL_CALLS',
  maxCostUsd: 'FACTORY_MAX_COST_USD',
  /** The folders the agent may write in, comma-separated (default: the project folder); factory-context. */
  writable: 'FACTORY_WRITABLE',
  /** Pruning of old tool results in the request (factory-context): whole turns kept, size threshold in KB. */
  pruneTurns: 'FACTORY_PRUNE_TURNS',
  pruneKb: 'FACTORY_PRUNE_KB',
} as const;
