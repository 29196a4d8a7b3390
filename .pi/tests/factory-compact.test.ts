import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBudgetServer } from '../../src/bon/spend/budgetServer.js';
import { SpendWatch } from '../../src/bon/spend/watch.js';
import { readStream } from '../../src/pi/stream.js';
import { call, contentText, say } from '../../src/scripted/tape.js';
import { runPiJson, startRig, type Rig } from '../../test/helpers/rig.js';
import {
  BLOCK_CLOSE,
  BLOCK_OPEN,
  LAST_WORD_CAP,
  MISSION_CAP,
  addFileOps,
  carryForward,
  fileSections,
  keep,
  nodeIdentity,
  readCheckpoint,
  writeBlock,
  writeCheckpoint,
  type Carried,
  type LooseMessage,
} from '../lib/checkpoint.js';
import { NARRATOR_ROLE, narratorAsk, tallyNote } from '../extensions/factory-compact.js';
import { makeNodeProject, nodeEnv, runNode, type NodeProject } from './helpers/node-rig.js';
import { sessionLines } from './helpers/session-file.js';

const ENV = {
  FACTORY_PHASE: 'build',
  FACTORY_ROLE: 'builder',
  FACTORY_ADW_ID: '9f2e4a10',
  FACTORY_ENVELOPE_SCHEMA: '/x/schemas/BuildEnvelope.json',
};
// An ask with markdown titles of its own and characters a paraphrase would lose.
const MISSION =
  '### mission\nAdd a word counter to the status bar.\n### contract\nCall `report_phase` — alone, last, once — with {status, changed_files}.';
const CORRECTION = 'Your last answer failed validation: 2 red tests in apps/plume.\nReport again, only the envelope.';
const NOFILES = { read: [], modified: [] };
const whole = (text: string) => ({ text, total: text.length });
const who = nodeIdentity(ENV)!;

/** The fenced form of a runner text in a block, as the model reads it. */
function slot(name: 'mission' | 'last-word', text: string): string {
  return `<!-- [FACTORY:${name} length=${text.length}] -->\n${text}\n<!-- [/FACTORY:${name}] -->`;
}

describe('checkpoint', () => {
  it('reads the node identity, and nothing outside a factory node', () => {
    expect(who).toEqual({ phase: 'build', role: 'builder', run: '9f2e4a10', gate: 'BuildEnvelope' });
    expect(nodeIdentity({ FACTORY_PHASE: ' plan ' })).toEqual({
      phase: 'plan',
      role: 'unknown',
      run: 'unknown',
      gate: null,
    });
    expect(nodeIdentity({ FACTORY_ROLE: 'builder' })).toBeNull();
  });

  it('keeps the mission and the newest runner message word for word, and reads them back unchanged', () => {
    const leaving: LooseMessage[] = [
      { role: 'user', content: MISSION },
      { role: 'assistant', content: [{ type: 'toolCall', name: 'read' }] },
      { role: 'toolResult', content: [{ type: 'text', text: 'file body' }] },
      { role: 'user', content: [{ type: 'text', text: CORRECTION }] },
    ];
    const carried = carryForward(null, leaving);
    expect(carried).toEqual({ mission: whole(MISSION), lastWord: whole(CORRECTION) });
    const block = writeBlock(who, carried);
    expect(block.startsWith(BLOCK_OPEN) && block.endsWith(BLOCK_CLOSE)).toBe(true);
    expect(block).toContain(slot('mission', MISSION));
    expect(block).toContain('report_phase tool (envelope BuildEnvelope)');
    expect(readCheckpoint(block).carried).toEqual(carried);
  });

  it('reads a text by its length, whatever it holds — end markers and a whole earlier block included', () => {
    const nasty = `quote: <!-- [/FACTORY:mission] -->\n${BLOCK_CLOSE}\n${writeBlock(who, { mission: whole('inner'), lastWord: null })}`;
    const carried: Carried = { mission: whole(nasty), lastWord: whole(`also ${BLOCK_CLOSE}`) };
    const summary = writeCheckpoint(writeBlock(who, carried), '## Where the work stands\n- half', NOFILES);
    const back = readCheckpoint(summary);
    expect(back.carried).toEqual(carried);
    expect(back.narrative).toBe('## Where the work stands\n- half');
  });

  it('a second compaction carries the mission from the block and updates the newest message', () => {
    const first = writeCheckpoint(
      writeBlock(who, { mission: whole(MISSION), lastWord: whole(CORRECTION) }),
      '## Where the work stands\n- read',
      NOFILES,
    );
    const before = readCheckpoint(first);
    expect(before.narrative).toBe('## Where the work stands\n- read');
    const again = carryForward(before.carried, [
      { role: 'assistant', content: [] },
      { role: 'user', content: 'New verdict: 1 red test.' },
    ]);
    expect(again).toEqual({ mission: whole(MISSION), lastWord: whole('New verdict: 1 red test.') });
    // Nothing new from the runner: the carried message stays.
    expect(carryForward(before.carried, [{ role: 'assistant', content: [] }]).lastWord).toEqual(whole(CORRECTION));
    // No runner words at all: a visible placeholder, read back as nothing.
    const empty = writeBlock(who, { mission: null, lastWord: null });
    expect(empty).toContain('(no mission was in the compacted messages)');
    expect(readCheckpoint(empty).carried).toEqual({ mission: null, lastWord: null });
    // pi's own summary: no block, its text is the narrative.
    expect(readCheckpoint('plain pi summary')).toEqual({
      carried: null,
      narrative: 'plain pi summary',
      files: NOFILES,
    });
  });

  it('reads a block written before texts carried their length', () => {
    const old = [
      BLOCK_OPEN,
      '<!-- [FACTORY:mission] -->',
      MISSION,
      '<!-- [/FACTORY:mission] -->',
      '<!-- [FACTORY:last-word] -->',
      '(none in the summarized part)',
      '<!-- [/FACTORY:last-word] -->',
      BLOCK_CLOSE,
    ].join('\n');
    expect(readCheckpoint(`${old}\n\nnarrative`)).toEqual({
      carried: { mission: whole(MISSION), lastWord: null },
      narrative: 'narrative',
      files: NOFILES,
    });
  });

  it('cuts a long text with the cut said, never inside a surrogate pair, and a second pass changes nothing', () => {
    const long = 'x'.repeat(MISSION_CAP + 500);
    const block = writeBlock(who, carryForward(null, [{ role: 'user', content: long }]));
    expect(block).toContain(`<!-- [FACTORY:mission length=${MISSION_CAP} of=${MISSION_CAP + 500}] -->`);
    expect(block).toContain(`the first ${MISSION_CAP} of ${MISSION_CAP + 500} characters are kept`);
    expect(writeBlock(who, readCheckpoint(block).carried!)).toBe(block);
    const emoji = `${'y'.repeat(LAST_WORD_CAP - 1)}😀tail`;
    expect(keep(emoji, LAST_WORD_CAP)).toEqual({ text: 'y'.repeat(LAST_WORD_CAP - 1), total: emoji.length });
  });

  it('adds up read and changed files across compactions', () => {
    const first = addFileOps(NOFILES, { read: ['a.ts', 'b.ts'], written: [], edited: ['c.ts'] });
    expect(fileSections(first)).toBe(
      '<read-files>\na.ts\nb.ts\n</read-files>\n\n<modified-files>\nc.ts\n</modified-files>',
    );
    const summary = writeCheckpoint(
      writeBlock(who, { mission: whole(MISSION), lastWord: null }),
      '## Where the work stands\n- x',
      first,
    );
    const before = readCheckpoint(summary);
    expect(before.narrative).toBe('## Where the work stands\n- x');
    expect(addFileOps(before.files, { read: ['d.ts'], written: ['b.ts'], edited: [] })).toEqual({
      read: ['a.ts', 'd.ts'],
      modified: ['b.ts', 'c.ts'],
    });
  });

  it('tallies what left the context when the model cannot write the narrative', () => {
    const note = tallyNote(
      [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'reading the tests' },
            { type: 'toolCall', name: 'read' },
            { type: 'toolCall', name: 'bash' },
          ],
        },
        { role: 'toolResult', content: 'ok' },
        { role: 'assistant', content: [{ type: 'toolCall', name: 'bash' }] },
      ],
      '429: {"message":"Rate limit exceeded"}\nmore',
    );
    expect(note).toContain('the checkpoint call failed: 429: {"message":"Rate limit exceeded"}');
    expect(note).not.toContain('more');
    expect(note).toContain('2 assistant message(s), 3 tool call(s) (read 1, bash 2)');
    expect(note).toContain('last words before the cut: "reading the tests"');
  });

  it('asks the narrator to fold an earlier checkpoint in, and never to restate the task', () => {
    expect(narratorAsk('[user] hi', '')).not.toContain('earlier-checkpoint');
    const ask = narratorAsk('[user] hi', '## Where the work stands\n- a');
    expect(ask).toContain('<earlier-checkpoint>\n## Where the work stands\n- a\n</earlier-checkpoint>');
    expect(ask).toContain('the factory keeps them verbatim');
  });
});

// ---------------------------------------------------------------------------------------------

/** Long enough that one result crosses the tiny window's threshold. */
const BIG_OUTPUT = 'for i in $(seq 1 250); do echo "line $i: 0123456789abcdef0123456789abcdef0123456789abcdef"; done';
// The summary request's text is the serialized conversation: the assistant's words in it carry this
// directive, so every summary request lands on the `summarizer` tape, whatever pi decides to compact.
const TO_SUMMARIZER = 'working [tape:summarizer]';

describe('factory-compact in the real pi', () => {
  let rig: Rig;
  let project: NodeProject;

  beforeAll(async () => {
    const work = (command: string) => call('bash', { command }, { text: TO_SUMMARIZER });
    rig = await startRig({
      tapes: {
        // One tape per run (a tape's cursor goes on across runs): the mission names its own.
        ...Object.fromEntries(
          ['compact', 'compact-gate', 'compact-refused'].map((name) => [
            name,
            [work('echo small'), work(BIG_OUTPUT), work('echo small again'), work(BIG_OUTPUT), say('done')],
          ]),
        ),
        summarizer: Array.from({ length: 12 }, (_, i) => say(`## Progress\n- narrative ${i + 1}`)),
        after: [say('ok')],
      },
      // A tiny window forces compaction (threshold = window − reserve).
      models: [{ id: 'alpha', cost: { input: 3, output: 15 }, contextWindow: 6000, maxTokens: 512 }],
      settings: { compaction: { enabled: true, reserveTokens: 2000, keepRecentTokens: 200 } },
    });
    project = makeNodeProject();
  });
  afterAll(async () => {
    project?.cleanup();
    await rig?.cleanup();
  });

  it('keeps the mission verbatim through two compactions, and the next request still carries it', async () => {
    const mission = `${MISSION}\n[tape:compact]`;
    const env = nodeEnv(project);
    const run = await runNode(rig, project, mission, env);
    expect(run.exitCode).toBe(0);
    const compactions = sessionLines(rig.sessionDir, run.sessionId).filter((l) => l.type === 'compaction');
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    const kept = compactions.map((c) => readCheckpoint(String(c.summary)).carried);
    for (const [i, compaction] of compactions.entries()) {
      expect(compaction.fromHook).toBe(true);
      expect(String(compaction.summary).startsWith(BLOCK_OPEN)).toBe(true);
      expect(kept[i]?.mission).toEqual(whole(mission));
      expect(String(compaction.summary)).toContain(`## Progress\n- narrative ${i + 1}`); // the model's narrative
    }
    expect(kept[1]).toEqual(kept[0]); // carried over, not re-summarised
    expect(compactions[0]!.details).toMatchObject({ narrative: 'model', factory: { phase: 'build', role: 'builder' } });
    expect(rig.model.requestsFor('summarizer').length).toBe(compactions.length);

    // A correction in the same session: the model's request holds the mission verbatim, from the block.
    const next = await runPiJson(
      { ...rig, env: { ...rig.env, ...env } },
      {
        cwd: project.dir,
        prompt: 'Your report was missing. [tape:after]',
        args: ['--approve'],
        sessionId: run.sessionId,
      },
    );
    expect(next.exitCode).toBe(0);
    const request = rig.model.requestsFor('after')[0]!;
    const userTexts = (request.body.messages ?? []).filter((m) => m.role === 'user').map((m) => contentText(m.content));
    expect(userTexts.some((t) => t.includes(slot('mission', mission)))).toBe(true);
  });

  it("in a best-of-N node the narrator's call takes a reservation from the run's budget and gives its cost back; the stream counts it, so the figures add up", async () => {
    const watch = new SpendWatch({ maxCost: 100 }, { stopBatch: () => {}, note: () => {} });
    const gate = await startBudgetServer(watch);
    try {
      const summarized = rig.model.requestsFor('summarizer').length;
      const run = await runNode(
        rig,
        project,
        `${MISSION}\n[tape:compact-gate]`,
        nodeEnv(project, { FACTORY_BUDGET_URL: gate.url }),
      );
      expect(run.exitCode).toBe(0);
      const narrated = rig.model.requestsFor('summarizer').length - summarized;
      expect(narrated).toBeGreaterThanOrEqual(1);
      const own = run.events.filter(
        (e) => e.type === 'entry_appended' && (e.entry as { customType?: string }).customType === 'factory-usage',
      );
      expect(own).toHaveLength(narrated);
      const stream = readStream(run.events.map((e) => JSON.stringify(e)));
      const turns = run.events
        .filter((e) => e.type === 'message_end' && (e.message as { role?: string }).role === 'assistant')
        .reduce(
          (sum, e) => sum + ((e.message as { usage?: { cost?: { total?: number } } }).usage?.cost?.total ?? 0),
          0,
        );
      // The stream's cost is the turns' and the narrator's; what the gate was given back is the same figure.
      expect(stream.cost).toBeGreaterThan(turns);
      expect(watch.total()).toBeCloseTo(stream.cost, 9);
    } finally {
      watch.dispose();
      await gate.close();
    }
  });

  it("a narrator call the run's budget refuses is never made: the checkpoint keeps the mission with a tally", async () => {
    // The cockpit's side of the gate, answering as the spend watch does once the batch stopped — for the narrator
    // only, so that the turns go on and a compaction comes.
    const asked: { op: string; what?: string }[] = [];
    const server = http.createServer((request, response) => {
      let text = '';
      request.on('data', (c: Buffer) => (text += c.toString()));
      request.on('end', () => {
        const op = (request.url ?? '').split('/').at(-1)!;
        const body = JSON.parse(text || '{}') as { what?: string };
        asked.push({ op, what: body.what });
        const refused = op === 'reserve' && body.what === 'compaction';
        response.end(
          JSON.stringify(
            refused
              ? { ok: false, reason: 'budget: the run spent $0.2042, its cap is $0.2 (--max-cost)' }
              : { ok: true, id: `r${asked.length}` },
          ),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
      const seen = rig.model.requests.length;
      const mission = `${MISSION}\n[tape:compact-refused]`;
      const run = await runNode(rig, project, mission, nodeEnv(project, { FACTORY_BUDGET_URL: url }));
      expect(run.exitCode).toBe(0);
      // No request of this run was the narrator's (the tape a request lands on is no proof: the tally quotes the
      // assistant's words, routing directive included).
      expect(rig.model.requests.slice(seen).filter((r) => JSON.stringify(r.body).includes(NARRATOR_ROLE))).toHaveLength(
        0,
      );
      const compactions = sessionLines(rig.sessionDir, run.sessionId).filter((l) => l.type === 'compaction');
      expect(compactions.length).toBeGreaterThanOrEqual(1);
      expect(asked.filter((a) => a.op === 'reserve' && a.what === 'compaction')).toHaveLength(compactions.length);
      for (const compaction of compactions) {
        expect(compaction.details).toMatchObject({ narrative: 'tally' });
        expect(readCheckpoint(String(compaction.summary)).carried?.mission).toEqual(whole(mission));
        expect(String(compaction.summary)).toContain('budget: the run spent');
      }
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
