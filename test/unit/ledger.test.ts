import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  appendLedger,
  readLedger,
  resumeRequiresCwd,
  sessionOrigin,
  type LedgerEntry,
} from '../../src/trace/ledger.js';

let dir: string;
let ledgerFile: string;
let sessionDir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-ledger-'));
  sessionDir = path.join(dir, 'sessions');
  ledgerFile = path.join(sessionDir, 'ledger.jsonl');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const entry = (id: string, cwd: string): LedgerEntry => ({
  session_id: id,
  cwd,
  model: 'p/m',
  phase: 'prompt',
  adw_id: 'abcd1234',
  declared_at: '2026-01-01T00:00:00.000Z',
});

describe('ledger', () => {
  it('appends one line per write, creating its folder', () => {
    appendLedger(ledgerFile, entry('s1', '/a'));
    appendLedger(ledgerFile, entry('s2', '/b'));
    expect(fs.readFileSync(ledgerFile, 'utf8').split('\n')).toHaveLength(3);
    expect(readLedger(ledgerFile).map((e) => e.session_id)).toEqual(['s1', 's2']);
  });

  it('skips a torn last line and foreign lines', () => {
    appendLedger(ledgerFile, entry('s1', '/a'));
    fs.appendFileSync(ledgerFile, '{"not":"a ledger line"}\n{"session_id":"s2","cwd":"/b","mod');
    expect(readLedger(ledgerFile).map((e) => e.session_id)).toEqual(['s1']);
  });

  it('starts a fresh line after a torn one, so the next entry is not lost with the fragment', () => {
    appendLedger(ledgerFile, entry('s1', '/a'));
    fs.appendFileSync(ledgerFile, '{"session_id":"torn","cw');
    appendLedger(ledgerFile, entry('s2', '/b'));
    expect(readLedger(ledgerFile).map((e) => e.session_id)).toEqual(['s1', 's2']);
  });

  it('reads nothing from a missing ledger', () => {
    expect(readLedger(path.join(dir, 'none.jsonl'))).toEqual([]);
  });

  it('finds a session origin in the ledger (last line wins), else in the session header', () => {
    appendLedger(ledgerFile, entry('s1', '/first'));
    appendLedger(ledgerFile, entry('s1', '/second'));
    expect(sessionOrigin('s1', { ledgerFile, sessionDir })).toEqual({ known: true, cwd: '/second', source: 'ledger' });
    fs.writeFileSync(
      path.join(sessionDir, '2026-01-01T00-00-00-000Z_s9.jsonl'),
      `${JSON.stringify({ type: 'session', id: 's9', cwd: '/from-header' })}\n`,
    );
    expect(sessionOrigin('s9', { ledgerFile, sessionDir })).toEqual({
      known: true,
      cwd: '/from-header',
      source: 'session-file',
    });
    expect(sessionOrigin('nope', { ledgerFile, sessionDir })).toEqual({ known: false });
  });

  it('allows a first attempt and a resume from the birth folder, refuses any other folder', () => {
    expect(resumeRequiresCwd('new', '/anywhere', { ledgerFile, sessionDir })).toEqual({ allowed: true });
    appendLedger(ledgerFile, entry('s1', '/repo'));
    expect(resumeRequiresCwd('s1', '/repo', { ledgerFile, sessionDir })).toEqual({ allowed: true });
    const refused = resumeRequiresCwd('s1', '/elsewhere', { ledgerFile, sessionDir });
    expect(refused).toMatchObject({ allowed: false, bornIn: '/repo' });
    expect(refused.allowed === false && refused.motif).toMatch(/born in \/repo; resume it from there/);
  });
});
