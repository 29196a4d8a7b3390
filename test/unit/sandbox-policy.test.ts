// pi's agent folder in an arm's sandbox: writable (pi locks its credentials there), what pi loads from read-only, and
// a folder someone named that is gone is never made again (a demo's agent folder, after its end, stayed behind).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { piAgentDir } from '../../src/sandbox/policy.js';

let scratch: string | undefined;
afterEach(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

describe("pi's agent folder in the sandbox", () => {
  it('is writable, and what pi loads from in it is read-only where it exists', () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-dir-'));
    fs.mkdirSync(path.join(scratch, 'extensions'));
    fs.writeFileSync(path.join(scratch, 'models.json'), '{}');
    expect(piAgentDir({ PI_CODING_AGENT_DIR: scratch })).toEqual({
      writable: [scratch],
      readOnly: [path.join(scratch, 'extensions'), path.join(scratch, 'models.json')],
    });
  });

  it('a named folder that is gone is not made again, and nothing of it is bound', () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-dir-'));
    const gone = path.join(scratch, 'demo', 'pi-agent');
    expect(piAgentDir({ PI_CODING_AGENT_DIR: gone })).toEqual({ writable: [], readOnly: [] });
    expect(fs.existsSync(path.join(scratch, 'demo'))).toBe(false);
  });

  it('the default folder under HOME is made, as pi itself does on first use', () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-home-'));
    expect(piAgentDir({ HOME: scratch }).writable).toEqual([path.join(scratch, '.pi', 'agent')]);
    expect(fs.statSync(path.join(scratch, '.pi', 'agent')).isDirectory()).toBe(true);
  });
});
