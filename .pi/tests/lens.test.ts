// An arm's lens, as pure functions: the payload pi sends names the primer's folder wherever it named the arm's, with
// the primer's cache-routing key; a tool call naming the primer's folder is taken back to the arm's before the fence
// judges it. Whole paths only: a longer name that merely begins like one is left alone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lensOf, presentPayload, realInput } from '../lib/lens.js';
import { decideToolCall, parseRules } from '../extensions/damage-control.js';

const RUN = '/tmp/factory-worktrees/repo-0123456789/ab12cd34';
const PRIME = `${RUN}/prime`;
const OWN = `${RUN}/arm_2`;
const env = (value: unknown) => ({ FACTORY_LENS: typeof value === 'string' ? value : JSON.stringify(value) });

describe('the lens of an arm', () => {
  it('is read from FACTORY_LENS: an absolute folder to show, an optional key; none for the primer itself', () => {
    expect(lensOf(env({ shown: PRIME, key: 'primer-id' }), OWN)).toEqual({
      shown: PRIME,
      real: [OWN],
      key: 'primer-id',
    });
    expect(lensOf(env({ shown: PRIME }), OWN)).toEqual({ shown: PRIME, real: [OWN] });
    expect(lensOf(env({ shown: PRIME }), PRIME)).toBeUndefined();
    expect(lensOf(env({ shown: 'relative/prime' }), OWN)).toBeUndefined();
    expect(lensOf(env('not json'), OWN)).toBeUndefined();
    expect(lensOf({}, OWN)).toBeUndefined();
  });

  it('names the folder also as the file system resolves it (a link on the way, as /tmp on macOS)', () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-lens-')));
    try {
      fs.mkdirSync(path.join(base, 'real-arm'));
      fs.symlinkSync(path.join(base, 'real-arm'), path.join(base, 'arm'));
      expect(lensOf(env({ shown: PRIME }), path.join(base, 'arm'))?.real).toEqual([
        path.join(base, 'arm'),
        path.join(base, 'real-arm'),
      ]);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  it("shows the model the primer's folder everywhere in the payload, and the primer's routing key", () => {
    const lens = lensOf(env({ shown: PRIME, key: 'k'.repeat(70) }), OWN)!;
    const payload = {
      model: 'alpha',
      prompt_cache_key: 'the-arm-session',
      messages: [
        { role: 'system', content: `Current working directory: ${OWN}` },
        { role: 'tool', content: [{ type: 'text', text: `${OWN}\n${OWN}/src/a.js and ${OWN}_old and ${OWN}2/x` }] },
      ],
      stream: true,
    };
    const shown = presentPayload(payload, lens) as typeof payload;
    expect(shown.messages[0]!.content).toBe(`Current working directory: ${PRIME}`);
    // A longer name that only begins like the arm's folder is another folder.
    expect((shown.messages[1]!.content as { text: string }[])[0]!.text).toBe(
      `${PRIME}\n${PRIME}/src/a.js and ${OWN}_old and ${OWN}2/x`,
    );
    expect(shown.prompt_cache_key).toBe('k'.repeat(64)); // pi's own bound on the key
    expect(shown.stream).toBe(true);
    expect(payload.messages[0]!.content).toBe(`Current working directory: ${OWN}`); // a copy: pi's own messages are untouched
    // No routing key in the payload: none is added.
    expect((presentPayload({ messages: [] }, lens) as Record<string, unknown>).prompt_cache_key).toBeUndefined();
  });

  it("takes every path the model wrote under the shown folder back to the arm's, in place", () => {
    const lens = lensOf(env({ shown: PRIME }), OWN)!;
    const input: Record<string, unknown> = {
      path: `${PRIME}/src/a.js`,
      edits: [{ oldText: `see ${PRIME}/b`, newText: 'x' }],
      other: `${PRIME}-copy/z`,
    };
    realInput(input, lens);
    expect(input).toEqual({
      path: `${OWN}/src/a.js`,
      edits: [{ oldText: `see ${OWN}/b`, newText: 'x' }],
      other: `${PRIME}-copy/z`,
    });
    const bash: Record<string, unknown> = { command: `cd ${PRIME} && cat "${PRIME}/specs/x.md"`, timeout: 5 };
    realInput(bash, lens);
    expect(bash).toEqual({ command: `cd ${OWN} && cat "${OWN}/specs/x.md"`, timeout: 5 });
  });

  it("so the fence lets a shown path through (the arm's own tree) and still refuses the others'", () => {
    const rules = parseRules('bash:\n  deny: []\npaths:\n  protected: []\n', 'rules');
    if (!rules.ok) throw new Error(rules.error);
    const lens = lensOf(env({ shown: PRIME }), OWN)!;
    const fenced = ['/home/u/repo', RUN];
    const read = { path: `${PRIME}/specs/x.md` };
    realInput(read, lens);
    expect(decideToolCall(rules.rules, 'read', read, OWN, { fenced })).toEqual({ action: 'allow' });
    const other = { path: `${RUN}/arm_1/specs/x.md` };
    realInput(other, lens);
    expect(decideToolCall(rules.rules, 'read', other, OWN, { fenced })).toMatchObject({ action: 'deny' });
  });
});
