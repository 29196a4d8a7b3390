// Durations as people write them on a command line or in a roster (`90s`, `20m`, `1h30m`), read and written back.

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `20m`, `1h30m`, `1.5h`, `500ms` → milliseconds; undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const compact = text.trim().toLowerCase();
  if (compact === '') return undefined;
  let total = 0;
  let rest = compact;
  while (rest !== '') {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!match) return undefined;
    total += Number(match[1]) * UNITS[match[2]!]!;
    rest = rest.slice(match[0].length);
  }
  return total > 0 && Number.isFinite(total) ? Math.round(total) : undefined;
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
