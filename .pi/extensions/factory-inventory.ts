// factory-inventory: the socle's proof of presence. Each socle extension joins a process-wide registry
// when pi loads it (../lib/socle.ts); this extension compares that registry to FACTORY_EXPECTED and
// deposits a custom entry `factory-inventory` {pi_version, present, missing} in the session. The core
// reads it from the `--mode json` stream (`entry_appended`) and refuses a run without it.
//
// When: pi does not stream entries appended during the start-up `session_start`, but it does from
// `before_agent_start` on. So a session_start (start-up, clone, switch — fired twice on a clone) only
// arms a deposit, and the next before_agent_start makes it, once.
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent';
import { SOCLE_NAMES, joinSocle, socleMembers } from '../lib/socle.js';

export const EXTENSION_NAME = 'factory-inventory';
export const ENTRY_TYPE = 'factory-inventory';
export const EXPECTED_ENV = 'FACTORY_EXPECTED';

export interface Inventory {
  pi_version: string;
  present: string[];
  missing: string[];
}

/** FACTORY_EXPECTED as a list (comma separated, blanks and duplicates dropped); the five when unset. */
export function parseExpected(csv: string | undefined): string[] {
  if (csv === undefined || csv.trim() === '') return [...SOCLE_NAMES];
  return [
    ...new Set(
      csv
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
    ),
  ];
}

/** The entry's data: what loaded (sorted), and which expected names did not. */
export function inventory(expected: string[], present: string[], version: string): Inventory {
  const loaded = new Set(present);
  return {
    pi_version: version,
    present: [...loaded].sort(),
    missing: expected.filter((name) => !loaded.has(name)),
  };
}

/** Deposit bookkeeping, pure: session_start arms, before_agent_start fires once per arming. */
export interface DepositState {
  armed: boolean;
}

export function onSessionStart(_state: DepositState): DepositState {
  return { armed: true };
}

export function onBeforeAgentStart(state: DepositState): { state: DepositState; deposit: boolean } {
  return { state: { armed: false }, deposit: state.armed };
}

// pi's VERSION is a runtime value of the SDK; importing it at the top would stop vitest (Node 20)
// from loading this file, so it is fetched inside pi only, where the import resolves to pi itself.
async function piVersion(): Promise<string> {
  try {
    const sdk = (await import('@earendil-works/pi-coding-agent')) as { VERSION?: string };
    return typeof sdk.VERSION === 'string' ? sdk.VERSION : 'unknown';
  } catch {
    return 'unknown';
  }
}

export default function factoryInventory(pi: ExtensionAPI): void {
  const expected = parseExpected(process.env[EXPECTED_ENV]);
  let state: DepositState = { armed: true };

  pi.on('session_start', () => {
    state = onSessionStart(state);
  });

  pi.on('before_agent_start', async () => {
    const step = onBeforeAgentStart(state);
    state = step.state;
    if (!step.deposit) return;
    pi.appendEntry(ENTRY_TYPE, inventory(expected, socleMembers(), await piVersion()));
  });

  joinSocle(EXTENSION_NAME);
}
