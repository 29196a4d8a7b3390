// damage-control: refuses dangerous bash commands and writes where the agent has no business, through pi's
// `tool_call` hook (the only point where a call can be blocked before it runs). Two layers:
// - the rules file `<project>/.pi/damage-control-rules.yaml` (bash.deny/bash.ask regexes, paths.protected
//   globs), read on every call so an edit applies at once; the user's part, which they can extend;
// - a floor in code that holds whatever that file says (../lib/path-guard.ts, ../lib/bash-guard.ts): write
//   and edit land inside the project (ctx.cwd, judged on the real path, so `..`, absolute paths and symlinks
//   cannot leave it), outside the protected globs (the file's and FLOOR_PROTECTED) and inside the role's
//   writable folders (FACTORY_WRITABLE); bash is judged by intent (deleting trees or the home folder, writing
//   outside the project or into .git, planting git hooks…), not by spelling.
// A missing or broken rules file fails closed: every bash/write/edit call is refused, naming the file.
// `ask` rules open a confirmation when pi has a UI and are refusals when it has none (json/print modes);
// in RPC mode the factory's client cancels every dialog, so ask is a refusal there too.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent';
import { bashFindings, type Finding } from '../lib/bash-guard.js';
import { checkToolPath, globToRegExp, makeGuard, matchGlob, type GuardOptions } from '../lib/path-guard.js';
import { fencedInCommand, fencedRoots, fenceReason } from '../lib/fence.js';
import { lensOf, presentPayload, realInput, type Lens } from '../lib/lens.js';
import { joinSocle } from '../lib/socle.js';

export { globToRegExp };
export type { GuardOptions };

export const EXTENSION_NAME = 'damage-control';
export const RULES_RELATIVE_PATH = '.pi/damage-control-rules.yaml';

export interface Rules {
  bash: { deny: RegExp[]; ask: RegExp[] };
  paths: { protected: string[] };
}

export type LoadedRules = { ok: true; rules: Rules } | { ok: false; error: string };

export type Decision = { action: 'allow' } | { action: 'deny'; reason: string } | { action: 'ask'; reason: string };

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
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
      throw new Error('a mapping with bash and paths expected');
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
// Decisions (they read the file system, to follow symlinks, and never write).

export function evaluateBash(rules: Rules, command: string): Decision {
  const denied = rules.bash.deny.find((rule) => rule.test(command));
  if (denied) return { action: 'deny', reason: `bash command matches deny rule /${denied.source}/` };
  const asked = rules.bash.ask.find((rule) => rule.test(command));
  if (asked) return { action: 'ask', reason: `bash command matches ask rule /${asked.source}/` };
  return { action: 'allow' };
}

/** The protected glob that covers `target` (resolved against `cwd`, lexically), or null. */
export function isProtected(rules: Rules, target: string, cwd: string): string | null {
  // pi's own tools strip a leading "@" that some models add to paths.
  const cleaned = target.startsWith('@') ? target.slice(1) : target;
  const absolute = path.resolve(cwd, cleaned);
  const relative = path.relative(path.resolve(cwd), absolute).split(path.sep).join('/');
  return matchGlob(rules.paths.protected, relative);
}

function floorReason(finding: Finding): string {
  return `${finding.detail} (intent ${finding.intent})`;
}

/** bash: the file's deny rules, then the floor's refusals, then the file's and the floor's questions. */
export function decideBash(rules: Rules, command: string, cwd: string, options: GuardOptions = {}): Decision {
  const byRules = evaluateBash(rules, command);
  if (byRules.action === 'deny') return byRules;
  let findings: Finding[];
  try {
    findings = bashFindings(command, makeGuard(cwd, rules.paths.protected, options));
  } catch (error) {
    return {
      action: 'deny',
      reason: `the command could not be checked (${(error as Error).message}) (intent unreadable)`,
    };
  }
  const denied = findings.find((f) => f.action === 'deny');
  if (denied) return { action: 'deny', reason: floorReason(denied) };
  if (byRules.action === 'ask') return byRules;
  const asked = findings.find((f) => f.action === 'ask');
  return asked ? { action: 'ask', reason: floorReason(asked) } : { action: 'allow' };
}

/** The tools that take a path: a best-of-N arm's fence applies to each (./../lib/fence.ts). */
const PATH_TOOLS = new Set(['read', 'write', 'edit', 'grep', 'find', 'ls']);

/** What to do with one tool call: the arm's fence first, then bash, powershell, write and edit. */
export function decideToolCall(
  rules: Rules,
  toolName: string,
  input: Record<string, unknown>,
  cwd: string,
  options: GuardOptions = {},
): Decision {
  const fence = options.fenced ?? [];
  if (fence.length > 0) {
    const fenced =
      toolName === 'bash'
        ? fencedInCommand(String(input.command ?? ''), cwd, fence)
        : PATH_TOOLS.has(toolName)
          ? fenceReason(String(input.path ?? ''), cwd, fence)
          : undefined;
    if (fenced) return { action: 'deny', reason: fenced };
  }
  if (toolName === 'bash') return decideBash(rules, String(input.command ?? ''), cwd, options);
  // pi's other shell tool: its commands are not read by this guard, so a role cannot use it to go around bash's.
  if (toolName === 'powershell')
    return {
      action: 'deny',
      reason: 'damage-control cannot judge PowerShell commands; use bash (intent unjudged-shell)',
    };
  if (toolName === 'write' || toolName === 'edit') {
    const target = String(input.path ?? '');
    try {
      const verdict = checkToolPath(target, makeGuard(cwd, rules.paths.protected, options));
      return verdict.ok ? { action: 'allow' } : { action: 'deny', reason: verdict.reason };
    } catch (error) {
      return {
        action: 'deny',
        reason: `${target} could not be checked (${(error as Error).message}) (intent write-outside)`,
      };
    }
  }
  return { action: 'allow' };
}

export const GUARDED_TOOLS = new Set(['bash', 'write', 'edit', 'powershell']);

/** The tools this extension looks at in this process: the guarded ones, and the path tools when a fence is set. */
function watched(toolName: string, fenced: readonly string[]): boolean {
  return GUARDED_TOOLS.has(toolName) || (fenced.length > 0 && PATH_TOOLS.has(toolName));
}

export function blockedReason(detail: string): string {
  return `Blocked by damage-control: ${detail}`;
}

// ---------------------------------------------------------------------------------------------

export default function damageControl(pi: ExtensionAPI): void {
  const fenced = fencedRoots(process.env);
  // A best-of-N arm is shown at the primer's path (../lib/lens.ts): its paths are taken back here, before any judging.
  const lenses = new Map<string, Lens | undefined>();
  const lensFor = (cwd: string) => {
    if (!lenses.has(cwd)) lenses.set(cwd, lensOf(process.env, cwd));
    return lenses.get(cwd);
  };
  pi.on('before_provider_request', (event, ctx) => {
    const lens = lensFor(ctx.cwd);
    return lens ? presentPayload(event.payload, lens) : undefined;
  });
  pi.on('tool_call', async (event, ctx) => {
    const lens = lensFor(ctx.cwd);
    if (lens) realInput(event.input as Record<string, unknown>, lens);
    if (!watched(event.toolName, fenced)) return undefined;
    const loaded = loadRules(rulesFile(ctx.cwd));
    if (!loaded.ok) {
      return {
        block: true,
        reason: blockedReason(`${loaded.error}; bash, write and edit are refused until it is fixed`),
      };
    }
    let decision: Decision;
    try {
      decision = decideToolCall(loaded.rules, event.toolName, event.input as Record<string, unknown>, ctx.cwd, {
        fenced,
      });
    } catch (error) {
      // A guard that failed must not let the call through.
      return { block: true, reason: blockedReason(`the call could not be checked (${(error as Error).message})`) };
    }
    if (decision.action === 'allow') return undefined;
    if (decision.action === 'deny') return { block: true, reason: blockedReason(decision.reason) };
    if (!ctx.hasUI)
      return {
        block: true,
        reason: blockedReason(`${decision.reason} and needs a confirmation, but no one can answer here`),
      };
    const subject = event.toolName === 'bash' ? String((event.input as { command?: unknown }).command) : event.toolName;
    const confirmed = await ctx.ui.confirm('damage-control', `${decision.reason}. Allow?\n\n${subject}`);
    return confirmed ? undefined : { block: true, reason: blockedReason(`${decision.reason}; confirmation refused`) };
  });

  joinSocle(EXTENSION_NAME);
}
