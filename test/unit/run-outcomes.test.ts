// Outcomes are events: the headless log prints them, `factory show` lists them from the trace.
import { describe, expect, it } from 'vitest';
import { outcomeLines } from '../../src/commands/runs.js';
import type { RunEvent } from '../../src/events.js';
import { createLogFormatter } from '../../src/headless.js';

const base = { adwId: 'aaaa0001', ts: 1 };
const events: RunEvent[] = [
  { ...base, type: 'fallback', phase: 'build', from: 'openrouter/a', to: 'openrouter/b', reason: '503 overloaded' },
  { ...base, type: 'phase_ok', phase: 'build', kind: 'agent', attempt: 1, attempts: 3, seconds: 1, tokens: 1, cost: 0 },
  { ...base, type: 'apply', arm: 2, applied: false, line: 'arm 2 not applied: npm test failed on HEAD' },
  { ...base, type: 'apply', arm: 1, applied: true, line: 'applied arm 1 (p.patch) with git apply --index — review and commit it' },
  { ...base, type: 'proposal', command: 'git apply --index p.patch' },
];

describe('run outcomes', () => {
  it('factory show lists fallbacks, applies and the proposal in order, nothing else', () => {
    expect(outcomeLines(events)).toEqual([
      'build: provider down (503 overloaded), relaunched on openrouter/b',
      'not applied: arm 2 not applied: npm test failed on HEAD',
      'applied: applied arm 1 (p.patch) with git apply --index — review and commit it',
      'proposed: git apply --index p.patch',
    ]);
  });

  it('the headless log says an apply and a fallback; the result events are stdout\'s, not the log\'s', () => {
    const format = createLogFormatter();
    expect(events.map(format)).toEqual([
      '[aaaa0001] build: provider down (503 overloaded) — relaunching on openrouter/b in the same session',
      '[aaaa0001] build (agent, attempt 1/3): OK in 1.0 s',
      '[aaaa0001] arm 2 not applied: npm test failed on HEAD',
      '[aaaa0001] applied arm 1 (p.patch) with git apply --index — review and commit it',
      undefined,
    ]);
  });
});
