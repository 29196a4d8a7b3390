// The roster's words: the values and keys its YAML may hold. A leaf shared by roster.ts (defaults, briefs) and
// rosterSchema.ts (validation), so that neither imports the other: the schema loads zod, which a repository
// without a roster file must never pay for.

/** pi's thinking levels (pi 0.85.1 `--thinking` also accepts `max`, checked in its cli/args.js). */
export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
/** pi's built-in tools a roster may list; `report_phase` is the factory's own and is always added by the core. */
export const KNOWN_TOOLS = ['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls'] as const;
export const ROLE_PATTERN = /^[a-z][a-z0-9_-]*$/;

// The keys each level of the YAML accepts (named in the motif of an unknown key).
export const ROSTER_KEYS = ['gateway', 'harness', 'pi', 'fallback_model', 'payload', 'context', 'agents'] as const;
export const CONTEXT_KEYS = ['prune_turns', 'prune_kb'] as const;
export const PAYLOAD_KEYS = ['dir', 'commands'] as const;
export const COMMAND_KEYS = ['run', 'timeout'] as const;
export const AGENT_KEYS = ['model', 'thinking', 'tools', 'timeout', 'limits', 'auth', 'writable'] as const;
export const LIMIT_KEYS = ['max_turns', 'max_tool_calls', 'max_cost_usd'] as const;
export const AUTH_KEYS = ['keys', 'direct'] as const;

export type ThinkingLevel = (typeof THINKING_LEVELS)[number];
export type ToolName = (typeof KNOWN_TOOLS)[number];
