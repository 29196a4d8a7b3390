// How the trace store (./store.ts) reads what SQLite threw: damage no retry fixes, and a one-line description.
export function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** Damage that no retry fixes: the file is not a database, or its pages are malformed. */
export function isCorruptionError(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT');
}

export function describe(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim();
  const code = codeOf(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
