// Phases that run at once: a group of consecutive phases (best-of-N arms) started up to a limit at a time, the
// ones planned into the group while it runs (an arm added from the board) joining it. The runner decides what a
// phase is and how it runs; this decides only when each member starts and what the group's outcome is.

/** What the group reads of a phase (the runner's Phase has more). */
export interface GroupMember {
  name: string;
  optional?: boolean;
  /** `why`: where the limit comes from, for the line that says a member waits (`on this machine`, `--concurrency`). */
  parallel?: { group: string; limit: number; why?: string };
}

/** What the group reads of a phase's outcome. */
export interface MemberOutcome {
  status: 'ok' | 'failed' | 'infrastructure' | 'sent-back';
}

export interface GroupOutcome {
  /** The index of the first phase after the group (as `phases` reads once the group is done). */
  next: number;
  /** Why the run stops after the group, if it does. */
  stop?: 'infrastructure' | 'failed';
  failedPhase?: string;
}

/**
 * Runs the group that starts at `from` (consecutive phases with the same `parallel.group`), re-reading `phases`
 * whenever a slot frees. A red optional member is booked and the others go on; an infrastructure failure, a red
 * member that is not optional, or an interrupt starts no one new, lets those running end, and stops the run.
 */
export async function runGroup<P extends GroupMember>(
  run: { readonly interrupted: boolean },
  phases: readonly P[],
  from: number,
  start: (phase: P) => Promise<MemberOutcome>,
  /** Resolves when a phase is planned (an arm added from the board): a free slot must not wait for a member to end. */
  planned: () => Promise<void> = () => new Promise<void>(() => {}),
  /** Told once per member that cannot start yet because every slot is taken. */
  waiting: (phase: P) => void = () => {},
): Promise<GroupOutcome> {
  const group = phases[from]!.parallel!.group;
  const member = (p: P | undefined): boolean => p?.parallel?.group === group;
  const started = new Set<string>();
  const running = new Map<string, Promise<void>>();
  const told = new Set<string>();
  let stop: GroupOutcome['stop'];
  let failedPhase: string | undefined;
  for (;;) {
    if (!stop && !run.interrupted) {
      for (let j = from; member(phases[j]); j += 1) {
        const phase = phases[j]!;
        if (started.has(phase.name)) continue;
        if (running.size >= Math.max(1, phase.parallel!.limit)) {
          for (let k = j; member(phases[k]); k += 1) {
            const waiter = phases[k]!;
            if (started.has(waiter.name) || told.has(waiter.name)) continue;
            told.add(waiter.name);
            waiting(waiter);
          }
          break;
        }
        started.add(phase.name);
        const done = start(phase).then(
          (outcome) => {
            running.delete(phase.name);
            if (outcome.status === 'infrastructure' || (outcome.status === 'failed' && !phase.optional)) {
              stop ??= outcome.status === 'infrastructure' ? 'infrastructure' : 'failed';
              failedPhase ??= phase.name;
            }
          },
          () => {
            // runPhase books every failure itself; a throw here is the runner's own bug: stop, never hang.
            running.delete(phase.name);
            stop ??= 'infrastructure';
            failedPhase ??= phase.name;
          },
        );
        running.set(phase.name, done);
      }
    }
    if (running.size === 0) break;
    await Promise.race([...running.values(), planned()]);
  }
  let next = from;
  while (member(phases[next])) next += 1;
  if (run.interrupted) return { next, stop: 'failed', failedPhase: failedPhase ?? phases[from]!.name };
  return { next, stop, failedPhase };
}
