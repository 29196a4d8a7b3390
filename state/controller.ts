// The controller shapes the core implements (src/tui/), and the intents of every screen, in one import. Each
// screen's intents live in their own module (runIntents.ts, homeIntents.ts, bonIntents.ts; the doctor's are in
// doctorStore.ts); this file only gathers them, and imports nothing that imports it.

export { dispatchRunIntent, runModeOf, STATUS_ABORTING, STATUS_CONFIRM_QUIT, STATUS_QUITTING } from './runIntents.js';
export type { RunController, RunIntent, RunMode } from './runIntents.js';
export { dispatchHomeIntent, homeModeOf, loadRuns, runHomeEffect } from './homeIntents.js';
export type { HomeController, HomeIntent, HomeMode } from './homeIntents.js';
export type { RunRow, RunRowStatus } from './homeStore.js';
export { bonModeOf, dispatchBonIntent, runBonEffect } from './bonIntents.js';
export type { BonController, BonIntent, BonMode, BonViewport } from './bonIntents.js';
