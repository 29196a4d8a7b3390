// The scripted model's wire (./server.ts): JSON replies, request bodies, and the pieces a streamed answer is cut into.
import type { IncomingMessage, ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, payload: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(payload));
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export function splitEvery(text: string, size: number): string[] {
  const pieces: string[] = [];
  // Split on code points so a surrogate pair never straddles two deltas.
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

/** Words with their trailing whitespace: one delta per word for slow streams. */
export function splitWords(text: string): string[] {
  const pieces = text.match(/\S+\s*|\s+/g);
  return pieces ?? [];
}
