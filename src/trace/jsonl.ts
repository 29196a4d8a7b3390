// Reading append-only JSONL files incrementally. Lines are split on `\n` only (U+2028/U+2029 are legal inside
// JSON strings); a last line without its newline is still being written, or was torn by a crash: it is not
// consumed, so the next read picks it up once complete, and a torn one is simply never read.
import fs from 'node:fs';

export interface LineChunk {
  /** Complete lines after `from`, newline stripped (a trailing `\r` too). */
  lines: string[];
  /** Byte offset just after the last complete line: where the next read starts. */
  next: number;
  /** The file is shorter than `from`: it was replaced or truncated, the caller should start over. */
  shrunk: boolean;
}

/** The complete lines of `file` from byte `from`; a missing file reads as empty. */
export function readCompleteLines(file: string, from = 0): LineChunk {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return { lines: [], next: from, shrunk: false };
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size < from) return { lines: [], next: from, shrunk: true };
    if (size === from) return { lines: [], next: from, shrunk: false };
    const buf = Buffer.alloc(size - from);
    let read = 0;
    while (read < buf.length) {
      const n = fs.readSync(fd, buf, read, buf.length - read, from + read);
      if (n === 0) break;
      read += n;
    }
    const end = buf.subarray(0, read).lastIndexOf(0x0a);
    if (end < 0) return { lines: [], next: from, shrunk: false };
    const text = buf.subarray(0, end).toString('utf8');
    const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
    return { lines, next: from + end + 1, shrunk: false };
  } finally {
    fs.closeSync(fd);
  }
}

/** A JSON object line, or undefined for a blank, torn or foreign line. */
export function parseObjectLine(line: string): Record<string, unknown> | undefined {
  if (!line.trim()) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A session file's header (its first line), or undefined when it has none that reads. */
export function sessionHeader(file: string): Record<string, unknown> | undefined {
  try {
    const first = fs.readFileSync(file, 'utf8').split('\n', 1)[0] ?? '';
    const parsed = JSON.parse(first) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
