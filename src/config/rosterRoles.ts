// The roles a roster may configure: exactly those the workflows run. A role the workflows do not know is a typo
// (`bulider:`) that would otherwise be accepted and leave the real role on pi's default model, so it is refused
// with the nearest known name — and, when that role is absent from the roster, the motif says what lacks it.
import { KNOWN_ROLES } from './rosterVocabulary.js';

/**
 * Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two neighbours each cost
 * one (`bulider` → `builder` is one swap, which plain Levenshtein counts as two).
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const row = rows[i]!;
      const above = rows[i - 1]!;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate nearest to `name`, if it is near enough to be the name meant: at most a third of the longer
 * name's letters apart (two edits for a word of six letters), ties to the first candidate.
 */
export function nearestName(name: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (
      distance <= Math.max(1, Math.floor(Math.max(name.length, candidate.length) / 3)) &&
      (!best || distance < best.distance)
    )
      best = { name: candidate, distance };
  }
  return best?.name;
}

const KNOWN_ROLE_NAMES: readonly string[] = KNOWN_ROLES.map((r) => r.role);

/** The roles as the motif lists them: each with what runs it. */
function rolesLine(): string {
  return KNOWN_ROLES.map((r) => `${r.role} (${r.runBy})`).join(', ');
}

/**
 * The motif for the first role the workflows do not know, or undefined when every role is known. `file` is the
 * roster as the motif names it; `roles` the roster's role names in the order written.
 */
export function unknownRoleMotif(roles: readonly string[], file: string): string | undefined {
  const unknown = roles.filter((role) => !KNOWN_ROLE_NAMES.includes(role));
  const first = unknown[0];
  if (first === undefined) return undefined;
  const more =
    unknown.length > 1
      ? ` (and ${unknown.length - 1} more unknown role${unknown.length > 2 ? 's' : ''}: ${unknown.slice(1).join(', ')})`
      : '';
  const meant = nearestName(first, KNOWN_ROLE_NAMES);
  if (meant === undefined) return `unknown role ${first} in ${file}: the roles are ${rolesLine()}${more}`;
  const runBy = KNOWN_ROLES.find((r) => r.role === meant)!.runBy;
  // The role meant, when the roster lacks it, runs today on pi's default model and the role's default tools.
  const lacking = roles.includes(meant) ? '' : ` (the roster has no ${meant}, which ${runBy} runs)`;
  return `unknown role ${first} in ${file}: did you mean ${meant}?${lacking}${more}`;
}
