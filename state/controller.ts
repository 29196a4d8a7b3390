// The controller shapes the core implements (src/tui/), and the intents of every screen, in one import. Each
// screen's intents live in their own module (run/intents.ts, home/intents.ts, bon/intents.ts; the doctor's are in
// doctor/store.ts); this file only gathers them, and imports nothing that imports it.

export { dispatchRunIntent, runModeOf, STATUS_ABORTING, STATUS_CONFIRM_QUIT, STATUS_QUITTING } from './run/intents.js';
export type { RunController, RunIntent, RunMode } from './run/intents.js';
export { dispatchHomeIntent, homeModeOf, loadRuns, runHomeEffect } from './home/intents.js';
export type { HomeController, HomeIntent, HomeMode } from './home/intents.js';
export type { RunRow, RunRowStatus } from './home/store.js';
export { bonModeOf, dispatchBonIntent, runBonEffect } from './bon/intents.js';
export type { BonController, BonIntent, BonMode, BonViewport } from './bon/intents.js';
