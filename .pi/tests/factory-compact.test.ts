import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, contentText, say } from '../../src/scripted/tape.js';
import { runPiJson, startRig, type Rig } from '../../test/helpers/rig.js';
import {
  BLOCK_CLOSE,
  BLOCK_OPEN,
  MISSION_CAP,
  buildFactoryBlock,
  capVerbatim,
  composeSummary,
  dryInventory,
  formatFileLists,
  mergeFileLists,
  narrativeOf,
  parseFileLists,
  pickAnchors,
  readAnchors,
  readFactoryFacts,
  splitSummary,
  type LooseMessage,
} from '../extensions/factory-compact.js';
import { makeNodeProject, nodeEnv, runNode, type NodeProject } from './helpers/node-rig.js';
import { sessionLines } from './helpers/session-file.js';

const ENV = { FACTORY_PHASE: 'build', FACTORY_ROLE: 'builder', FACTORY_ADW_ID: '9f2e4a10', FACTORY_ENVELOPE_SCHEMA: '/x/schemas/BuildEnvelope.json' };
// An ask with markdown titles of its own and characters a paraphrase would lose.
const MISSION = '### mission\nAdd a word counter to the status bar.\n### contract\nCall `report_phase` — alone, last, once — with {status, changed_files}.';
const CORRECTION = 'Your last answer failed validation: 2 red tests in apps/plume.\nReport again, only the envelope.';

describe('factory block helpers', () => {
  it('reads the phase identity, and nothing outside a factory node', () => {
    expect(readFactoryFacts(ENV)).toEqual({ phase: 'build', role: 'builder', adwId: '9f2e4a10', gate: 'BuildEnvelope' });
    expect(readFactoryFacts({ FACTORY_PHASE: ' plan ' })).toEqual({ phase: 'plan', role: 'unknown', adwId: 'unknown', gate: null });
    expect(readFactoryFacts({ FACTORY_ROLE: 'builder' })).toBeNull();
  });

  it('keeps the mission and the last correction verbatim, fenced, and reads them back unchanged', () => {
    const messages: LooseMessage[] = [
      { role: 'user', content: MISSION },
      { role: 'assistant', content: [{ type: 'toolCall', name: 'read' }] },
      { role: 'toolResult', content: [{ type: 'text', text: 'file body' }] },
      { role: 'user', content: [{ type: 'text', text: CORRECTION }] },
    ];
    const anchors = pickAnchors(messages, null);
    expect(anchors).toEqual({ mission: MISSION, lastWord: CORRECTION });
    const block = buildFactoryBlock(readFactoryFacts(ENV)!, anchors);
    expect(block.startsWith(BLOCK_OPEN) && block.endsWith(BLOCK_CLOSE)).toBe(true);
    expect(block).toContain(`<!-- [FACTORY:mission] -->\n${MISSION}\n<!-- [/FACTORY:mission] -->`);
    expect(block).toContain('gate: BuildEnvelope (report_phase tool)');
    expect(readAnchors(block)).toEqual(anchors);
  });

  it('a second pass takes the mission from the previous block and updates the last word', () => {
    const first = composeSummary(buildFactoryBlock(readFactoryFacts(ENV)!, { mission: MISSION, lastWord: CORRECTION }), '## Progress\n- read', '');
    const split = splitSummary(first);
    expect(split.rest).toBe('## Progress\n- read');
    const again = pickAnchors([{ role: 'assistant', content: [] }, { role: 'user', content: 'New verdict: 1 red test.' }], readAnchors(split.block));
    expect(again).toEqual({ mission: MISSION, lastWord: 'New verdict: 1 red test.' });
    // Nothing new from the runner: the previous last word stays.
    expect(pickAnchors([{ role: 'assistant', content: [] }], readAnchors(split.block)).lastWord).toBe(CORRECTION);
    // No anchors at all: an explicit placeholder, read back as null.
    const empty = buildFactoryBlock(readFactoryFacts(ENV)!, { mission: null, lastWord: null });
    expect(readAnchors(empty)).toEqual({ mission: null, lastWord: null });
    expect(splitSummary('plain pi summary')).toEqual({ block: null, rest: 'plain pi summary' });
  });

  it('caps a long mission with an announced cut, and the cut survives a second pass unchanged', () => {
    const long = 'x'.repeat(MISSION_CAP + 500);
    const capped = capVerbatim(long, MISSION_CAP);
    expect(capped).toBe(`${'x'.repeat(MISSION_CAP)}\n[factory-compact: truncated, ${MISSION_CAP} of ${MISSION_CAP + 500} characters kept]`);
    expect(capVerbatim(capped, MISSION_CAP)).toBe(capped);
    const block = buildFactoryBlock(readFactoryFacts(ENV)!, { mission: long, lastWord: null });
    const second = buildFactoryBlock(readFactoryFacts(ENV)!, readAnchors(block)!);
    expect(second).toBe(block);
  });

  it('cumulates read and modified files across compactions', () => {
    const first = mergeFileLists({ read: [], modified: [] }, { read: ['a.ts', 'b.ts'], written: [], edited: ['c.ts'] });
    const text = formatFileLists(first);
    expect(text).toBe('<read-files>\na.ts\nb.ts\n</read-files>\n\n<modified-files>\nc.ts\n</modified-files>');
    const second = mergeFileLists(parseFileLists(`## Progress\n\n${text}`), { read: ['d.ts'], written: ['b.ts'], edited: [] });
    expect(second).toEqual({ read: ['a.ts', 'd.ts'], modified: ['b.ts', 'c.ts'] });
    expect(narrativeOf(`## Progress\n- x\n\n${text}`)).toBe('## Progress\n- x');
  });

  it('writes a dry inventory when the model cannot summarize', () => {
    const dry = dryInventory(
      [
        { role: 'assistant', content: [{ type: 'text', text: 'reading' }, { type: 'toolCall', name: 'read' }, { type: 'toolCall', name: 'bash' }] },
        { role: 'toolResult', content: 'ok' },
        { role: 'assistant', content: [{ type: 'toolCall', name: 'bash' }] },
      ],
      '429: {"message":"Rate limit exceeded"}\nmore',
    );
    expect(dry).toContain('- why: 429: {"message":"Rate limit exceeded"}');
    expect(dry).toContain('2 assistant answers and 3 tool calls left the context (tools: read ×1, bash ×2)');
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
        compact: [work('echo small'), work(BIG_OUTPUT), work('echo small again'), work(BIG_OUTPUT), say('done')],
        summarizer: Array.from({ length: 6 }, (_, i) => say(`## Progress\n- narrative ${i + 1}`)),
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
    const blocks = compactions.map((c) => splitSummary(String(c.summary)).block);
    for (const [i, compaction] of compactions.entries()) {
      expect(compaction.fromHook).toBe(true);
      expect(String(compaction.summary).startsWith(BLOCK_OPEN)).toBe(true);
      expect(readAnchors(blocks[i]!)?.mission).toBe(mission);
      expect(String(compaction.summary)).toContain(`## Progress\n- narrative ${i + 1}`); // the model's narrative
    }
    expect(blocks[1]).toBe(blocks[0]); // carried over, not re-summarised
    expect(rig.model.requestsFor('summarizer').length).toBe(compactions.length);

    // A correction in the same session: the model's request holds the mission verbatim, from the block.
    const next = await runPiJson({ ...rig, env: { ...rig.env, ...env } }, { cwd: project.dir, prompt: 'Your report was missing. [tape:after]', args: ['--approve'], sessionId: run.sessionId });
    expect(next.exitCode).toBe(0);
    const request = rig.model.requestsFor('after')[0]!;
    const userTexts = (request.body.messages ?? []).filter((m) => m.role === 'user').map((m) => contentText(m.content));
    expect(userTexts.some((t) => t.includes(`<!-- [FACTORY:mission] -->\n${mission}\n<!-- [/FACTORY:mission] -->`))).toBe(true);
  });
});
