// The cockpit's exit codes: one table, read by the entry, the runner, the front ends (TUI, headless), the trace
// store and the help. The README's table is written from it (test/unit/exit-table.test.ts keeps them equal), and no
// other file spells an exit code as a number (the same test reads the sources).

/** What a command or a run ended as → its exit code. */
export const EXIT = {
  green: 0,
  failed: 1,
  infrastructure: 2,
  budget: 3,
  interrupted: 130,
} as const;

export type ExitKind = keyof typeof EXIT;
export type ExitCode = (typeof EXIT)[ExitKind];

/** What each exit code means, as the README's table says it. */
export const EXIT_MEANING: Readonly<Record<ExitKind, string>> = {
  green: 'green',
  failed: 'the workflow failed (a phase failed for good)',
  infrastructure:
    'infrastructure or usage (pi missing, bad flags, invalid roster, a broken node, a missing or rejected key, a check refused: dirty tree, missing spec; an apply refused: a red arm without `--force`, an arm that tried something or went beyond the spec without `--yes`)',
  budget:
    "budget: a spend cap stopped the run (or no arm was green because caps ended them), or a forecast above the run's cap or `bon.confirm_above` without `--yes`",
  interrupted: 'interrupted',
};

/** The kind an exit code stands for; anything unknown reads as a failure. */
export function exitKindOf(code: number): ExitKind {
  const found = (Object.keys(EXIT) as ExitKind[]).find((kind) => EXIT[kind] === code);
  return found ?? 'failed';
}

/** The table as Markdown (the README's "Exit codes"). */
export function exitTable(): string {
  const rows = (Object.keys(EXIT) as ExitKind[]).map((kind) => `| ${EXIT[kind]} | ${EXIT_MEANING[kind]} |`);
  return ['| exit | meaning |', '|---|---|', ...rows].join('\n');
}
