import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/contract/events.js';
import { createLogFormatter, headlessListener } from '../../src/headless/log.js';

const base = { adwId: 'a1b2c3d4', ts: 0 };
const plan: RunEvent = {
  ...base,
  type: 'run_started',
  adwName: 'adw_prompt',
  cwd: '/repo',
  phases: [
    { name: 'prompt', kind: 'agent', attempts: 3 },
    { name: 'dispose', kind: 'code', attempts: 1 },
  ],
};

describe('headless log lines', () => {
  it('follows the SPEC shapes', () => {
    const format = createLogFormatter();
    expect(format(plan)).toBe('[a1b2c3d4] adw_prompt in /repo — phases: prompt → dispose');
    expect(
      format({
        ...base,
        type: 'attempt_failed',
        phase: 'prompt',
        attempt: 1,
        attempts: 3,
        motif: 'envelope refused: no JSON object',
        willRetry: true,
      }),
    ).toBe('[a1b2c3d4] prompt (agent, attempt 1/3): failed — envelope refused: no JSON object');
    expect(
      format({
        ...base,
        type: 'phase_ok',
        phase: 'prompt',
        kind: 'agent',
        attempt: 2,
        attempts: 3,
        seconds: 12.34,
        tokens: 1,
        cost: 0.1,
      }),
    ).toBe('[a1b2c3d4] prompt (agent, attempt 2/3): OK in 12.3 s');
    expect(format({ ...base, type: 'run_finished', exit: 0, seconds: 1, tokens: 5, cost: 0.01234 })).toBe(
      '[a1b2c3d4] run green — total cost ~$0.0123',
    );
    expect(
      format({ ...base, type: 'run_finished', exit: 1, seconds: 1, tokens: 5, cost: 0.01, failedPhase: 'dispose' }),
    ).toBe('[a1b2c3d4] FAILED at phase dispose — run stopped');
    expect(format({ ...base, type: 'usage', phase: 'prompt', tokens: 1, cost: 0 })).toBeUndefined();
    expect(
      format({
        ...base,
        type: 'gate_result',
        phase: 'gates',
        gate: 'npm test',
        ok: false,
        motif: '`npm test` exited 1: boom',
        seconds: 2.04,
      }),
    ).toBe('[a1b2c3d4] gates: ✗ npm test (2.0 s) — `npm test` exited 1: boom');
    expect(format({ ...base, type: 'gate_result', phase: 'gates', gate: 'changed_files', ok: true, seconds: 0 })).toBe(
      '[a1b2c3d4] gates: ✓ changed_files (0.0 s)',
    );
  });

  it('writes one JSON object per line with --json, nothing on stderr', () => {
    const out: string[] = [];
    const err: string[] = [];
    const listen = headlessListener(
      { stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) } },
      true,
    );
    listen(plan);
    listen({ ...base, type: 'usage', phase: 'prompt', tokens: 3, cost: 0.5 });
    expect(out.map((l) => JSON.parse(l).type)).toEqual(['run_started', 'usage']);
    expect(out.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    expect(err).toEqual([]);
  });
});
