// Error types that cross module boundaries. Each carries what the user needs to act on it in one line.

/** A failure of the agent harness (pi could not run, died, stalled, or its verdict refused the attempt). */
export class HarnessError extends Error {
  override readonly name = 'HarnessError';
  constructor(
    message: string,
    readonly sessionId: string,
    readonly evidence: { tokens?: number; cost?: number; stderrTail?: string; kind?: string } = {},
  ) {
    super(message);
  }
}

/** Bad usage or a broken installation: exit 2, one line, nothing written. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The installation cannot run the workflow (pi missing, node broken, resume from another folder): exit 2. */
export class InfrastructureError extends Error {
  override readonly name = 'InfrastructureError';
}

/** The user interrupted the run (Ctrl-C / SIGTERM): exit 130. */
export class InterruptedError extends Error {
  override readonly name = 'InterruptedError';
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** First line of a message, trimmed: motifs are one line. */
export function oneLine(text: string, max = 300): string {
  const first = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  const trimmed = first.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
}
