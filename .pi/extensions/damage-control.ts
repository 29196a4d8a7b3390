// damage-control: refuses dangerous bash commands and writes to protected files, through pi's
// `tool_call` hook (the only point where a call can be blocked before it runs). Rules come from
// `<project>/.pi/damage-control-rules.yaml`, read on every call so an edit of the rules applies at once.
// A missing or broken rules file fails closed: every bash/write/edit call is refused, naming the file.
// `ask` rules open a confirmation when pi has a UI and are refusals when it has none (json/print modes);
// in RPC mode the factory's client cancels every dialog, so ask is a refusal there too.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent';
import { joinSocle } from '../lib/socle.js';

export const EXTENSION_NAME = 'damage-control';
export const RULES_RELATIVE_PATH = '.pi/damage-control-rules.yaml';

export interface Rules {
  bash: { deny: RegExp[]; ask: RegExp[] };
  paths: { protected: string[] };
}

export type LoadedRules = { ok: true; rules: Rules } | { ok: false; error: string };

export type Decision =
  | { action: 'allow' }
  | { action: 'deny'; reason: string }
  | { action: 'ask'; reason: string };

export function rulesFile(cwd: string): string {
  return path.join(cwd, RULES_RELATIVE_PATH);
}

// ---------------------------------------------------------------------------------------------
// Rules: parsed and checked strictly; any doubt is an error, and an error means fail closed.

function stringList(value: unknown, where: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw new Error(`${where} must be a list of strings`);
  }
  return value as string[];
}

function section(value: unknown, where: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where} must be a mapping`);
  return value as Record<string, unknown>;
}

function compile(patterns: string[], where: string): RegExp[] {
  return patterns.map((source) => {
    try {
      return new RegExp(source);
    } catch (error) {
      throw new Error(`${where}: invalid regular expression ${JSON.stringify(source)} (${(error as Error).message})`);
    }
  });
}

/** Rules from YAML text; `source` names the file in error messages. */
export function parseRules(text: string, source: string): LoadedRules {
  try {
    const doc = parseYaml(text) as unknown;
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('a mapping with bash and paths expected');
    const root = doc as Record<string, unknown>;
    const unknown = Object.keys(root).filter((key) => key !== 'bash' && key !== 'paths');
    if (unknown.length > 0) throw new Error(`unknown key(s) ${unknown.join(', ')}`);
    const bash = section(root.bash, 'bash');
    const paths = section(root.paths, 'paths');
    return {
      ok: true,
      rules: {
        bash: {
          deny: compile(stringList(bash.deny, 'bash.deny'), 'bash.deny'),
          ask: compile(stringList(bash.ask, 'bash.ask'), 'bash.ask'),
        },
        paths: { protected: stringList(paths.protected, 'paths.protected') },
      },
    };
  } catch (error) {
    return { ok: false, error: `rules file ${source} is unusable: ${(error as Error).message}` };
  }
}

export function loadRules(file: string): LoadedRules {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { ok: false, error: `rules file ${file} is missing or unreadable` };
  }
  return parseRules(text, file);
}

// ---------------------------------------------------------------------------------------------
// Decisions (pure).

export function evaluateBash(rules: Rules, command: string): Decision {
  const denied = rules.bash.deny.find((rule) => rule.test(command));
  if (denied) return { action: 'deny', reason: `bash command matches deny rule /${denied.source}/` };
  const asked = rules.bash.ask.find((rule) => rule.test(command));
  if (asked) return { action: 'ask', reason: `bash command matches ask rule /${asked.source}/` };
  return { action: 'allow' };
}

/** A glob as an anchored regex: `*` stays in one folder, `**` crosses folders, `?` is one character. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      const slashAfter = glob[i + 2] === '/';
      out += slashAfter ? '(?:.*/)?' : '.*';
      i += slashAfter ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** The protected glob that covers `target` (resolved against `cwd`), or null. */
export function isProtected(rules: Rules, target: string, cwd: string): string | null {
  // pi's own tools strip a leading "@" that some models add to paths.
  const cleaned = target.startsWith('@') ? target.slice(1) : target;
  const absolute = path.resolve(cwd, cleaned);
  const relative = path.relative(path.resolve(cwd), absolute).split(path.sep).join('/');
  const name = path.basename(absolute);
  for (const glob of rules.paths.protected) {
    const regex = globToRegExp(glob.replace(/^\.\//, ''));
    const anchored = glob.includes('/');
    if (anchored ? regex.test(relative) : regex.test(name)) return glob;
  }
  return null;
}

/** What to do with one tool call. Tools other than bash, write and edit are not this extension's. */
export function decideToolCall(rules: Rules, toolName: string, input: Record<string, unknown>, cwd: string): Decision {
  if (toolName === 'bash') return evaluateBash(rules, String(input.command ?? ''));
  if (toolName === 'write' || toolName === 'edit') {
    const target = String(input.path ?? '');
    const glob = isProtected(rules, target, cwd);
    if (glob) return { action: 'deny', reason: `${target} is a protected path (rule "${glob}")` };
  }
  return { action: 'allow' };
}

export const GUARDED_TOOLS = new Set(['bash', 'write', 'edit']);

export function blockedReason(detail: string): string {
  return `Blocked by damage-control: ${detail}`;
}

// ---------------------------------------------------------------------------------------------

export default function damageControl(pi: ExtensionAPI): void {
  pi.on('tool_call', async (event, ctx) => {
    if (!GUARDED_TOOLS.has(event.toolName)) return undefined;
    const loaded = loadRules(rulesFile(ctx.cwd));
    if (!loaded.ok) {
      return { block: true, reason: blockedReason(`${loaded.error}; bash, write and edit are refused until it is fixed`) };
    }
    const decision = decideToolCall(loaded.rules, event.toolName, event.input as Record<string, unknown>, ctx.cwd);
    if (decision.action === 'allow') return undefined;
    if (decision.action === 'deny') return { block: true, reason: blockedReason(decision.reason) };
    if (!ctx.hasUI) return { block: true, reason: blockedReason(`${decision.reason} and needs a confirmation, but no one can answer here`) };
    const subject = event.toolName === 'bash' ? String((event.input as { command?: unknown }).command) : event.toolName;
    const confirmed = await ctx.ui.confirm('damage-control', `${decision.reason}. Allow?\n\n${subject}`);
    return confirmed ? undefined : { block: true, reason: blockedReason(`${decision.reason}; confirmation refused`) };
  });

  joinSocle(EXTENSION_NAME);
}
