// The roster's words and bounds: the values and keys its YAML may hold, the names it may not, and how big it may
// be. A leaf shared by roster.ts (defaults, briefs, reading), rosterYaml.ts (parsing) and rosterSchema.ts
// (validation), so that none imports another: those two load yaml and zod, which a repository without a roster
// file must never pay for.

/** pi's thinking levels (pi 0.85.1 `--thinking` also accepts `max`, checked in its cli/args.js). */
export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
/** pi's built-in tools a roster may list; `report_phase` is the factory's own and is always added by the core. */
export const KNOWN_TOOLS = ['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls'] as const;
export const ROLE_PATTERN = /^[a-z][a-z0-9_-]*$/;
/** The roles the workflows run, each with what runs it: a roster naming any other role is refused (a typo). */
export const KNOWN_ROLES = [
  { role: 'prompter', runBy: 'factory prompt' },
  { role: 'builder', runBy: 'factory build and every bon arm' },
  { role: 'judge', runBy: 'bon --judge' },
] as const;

// The keys each level of the YAML accepts (named in the motif of an unknown key).
export const ROSTER_KEYS = [
  'gateway',
  'harness',
  'pi',
  'fallback_model',
  'payload',
  'context',
  'bon',
  'agents',
] as const;
export const BON_KEYS = ['max_cost', 'arm_max_cost', 'confirm_above', 'stop_after_green', 'deadline', 'judge'] as const;
export const CONTEXT_KEYS = ['prune_turns', 'prune_kb'] as const;
export const PAYLOAD_KEYS = ['dir', 'commands', 'setup'] as const;
export const COMMAND_KEYS = ['run', 'timeout'] as const;
export const AGENT_KEYS = ['model', 'thinking', 'tools', 'timeout', 'limits', 'auth', 'writable'] as const;
export const LIMIT_KEYS = ['max_turns', 'max_tool_calls', 'max_cost_usd'] as const;
export const AUTH_KEYS = ['keys', 'direct'] as const;

export type ThinkingLevel = (typeof THINKING_LEVELS)[number];
export type ToolName = (typeof KNOWN_TOOLS)[number];

/**
 * Names an object inherits (Object.prototype's own names, and `prototype`). A roster map holding one would be
 * read through the inherited member somewhere (`agents.constructor` is a function, `__proto__` rewires the
 * object), so they are refused as role names and as any key.
 */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toString',
  'toLocaleString',
  'valueOf',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);

// Bounds checked before the YAML parser sees the text. A real roster is ~2 KB, 5 levels deep, ~100 values.
/** 256 KB: a hundred times any real roster, and small enough that reading, lexing and validating stay in milliseconds. */
export const MAX_ROSTER_BYTES = 256 * 1024;
/**
 * Nesting levels as the pre-scan estimates them (it over-counts: about two per real level). yaml composes
 * recursively and exhausts the stack near 800 levels, so 64 leaves real rosters room and the parser a margin.
 */
export const MAX_ROSTER_DEPTH = 64;
/** References to anchors yaml may expand (its own default, 100, is sized for data files; a roster shares a few blocks). */
export const MAX_ROSTER_ALIASES = 50;
/** Values after aliases are expanded: bounds the work of the validator whatever the aliases multiply. */
export const MAX_ROSTER_NODES = 20_000;
