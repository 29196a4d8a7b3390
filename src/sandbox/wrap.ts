// One door from a policy to a command line, whichever sandbox the machine has. Loaded only by a sandboxed launch.
import { wrapBwrap } from './bwrap.js';
import type { Sandbox, SandboxPolicy, Wrapped } from './policy.js';
import { wrapSeatbelt } from './seatbelt.js';

/** What a sandboxed program needs, as it travels with a launch request: the sandbox and the policy. JSON-safe. */
export interface SandboxSpec {
  sandbox: Sandbox;
  policy: SandboxPolicy;
}

export function wrapCommand(spec: SandboxSpec, command: string, args: readonly string[]): Wrapped {
  if (spec.sandbox.kind === 'bwrap') return wrapBwrap(spec.sandbox.program, spec.policy, command, args);
  return wrapSeatbelt(spec.sandbox.program, spec.policy, command, args);
}
