// The bon store: the bon reducers (./reducer.ts) wrapped in a zustand vanilla store for the bon screen. The
// bon state (./state.ts) and what the views derive from it (./selectors.ts) are re-exported here, so a caller
// imports the bon store from one place.

import { createStore, type StoreApi } from 'zustand/vanilla';
import type { RunEvent } from '../../src/contract/events.js';
import { reduceBonEvent, reduceBonUi, type BonAction, type BonEffect } from './reducer.js';
import { initialBonState, type BonState } from './state.js';
import type { RunUiState } from '../run/state.js';

export * from './state.js';
export * from './selectors.js';
export { reduceBonEvent, reduceBonUi, type BonAction, type BonEffect, type BonStep } from './reducer.js';

export interface BonActions {
  /** Fold one core event into the state. */
  apply(event: RunEvent): void;
  /** Replace part of the run UI state (the Ctrl-C / q machine shared with the run screen). */
  setUi(patch: Partial<RunUiState>): void;
  /** Fold one board action (keys, patch text read); returns what the core must do for it, when anything. */
  dispatch(action: BonAction): BonEffect | undefined;
}

export type BonStoreState = BonState & BonActions;
export type BonStore = StoreApi<BonStoreState>;

export function createBonStore(initial: BonState = initialBonState()): BonStore {
  return createStore<BonStoreState>()((set, get) => ({
    ...initial,
    apply: (event) => set((state) => reduceBonEvent(state, event)),
    setUi: (patch) => set((state) => ({ ui: { ...state.ui, ...patch } })),
    dispatch: (action) => {
      const { state, effect } = reduceBonUi(get(), action);
      set(state);
      return effect;
    },
  }));
}
