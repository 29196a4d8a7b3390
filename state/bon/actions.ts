// What the bon board can ask (an action: a key, a patch text read) and what an accepted action asks of the core (an
// effect, run by the screen's intents on the controller). Types only: the reducer (./reducer.ts) gives them meaning.

export type BonAction =
  | { type: 'select'; by: number }
  | { type: 'open_diff' }
  | { type: 'diff_loaded'; arm: number; text: string }
  | { type: 'diff_failed'; arm: number; message: string }
  | { type: 'scroll'; by: number; page: number }
  | { type: 'scroll_to'; to: 'top' | 'bottom'; page: number }
  | { type: 'close_diff' }
  | { type: 'abort_arm' }
  | { type: 'confirm_abort' }
  | { type: 'cancel_abort' }
  | { type: 'clone' }
  | { type: 'ask_apply' }
  | { type: 'cancel_apply' }
  | { type: 'confirm_apply' }
  | { type: 'raise_arm' }
  | { type: 'answer_fanout'; yes: boolean }
  | { type: 'steer_open' }
  | { type: 'steer_input'; text: string }
  | { type: 'steer_erase' }
  | { type: 'steer_send' }
  | { type: 'steer_cancel' }
  | { type: 'compare_open'; kind: 'overlap' | 'side' }
  | { type: 'compare_loaded'; texts: Record<number, string> }
  | { type: 'compare_failed'; message: string }
  | { type: 'compare_next' };

/** What the core must do for an accepted board action. */
export type BonEffect =
  /** Read arm `arm`'s harvested patch for the diff view. */
  | { type: 'read_patch'; arm: number }
  | { type: 'abort_arm'; arm: number }
  | { type: 'clone_arm' }
  /** Verify then apply arm `arm`'s patch. */
  | { type: 'apply'; arm: number }
  /** The arm paused at its cap gets as much again. */
  | { type: 'raise_arm'; arm: number }
  | { type: 'answer_fanout'; yes: boolean }
  /** The user's message into the arm's live session (pi `steer`). */
  | { type: 'steer'; arm: number; text: string }
  /** Read these arms' patches for the overlap or the side-by-side view. */
  | { type: 'read_patches'; arms: number[] };
