// The run store: the run reducer (./reducer.ts) wrapped in a zustand vanilla store for the Ink views. The
// state's shapes (runState.ts) and what views derive from it (runSelectors.ts) are re-exported here, so a
// caller imports the run store from one place.

import { createStore, type StoreApi } from 'zustand/vanilla';
import type { RunEvent } from '../../src/contract/events.js';
import { reduceRun } from './reducer.js';
import { initialRunState, type RunState, type RunUiState } from './state.js';

export * from './state.js';
export { reduceRun } from './reducer.js';
export { currentPhaseOf, elapsedSeconds, isLive, phaseSeconds, sumPhases } from './selectors.js';

export interface RunActions {
  /** Fold one core event into the state. */
  apply(event: RunEvent): void;
  /** Replace part of the UI-side state (used by the run screen's intents, runIntents.ts). */
  setUi(patch: Partial<RunUiState>): void;
}

export type RunStoreState = RunState & RunActions;
export type RunStore = StoreApi<RunStoreState>;

export function createRunStore(initial: RunState = initialRunState()): RunStore {
  return createStore<RunStoreState>()((set) => ({
    ...initial,
    apply: (event) => set((state) => reduceRun(state, event)),
    setUi: (patch) => set((state) => ({ ui: { ...state.ui, ...patch } })),
  }));
}
