// JSONL line splitter for pi's stdout (json and rpc modes).
// Splits on LF (0x0A) only and strips one trailing CR. It works on bytes: UTF-8 never uses 0x0A inside a
// multi-byte sequence, so a character torn across two chunks is decoded whole once its line is complete,
// and U+2028/U+2029 (legal inside JSON strings, line breaks for generic readers) stay where they are.

export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

export interface LineSplitterOptions {
  /** A line longer than this is dropped (and counted), never buffered whole. */
  maxLineBytes?: number;
}

export class LineSplitter {
  private readonly maxLineBytes: number;
  /** Pieces of the current, not yet terminated line; joined once, when its LF arrives. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** True while skipping the rest of an oversized line, up to its LF. */
  private discarding = false;
  private oversizedCount = 0;
  private lineCount = 0;

  constructor({ maxLineBytes = DEFAULT_MAX_LINE_BYTES }: LineSplitterOptions = {}) {
    this.maxLineBytes = maxLineBytes;
  }

  /** Lines dropped because they exceeded maxLineBytes. */
  get oversized(): number {
    return this.oversizedCount;
  }

  /** Lines returned so far (empty lines are not returned and not counted). */
  get lines(): number {
    return this.lineCount;
  }

  /** Returns the lines completed by this chunk, without their LF / CRLF. */
  push(chunk: Buffer): string[] {
    const out: string[] = [];
    let start = 0;
    for (;;) {
      const lf = chunk.indexOf(LF, start);
      if (lf === -1) break;
      this.finishLine(chunk, start, lf, out);
      start = lf + 1;
    }
    if (start < chunk.length) this.keep(chunk, start);
    return out;
  }

  /** Flushes a torn last line (no LF at the end of the stream) and resets the splitter. */
  end(): string[] {
    const out: string[] = [];
    if (!this.discarding && this.pendingBytes > 0) this.emit(Buffer.concat(this.pending, this.pendingBytes), out);
    this.pending = [];
    this.pendingBytes = 0;
    this.discarding = false;
    return out;
  }

  private finishLine(chunk: Buffer, start: number, lf: number, out: string[]): void {
    if (this.discarding) {
      this.discarding = false; // the oversized line ends here; it was counted when detected
      return;
    }
    const tailBytes = lf - start;
    if (this.pendingBytes + tailBytes > this.maxLineBytes + 1) {
      // +1 tolerates the CR of a CRLF line whose content is exactly at the cap.
      this.dropPending();
      return;
    }
    if (this.pendingBytes === 0) {
      // Fast path: the whole line sits in this chunk, decode it in place without copying.
      this.emitRange(chunk, start, lf, out);
      return;
    }
    this.pending.push(chunk.subarray(start, lf));
    const line = Buffer.concat(this.pending, this.pendingBytes + tailBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.emit(line, out);
  }

  private keep(chunk: Buffer, start: number): void {
    if (this.discarding) return;
    const bytes = chunk.length - start;
    if (this.pendingBytes + bytes > this.maxLineBytes + 1) {
      this.dropPending();
      this.discarding = true;
      return;
    }
    // subarray shares memory with the chunk: no copy until the line completes.
    this.pending.push(chunk.subarray(start));
    this.pendingBytes += bytes;
  }

  private dropPending(): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.oversizedCount++;
  }

  private emit(line: Buffer, out: string[]): void {
    this.emitRange(line, 0, line.length, out);
  }

  private emitRange(buffer: Buffer, start: number, end: number, out: string[]): void {
    if (end > start && buffer[end - 1] === CR) end--;
    if (end - start > this.maxLineBytes) {
      this.oversizedCount++;
      return;
    }
    if (end === start) return;
    out.push(buffer.toString('utf8', start, end));
    this.lineCount++;
  }
}
