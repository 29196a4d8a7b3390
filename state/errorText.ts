/** A failure as one line for a status line or a diff view: whitespace folded, never empty. */
export function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}
