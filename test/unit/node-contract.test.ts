// The node contract (.pi/lib/contract.ts) is the one vocabulary of both sides of the process boundary: the
// extensions read no FACTORY_ variable it does not name, the cockpit sets the ones it launches nodes with from it,
// and the socle and the report tool are the same objects on both sides.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_ENV, REPORT_TOOL, SOCLE_NAMES } from '../../.pi/lib/contract.js';
import { SOCLE_NAMES as EXTENSION_SOCLE } from '../../.pi/lib/socle.js';
import { TOOL_NAME } from '../../.pi/extensions/factory-report.js';
import { REPORT_TOOL as CORE_REPORT_TOOL } from '../../src/contract/typedGate.js';
import { nodeEnv } from '../../src/pi/launch.js';
import { SOCLE } from '../../src/contract/agent.js';
import { workspacePaths } from '../../src/config/paths.js';
import { factoryRoot } from '../../src/pi/resolve.js';

const named = new Set<string>(Object.values(NODE_ENV));

function factoryVariablesIn(dir: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    const text = fs.readFileSync(path.join(dir, name), 'utf8');
    for (const [variable] of text.matchAll(/\bFACTORY_[A-Z_]+\b/g))
      found.set(variable, [...(found.get(variable) ?? []), name]);
  }
  return found;
}

describe('node contract', () => {
  it('every FACTORY_ variable an extension reads is named by the contract', () => {
    const read = factoryVariablesIn(path.join(factoryRoot(), '.pi', 'extensions'));
    expect(read.size).toBeGreaterThan(5); // the scan sees the extensions
    const unnamed = [...read.keys()].filter((v) => !named.has(v));
    expect(unnamed).toEqual([]);
  });

  it("the cockpit launches a node with the contract's names", () => {
    const env = nodeEnv(
      {
        identity: { adwId: 'aaaa0001', phase: 'build', role: 'builder' },
        workspace: workspacePaths('/repo'),
        limits: { maxTurns: 3, maxToolCalls: 9, maxCostUsd: 0.5 },
        env: {},
      },
      '/repo/schema.json',
    );
    expect(Object.keys(env).sort()).toEqual(
      [
        NODE_ENV.envelopeSchema,
        NODE_ENV.expected,
        NODE_ENV.phase,
        NODE_ENV.role,
        NODE_ENV.adwId,
        NODE_ENV.dataDir,
        NODE_ENV.maxTurns,
        NODE_ENV.maxToolCalls,
        NODE_ENV.maxCostUsd,
      ].sort(),
    );
    expect(env[NODE_ENV.expected]).toBe(SOCLE_NAMES.join(','));
  });

  it('one socle and one report tool on both sides', () => {
    expect(SOCLE).toBe(SOCLE_NAMES);
    expect(EXTENSION_SOCLE).toBe(SOCLE_NAMES);
    expect(TOOL_NAME).toBe(REPORT_TOOL);
    expect(CORE_REPORT_TOOL).toBe(REPORT_TOOL);
  });
});
