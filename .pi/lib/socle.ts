// The socle registry: how each factory extension proves, inside the running pi process, that it loaded.
// pi loads every extension through its own jiti instance with the module cache off, so a module-level
// variable would be private to each extension: the registry lives on globalThis under a Symbol.for key,
// the one place all extensions of one process share.

export { SOCLE_NAMES } from './contract.js';

const REGISTRY_KEY = Symbol.for('factory.socle.registry');

type Registry = Map<string, { joinedAt: string }>;

function registry(): Registry {
  const holder = globalThis as unknown as Record<symbol, Registry | undefined>;
  let found = holder[REGISTRY_KEY];
  if (!found) {
    found = new Map();
    holder[REGISTRY_KEY] = found;
  }
  return found;
}

/** Called by an extension's factory: idempotent (pi re-runs factories after a clone or a switch). */
export function joinSocle(name: string): void {
  const members = registry();
  if (!members.has(name)) members.set(name, { joinedAt: new Date().toISOString() });
}

/** Names that joined in this process, in join order. */
export function socleMembers(): string[] {
  return [...registry().keys()];
}

/** Test hook: forget every member (a real pi process never needs this). */
export function resetSocleForTests(): void {
  registry().clear();
}
