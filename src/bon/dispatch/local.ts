// The dispatcher that runs arms on this machine: a worktree of its own for each (at once), or the user's tree one
// arm after another (--in-place). The arm works for the run only through its events: it is handed a sink, never
// the run, so what it tells the board, the trace and resume is what its events say — as it would be from afar.
import type { RunEvent } from '../../contract/events.js';
import { RunEvents } from '../../engine/runEvents.js';
import { workArm, type ArmPlaceOf } from '../arm.js';
import type { BonSession } from '../session.js';
import type { ArmDispatcher, ArmJob, ArmSpec } from './port.js';

/** An arm's way to its run: events into its dispatcher's sink, and whether the user interrupted the run. */
class ArmEvents extends RunEvents {
  constructor(
    readonly adwId: string,
    private readonly interrupt: AbortSignal,
    readonly emit: (event: RunEvent) => void,
  ) {
    super();
  }

  get interrupted(): boolean {
    return this.interrupt.aborted;
  }
}

export class LocalArmDispatcher implements ArmDispatcher {
  constructor(
    private readonly session: BonSession,
    private readonly placeOf: ArmPlaceOf,
  ) {}

  dispatch(spec: ArmSpec, events: (event: RunEvent) => void): ArmJob {
    const { session } = this;
    // Its stop: the session's for this arm (`a` on the board, a cap, a race policy, the user's interrupt).
    const signal = session.armSignal(spec.arm);
    const outcome = workArm(session, new ArmEvents(spec.adwId, session.run.signal, events), spec, this.placeOf, signal);
    return { abort: () => session.abortArm(spec.arm), outcome };
  }
}
