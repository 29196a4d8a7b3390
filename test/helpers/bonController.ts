// A BonController that records every call it gets, for the board's tests (stores, views, spend keys): each intent
// the reducers accepted must reach it once. `readPatch` answers with what the test gives (a text, or a promise of one).
import type { BonController } from '../../state/controller.js';

export type RecordingBonController = BonController & { calls: string[] };

export function recordingBonController(readPatch: (arm: number) => string | Promise<string>): RecordingBonController {
  const calls: string[] = [];
  return {
    calls,
    abort: () => calls.push('abort'),
    quit: () => calls.push('quit'),
    abortArm: (k) => calls.push(`abortArm ${k}`),
    cloneArm: () => calls.push('cloneArm'),
    apply: (k) => calls.push(`apply ${k}`),
    raiseArm: (k) => calls.push(`raiseArm ${k}`),
    confirmFanOut: (yes) => calls.push(`confirmFanOut ${yes}`),
    steerArm: (k, text) => calls.push(`steerArm ${k} ${text}`),
    readPatch: (k) => {
      calls.push(`readPatch ${k}`);
      return readPatch(k);
    },
  };
}
