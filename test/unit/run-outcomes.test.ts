// Outcomes are events: the headless log prints them, `factory show` lists them from the trace.
import { describe, expect, it } from 'vitest';
import { attemptLines, outcomeLines } from '../../src/commands/runs.js';
import type { RunEvent } from '../../src/contract/events.js';
import { createLogFormatter } from '../../src/headless/log.js';

const base = { adwId: 'aaaa0001', ts: 1 };
const events: RunEvent[] = [
  { ...base, type: 'fallback', phase: 'build', from: 'openrouter/a', to: 'openrouter/b', reason: '503 overloaded' },
  { ...base, type: 'phase_ok', phase: 'build', kind: 'agent', attempt: 1, attempts: 3, seconds: 1, tokens: 1, cost: 0 },
  { ...base, type: 'apply', arm: 2, applied: false, line: 'arm 2 not applied: npm test failed on HEAD' },
  {
    ...base,
    type: 'apply',
    arm: 1,
    applied: true,
    line: 'applied arm 1 (p.patch) with git apply --index — review and commit it',
  },
  { ...base, type: 'proposal', command: 'factory apply aaaa0001' },
];

const harvest: RunEvent = {
  ...base,
  type: 'harvest',
  ranking: [
    {
      arm: 2,
      phase: 'arm_2',
      model: 'scripted/beta',
      green: true,
      tokens: 6700,
      cost: 0.0069,
      seconds: 2.6,
      patchBytes: 211,
    },
    {
      arm: 1,
      phase: 'arm_1',
      model: 'scripted/alpha',
      green: false,
      motif: '`node --test` exited 1',
      tokens: 6700,
      cost: 0.0207,
      seconds: 2.8,
      patchBytes: 207,
    },
  ],
  winner: 2,
  primer: { tokens: 6000, cost: 0.0186 },
  harvestFile: 'adws/adw_data/bon/aaaa0001/harvest.json',
  applyCommand: 'factory apply aaaa0001',
};

describe('run outcomes', () => {
  it('factory show lists fallbacks, applies and the proposal in order, nothing else', () => {
    expect(outcomeLines(events)).toEqual([
      'build: fell back from openrouter/a to openrouter/b: 503 overloaded',
      'not applied: arm 2 not applied: npm test failed on HEAD',
      'applied: applied arm 1 (p.patch) with git apply --index — review and commit it',
      'proposed: factory apply aaaa0001',
    ]);
  });

  it('factory show of a bon run has its ranking, the primer line, the winner and the apply command', () => {
    expect(outcomeLines([harvest])).toEqual([
      'harvest — ranked (green first, then cheapest, then fastest):',
      '  #1 arm 2 scripted/beta — green — 6700 tokens, $0.0069, 2.6 s, patch 211 bytes',
      '  #2 arm 1 scripted/alpha — red: `node --test` exited 1 — 6700 tokens, $0.0207, 2.8 s, patch 207 bytes',
      'primer: 6k tokens, $0.0186, paid once — cold it would have been paid 2 times: ~6k more tokens',
      'winner: arm 2 — apply with: factory apply aaaa0001',
    ]);
  });

  it("the headless log says an apply and a fallback; the result events are stdout's, not the log's", () => {
    const format = createLogFormatter();
    expect(events.map(format)).toEqual([
      '[aaaa0001] build: fell back from openrouter/a to openrouter/b: 503 overloaded (same session)',
      '[aaaa0001] build (agent, attempt 1/3): OK in 1.0 s',
      '[aaaa0001] arm 2 not applied: npm test failed on HEAD',
      '[aaaa0001] applied arm 1 (p.patch) with git apply --index — review and commit it',
      undefined,
    ]);
  });
});

describe('attempt lines of `factory show`', () => {
  it('arms that ran at once: each gate under its own arm, whatever order the events came in', () => {
    const at = (type: string, fields: Record<string, unknown>) => ({ ...base, type, ...fields }) as unknown as RunEvent;
    const lines = attemptLines([
      at('run_started', {
        adwName: 'adw_bon',
        cwd: '/r',
        phases: [
          { name: 'arm_1', kind: 'agent', attempts: 1 },
          { name: 'arm_2', kind: 'agent', attempts: 1 },
        ],
      }),
      at('attempt_started', { phase: 'arm_1', attempt: 1, attempts: 1, model: 'a/x' }),
      at('attempt_started', { phase: 'arm_2', attempt: 1, attempts: 1, model: 'b/y' }),
      at('gate_result', { phase: 'arm_1', gate: 'npm test', ok: false, seconds: 1, motif: 'exited 1' }),
      at('gate_result', { phase: 'arm_2', gate: 'npm test', ok: true, seconds: 2 }),
      at('attempt_failed', { phase: 'arm_1', attempt: 1, attempts: 1, motif: 'exited 1', willRetry: false }),
    ]);
    // The red gate's motif is the attempt's: said once, on the gate's line.
    expect(lines).toEqual([
      'arm_1 attempt 1/1 on a/x',
      '  ✗ npm test (1.0 s) — exited 1',
      'arm_2 attempt 1/1 on b/y',
      '  ✓ npm test (2.0 s)',
    ]);
  });

  it("a build: the gates phase's results go under the build attempt they judge", () => {
    const at = (type: string, fields: Record<string, unknown>) => ({ ...base, type, ...fields }) as unknown as RunEvent;
    const lines = attemptLines([
      at('run_started', {
        adwName: 'adw_build',
        cwd: '/r',
        phases: [
          { name: 'build', kind: 'agent', attempts: 3 },
          { name: 'gates', kind: 'code', attempts: 1 },
        ],
      }),
      at('attempt_started', { phase: 'build', attempt: 1, attempts: 3 }),
      at('gate_result', { phase: 'gates', gate: 'npm test', ok: false, seconds: 1, motif: 'red' }),
      at('attempt_started', { phase: 'build', attempt: 2, attempts: 3 }),
      at('gate_result', { phase: 'gates', gate: 'npm test', ok: true, seconds: 1 }),
    ]);
    expect(lines).toEqual([
      'build attempt 1/3',
      '  ✗ npm test (1.0 s) — red',
      'build attempt 2/3',
      '  ✓ npm test (1.0 s)',
    ]);
  });

  it("a resumed run is one history: the killed life's unfinished attempts say so, the attempts are numbered across lives", () => {
    const at = (type: string, fields: Record<string, unknown>) => ({ ...base, type, ...fields }) as unknown as RunEvent;
    const phases = [
      { name: 'arm_1', kind: 'agent', attempts: 1 },
      { name: 'arm_2', kind: 'agent', attempts: 1 },
    ];
    const lines = attemptLines([
      at('run_started', { adwName: 'adw_bon', cwd: '/r', phases }),
      at('attempt_started', { phase: 'arm_1', attempt: 1, attempts: 1 }),
      at('attempt_started', { phase: 'arm_2', attempt: 1, attempts: 1 }),
      at('phase_ok', { phase: 'arm_1', kind: 'agent', attempt: 1, attempts: 1, seconds: 1, tokens: 1, cost: 0 }),
      // kill -9: arm 2 never ended; resumed, it runs again
      at('run_started', { adwName: 'adw_bon', cwd: '/r', phases }),
      at('attempt_started', { phase: 'arm_2', attempt: 1, attempts: 1 }),
      at('phase_ok', { phase: 'arm_2', kind: 'agent', attempt: 1, attempts: 1, seconds: 1, tokens: 1, cost: 0 }),
    ]);
    expect(lines).toEqual([
      'arm_1 attempt 1/1',
      'arm_2 attempt 1/1',
      '  ✗ killed: the cockpit stopped during it (resumed below)',
      'arm_2 attempt 2 (life 2)',
    ]);
  });
});
