// A run ready to execute, as the entry and the front ends receive it from any command.
import { redactDeep } from '../contract/redact.js';
import type { Phase, ResumeOptions, Run } from '../engine/runner.js';
import type { Workspace } from './workspace.js';
import type { BonSession } from '../bon/session.js';

/** What every prepared run has; the front end branches on `kind`. */
interface PreparedBase {
  run: Run;
  phases: Phase[];
  workspace: Workspace;
  /** Set for `factory resume`: what the earlier life of the run already did. */
  resume?: ResumeOptions;
  /** What goes to stdout once the run is over (the disposed envelope), if anything; already masked. */
  output(): unknown;
  /** After the run (headless): a follow-up that may change the exit code (bon --apply applies the winner). */
  finish?(exit: number, report?: (line: string) => void): Promise<number>;
  close(): Promise<void>;
}

/** A run of phases (prompt, build, a resumed run): the run screen or the headless log. */
export interface PreparedFlow extends PreparedBase {
  kind: 'flow';
}

/** Best-of-N: the arms board, with the session its keys act on (abort or clone an arm, read a patch, apply). */
export interface PreparedBon extends PreparedBase {
  kind: 'bon';
  session: BonSession;
}

export type PreparedRun = PreparedFlow | PreparedBon;

export function preparedRun(
  ws: Workspace,
  run: Run,
  phases: Phase[],
  output: () => unknown,
  close: () => Promise<void> = async () => {},
): PreparedFlow {
  // Every event is masked before the screen, the logs, --json or the trace see it (Run.filter uses run.redact),
  // and so is every artefact the run writes through run.redact (harness traces and harvest.json at the close).
  run.redact = (value) => redactDeep(ws.redact, value);
  return { kind: 'flow', run, phases, workspace: ws, output: () => redactDeep(ws.redact, output()), close };
}
