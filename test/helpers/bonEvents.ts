// A realistic best-of-3 as the core emits it (check → prime → arm_1..3 → harvest): arm_1 green and cheap,
// arm_2 red on a failing `npm test` gate, arm_3 green and dearer; every arm's patch harvested; the
// ranking arm_1, arm_3, arm_2. Cut into named stages so a test can stop mid-run (arm_3 running…).

import type { ArmRank, RunEvent } from '../../src/contract/events.js';

export const BON_ADW = 'b0b0b0b0';
export const T0 = 1_700_000_000_000;
export const BON_DIR = `adws/adw_data/bon/${BON_ADW}`;

type Payload<T extends RunEvent['type']> = Omit<Extract<RunEvent, { type: T }>, 'type' | 'adwId' | 'ts'>;

/** One event of the fixture run, `at` milliseconds after T0. */
export function ev<T extends RunEvent['type']>(type: T, at: number, payload: Payload<T>, adwId = BON_ADW): RunEvent {
  return { type, adwId, ts: T0 + at, ...payload } as unknown as RunEvent;
}

export const RED_MOTIF = '`npm test` exited 1: FAIL test/sum.test.js | 1 failing';

export const RANKING: ArmRank[] = [
  {
    arm: 1,
    phase: 'arm_1',
    model: 'scripted/fast',
    green: true,
    tokens: 1100,
    cost: 0.0021,
    seconds: 4,
    patchFile: `${BON_DIR}/arm-1.patch`,
    patchBytes: 1536,
  },
  {
    arm: 3,
    phase: 'arm_3',
    model: 'scripted/pricey',
    green: true,
    tokens: 1600,
    cost: 0.0034,
    seconds: 6,
    patchFile: `${BON_DIR}/arm-3.patch`,
    patchBytes: 2048,
  },
  {
    arm: 2,
    phase: 'arm_2',
    model: 'scripted/sloppy',
    green: false,
    motif: RED_MOTIF,
    tokens: 900,
    cost: 0.0018,
    seconds: 5.1,
    patchFile: `${BON_DIR}/arm-2.patch`,
    patchBytes: 800,
  },
];

function arm(k: number, start: number, model: string): RunEvent[] {
  return [
    ev('phase_started', start, { phase: `arm_${k}`, kind: 'agent' }),
    ev('attempt_started', start + 10, { phase: `arm_${k}`, attempt: 1, attempts: 2, sessionId: `clone-${k}`, model }),
  ];
}

function gates(k: number, at: number, testOk: boolean): RunEvent[] {
  return [
    ev('gate_result', at, { phase: `arm_${k}`, gate: 'changed_files', ok: true, seconds: 0.01 }),
    ev('gate_result', at + 10, {
      phase: `arm_${k}`,
      gate: 'npm test',
      ok: testOk,
      seconds: 1.2,
      ...(testOk ? {} : { motif: RED_MOTIF }),
    }),
  ];
}

function patch(k: number, at: number, bytes: number, files: string[]): RunEvent {
  return ev('arm_patch', at, { phase: `arm_${k}`, arm: k, patchFile: `${BON_DIR}/arm-${k}.patch`, bytes, files });
}

export const STAGES = {
  started: [
    ev('run_started', 0, {
      adwName: 'adw_bon',
      cwd: '/home/dev/payload',
      phases: [
        { name: 'check', kind: 'code', attempts: 1 },
        { name: 'prime', kind: 'agent', attempts: 1 },
        { name: 'arm_1', kind: 'agent', attempts: 2, arm: 1 },
        { name: 'arm_2', kind: 'agent', attempts: 2, arm: 2 },
        { name: 'arm_3', kind: 'agent', attempts: 2, arm: 3 },
        { name: 'harvest', kind: 'code', attempts: 1 },
      ],
    }),
    ev('phase_started', 5, { phase: 'check', kind: 'code' }),
    ev('phase_ok', 100, { phase: 'check', kind: 'code', attempt: 1, attempts: 1, seconds: 0.1, tokens: 0, cost: 0 }),
  ],
  primed: [
    ev('phase_started', 110, { phase: 'prime', kind: 'agent' }),
    ev('attempt_started', 120, {
      phase: 'prime',
      attempt: 1,
      attempts: 1,
      sessionId: 'primer-1',
      model: 'scripted/base',
    }),
    ev('activity', 500, { phase: 'prime', activity: { kind: 'tool_start', tool: 'read', detail: 'specs/sum.md' } }),
    ev('usage', 3000, { phase: 'prime', tokens: 2100, cost: 0.005 }),
    ev('phase_ok', 3300, {
      phase: 'prime',
      kind: 'agent',
      attempt: 1,
      attempts: 1,
      seconds: 3.2,
      tokens: 2100,
      cost: 0.005,
      sessionId: 'primer-1',
    }),
  ],
  arm1: [
    ...arm(1, 3400, 'scripted/fast'),
    ev('activity', 3600, { phase: 'arm_1', activity: { kind: 'tool_start', tool: 'edit', detail: 'src/sum.js' } }),
    ev('usage', 4000, { phase: 'arm_1', tokens: 600, cost: 0.0012 }),
    ev('activity', 5000, { phase: 'arm_1', activity: { kind: 'text', text: 'Done: sum handles negatives.' } }),
    ev('usage', 6000, { phase: 'arm_1', tokens: 1100, cost: 0.0021 }),
    ...gates(1, 6100, true),
    ev('phase_ok', 7400, {
      phase: 'arm_1',
      kind: 'agent',
      attempt: 1,
      attempts: 2,
      seconds: 4,
      tokens: 1100,
      cost: 0.0021,
      sessionId: 'clone-1',
    }),
    patch(1, 7450, 1536, ['src/sum.js']),
  ],
  arm2: [
    ...arm(2, 7500, 'scripted/sloppy'),
    ev('activity', 8000, {
      phase: 'arm_2',
      activity: { kind: 'tool_start', tool: 'write', detail: 'test/sum.test.js' },
    }),
    ev('usage', 11000, { phase: 'arm_2', tokens: 900, cost: 0.0018 }),
    ...gates(2, 11100, false),
    ev('phase_failed', 12600, {
      phase: 'arm_2',
      kind: 'agent',
      attempts: 2,
      motif: RED_MOTIF,
      failure: 'gate',
      seconds: 5.1,
      tokens: 900,
      cost: 0.0018,
      sessionId: 'clone-2',
    }),
    patch(2, 12650, 800, ['src/sum.js', 'test/sum.test.js']),
  ],
  /** arm_3 running: two turns in, a tool call under way. */
  arm3running: [
    ...arm(3, 12700, 'scripted/pricey'),
    ev('usage', 14000, { phase: 'arm_3', tokens: 700, cost: 0.0015 }),
    ev('usage', 16000, { phase: 'arm_3', tokens: 1300, cost: 0.0027 }),
    ev('activity', 16500, { phase: 'arm_3', activity: { kind: 'tool_start', tool: 'bash', detail: 'npm test' } }),
  ],
  arm3done: [
    ev('usage', 17500, { phase: 'arm_3', tokens: 1600, cost: 0.0034 }),
    ...gates(3, 17600, true),
    ev('phase_ok', 18700, {
      phase: 'arm_3',
      kind: 'agent',
      attempt: 1,
      attempts: 2,
      seconds: 6,
      tokens: 1600,
      cost: 0.0034,
      sessionId: 'clone-3',
    }),
    patch(3, 18750, 2048, ['src/sum.js', 'README.md']),
  ],
  harvested: [
    ev('phase_started', 18800, { phase: 'harvest', kind: 'code' }),
    ev('harvest', 18900, {
      ranking: RANKING,
      winner: 1,
      primer: { tokens: 2100, cost: 0.005, sessionId: 'primer-1' },
      harvestFile: `${BON_DIR}/harvest.json`,
      applyCommand: `factory apply ${BON_ADW}`,
    }),
    ev('phase_ok', 18950, {
      phase: 'harvest',
      kind: 'code',
      attempt: 1,
      attempts: 1,
      seconds: 0.15,
      tokens: 0,
      cost: 0,
    }),
    ev('run_finished', 19000, {
      exit: 0,
      seconds: 19,
      tokens: 2100 + 1100 + 900 + 1600,
      cost: 0.005 + 0.0021 + 0.0018 + 0.0034,
    }),
  ],
} as const satisfies Record<string, readonly RunEvent[]>;

export type Stage = keyof typeof STAGES;
const ORDER: Stage[] = ['started', 'primed', 'arm1', 'arm2', 'arm3running', 'arm3done', 'harvested'];

/** Every event of the fixture run up to and including `stage`. */
export function eventsThrough(stage: Stage): RunEvent[] {
  return ORDER.slice(0, ORDER.indexOf(stage) + 1).flatMap((name) => [...STAGES[name]]);
}

/** A patch as `git diff --cached --binary` writes it, long enough to scroll. */
export function samplePatch(lines = 40): string {
  const body = Array.from({ length: lines }, (_, index) =>
    index % 2 === 0 ? `+const added${index} = ${index};` : ` context ${index}`,
  );
  return [
    'diff --git a/src/sum.js b/src/sum.js',
    'index 3b18e51..a8c0f2d 100644',
    '--- a/src/sum.js',
    '+++ b/src/sum.js',
    '@@ -1,3 +1,4 @@',
    '-export const sum = (a, b) => a - b;',
    '+export const sum = (a, b) => a + b;',
    ...body,
    '',
  ].join('\n');
}
