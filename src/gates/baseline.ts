// A gate red on HEAD before any agent worked (best-of-N's baseline), and whether an arm's red run of it is the same
// failure. "Same" is read from the runner's own failure lines: an arm is excused only when it fails nothing new and
// in no new way (every failure line it prints was printed on HEAD, and it ended the same way). So a test suite that
// is red on HEAD because the spec's test cannot even load its module does not excuse an arm whose code loads and
// then fails an assertion: that failure is new, it is the arm's. An arm that turns the gate green gets the credit.
import { failureLines, type GateReport } from './judges.js';

/** What a red run of a gate said, normalised so that two trees' runs compare. */
export interface GateSignature {
  /** How it ended (`exited 1`, `timed out…`): the motif's head. */
  ending: string;
  lines: ReadonlySet<string>;
}

/** Paths of the tree it ran in and timings say nothing about the failure: they are blanked before comparing. */
function normalise(line: string, tree: string): string {
  return line
    .split(tree)
    .join('<tree>')
    .replace(/\b\d+(\.\d+)?\s?(ms|s)\b/g, '<t>')
    .replace(/\s+/g, ' ');
}

export function gateSignature(report: GateReport, tree: string): GateSignature {
  const motif = report.motif ?? '';
  const ending = (/^`[^`]*` ([^:]+)/.exec(motif)?.[1] ?? motif).trim();
  const output = report.outputTail ?? '';
  let lines = failureLines(output);
  // A runner that names no failure: its last lines stand for it.
  if (lines.length === 0)
    lines = output
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(-3);
  return { ending, lines: new Set(lines.map((l) => normalise(l, tree))) };
}

/** Whether `arm` is the failure HEAD already had: the same ending, no failure line HEAD did not print. */
export function sameFailure(head: GateSignature, arm: GateSignature): boolean {
  if (head.ending !== arm.ending) return false;
  for (const line of arm.lines) if (!head.lines.has(line)) return false;
  return true;
}
