import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, contentText, say } from '../../src/scripted/tape.js';
import { runPiJson, type Rig } from '../../test/helpers/rig.js';
import {
  DEFAULT_PRUNE_KB,
  DEFAULT_PRUNE_TURNS,
  briefCandidates,
  contextMessageText,
  extensionRoot,
  loadBrief,
  messageInLiveContext,
  protectedPaths,
  pruneMessages,
  pruneSettings,
  writablePaths,
} from '../extensions/factory-context.js';
import { FACTORY_ROOT, makeNodeProject, nodeEnv, runNode, startNodeRig, type NodeProject } from './helpers/node-rig.js';
import { sessionLines } from './helpers/session-file.js';

describe('context helpers', () => {
  it('finds the brief in the project first, then in the factory, and refuses odd role names', () => {
    const project = mkdtempSync(path.join(tmpdir(), 'factory-context-unit-'));
    try {
      expect(extensionRoot()).toBe(FACTORY_ROOT);
      // A project without briefs gets the neutral default, never the factory's own house rules.
      const neutral = readFileSync(path.join(FACTORY_ROOT, 'templates/briefs/builder.md'), 'utf8').trim();
      const houseRules = readFileSync(path.join(FACTORY_ROOT, 'adws/adw_config/briefs/builder.md'), 'utf8').trim();
      expect(loadBrief('builder', project, FACTORY_ROOT)?.text).toBe(neutral);
      expect(neutral).not.toBe(houseRules);
      expect(neutral).not.toMatch(/TypeScript strict|test\/unit/);
      expect(loadBrief('builder', FACTORY_ROOT, FACTORY_ROOT)?.text).toBe(houseRules);
      mkdirSync(path.join(project, 'adws/adw_config/briefs'), { recursive: true });
      writeFileSync(path.join(project, 'adws/adw_config/briefs/builder.md'), '# Local builder\n');
      expect(loadBrief('builder', project, FACTORY_ROOT)).toEqual({
        file: path.join(project, 'adws/adw_config/briefs/builder.md'),
        text: '# Local builder',
      });
      expect(loadBrief('nobody', project, FACTORY_ROOT)).toBeNull();
      expect(briefCandidates('../etc/passwd', project, FACTORY_ROOT)).toEqual([]);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('lists writable paths and the protected globs of the rules (null when unreadable)', () => {
    expect(writablePaths({ FACTORY_WRITABLE: 'src, test ,src' }, '/p')).toEqual(['src', 'test']);
    expect(writablePaths({}, '/p')).toEqual(['/p']);
    expect(protectedPaths(FACTORY_ROOT)).toContain('.env');
    expect(protectedPaths('/nonexistent-project')).toBeNull();
    const text = contextMessageText({
      role: 'builder',
      brief: { file: 'b.md', text: 'BRIEF' },
      writable: ['/p'],
      protected: ['.env'],
    });
    expect(text).toContain('BRIEF');
    expect(text).toContain('## Where you may write\n- /p');
    expect(text).toContain('## Protected files (writes are refused)\n- .env');
    expect(contextMessageText({ role: 'x', brief: null, writable: ['/p'], protected: null })).toContain(
      'cannot be read',
    );
  });

  it('sees its message in the live context until a compaction drops it', () => {
    const msg = { type: 'custom_message', id: 'c', customType: 'factory-context' };
    expect(messageInLiveContext([{ type: 'message', id: 'a' }])).toBe(false);
    expect(messageInLiveContext([{ type: 'message', id: 'a' }, msg, { type: 'message', id: 'b' }])).toBe(true);
    expect(
      messageInLiveContext([
        { type: 'message', id: 'a' },
        msg,
        { type: 'message', id: 'b' },
        { type: 'compaction', id: 'k', firstKeptEntryId: 'b' },
      ]),
    ).toBe(false);
    expect(
      messageInLiveContext([
        { type: 'message', id: 'a' },
        msg,
        { type: 'message', id: 'b' },
        { type: 'compaction', id: 'k', firstKeptEntryId: 'c' },
      ]),
    ).toBe(true);
  });

  it('reads the prune settings, bad values giving the defaults', () => {
    expect(pruneSettings({})).toEqual({ turns: DEFAULT_PRUNE_TURNS, kb: DEFAULT_PRUNE_KB });
    expect(pruneSettings({ FACTORY_PRUNE_TURNS: '0', FACTORY_PRUNE_KB: '2.5' })).toEqual({ turns: 0, kb: 2.5 });
    expect(pruneSettings({ FACTORY_PRUNE_TURNS: 'x', FACTORY_PRUNE_KB: '-1' })).toEqual({
      turns: DEFAULT_PRUNE_TURNS,
      kb: DEFAULT_PRUNE_KB,
    });
  });

  it('prunes only tool results both older than the last K turns and larger than N KB', () => {
    const big = 'y'.repeat(5000);
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [] },
      { role: 'toolResult', content: [{ type: 'text', text: big }] }, // turn 1: age 2
      { role: 'toolResult', content: [{ type: 'text', text: 'small' }] }, // turn 1, small
      { role: 'assistant', content: [] },
      { role: 'toolResult', content: [{ type: 'text', text: big }] }, // turn 2: age 1
      { role: 'assistant', content: [] },
      { role: 'toolResult', content: [{ type: 'text', text: big }] }, // turn 3: age 0
    ];
    const { messages: out, pruned } = pruneMessages(messages, { turns: 2, kb: 4 });
    expect(pruned).toBe(1);
    const first = contentText(out[2]!.content);
    expect(first.startsWith('y'.repeat(1024))).toBe(true);
    expect(first).toContain('5000 bytes in all');
    expect(out.slice(3)).toEqual(messages.slice(3));
    expect(contentText(messages[2]!.content)).toBe(big); // the input is not touched
    expect(pruneMessages(messages, { turns: 0, kb: 4 }).pruned).toBe(3);
    expect(pruneMessages(messages, { turns: 0, kb: 8 }).pruned).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------

const BIG_OUTPUT = 'for i in $(seq 1 250); do echo "line $i: 0123456789abcdef0123456789abcdef0123456789abcdef"; done';

describe('factory-context in the real pi', () => {
  let rig: Rig;
  let project: NodeProject;
  const brief = readFileSync(path.join(FACTORY_ROOT, 'templates/briefs/builder.md'), 'utf8').trim();

  beforeAll(async () => {
    rig = await startNodeRig({
      first: [say('first answer')],
      retry: [say('second answer')],
      prune: [
        call('bash', { command: BIG_OUTPUT }),
        call('bash', { command: 'echo a' }),
        call('bash', { command: 'echo b' }),
        say('done'),
      ],
    });
    project = makeNodeProject(); // no brief of its own: the factory's neutral builder brief applies
  });
  afterAll(async () => {
    project?.cleanup();
    await rig?.cleanup();
  });

  const userTexts = (tape: string, index: number) =>
    (rig.model.requestsFor(tape)[index]?.body.messages ?? [])
      .filter((m) => m.role === 'user')
      .map((m) => contentText(m.content));
  const count = (texts: string[], needle: string) => texts.filter((t) => t.includes(needle)).length;

  it('puts the role brief in the request once, and a retry in the same session keeps it without a copy', async () => {
    const env = nodeEnv(project);
    const run = await runNode(rig, project, 'Build it. [tape:first]', env);
    expect(run.exitCode).toBe(0);
    const first = userTexts('first', 0);
    expect(count(first, brief)).toBe(1);
    expect(first.find((t) => t.includes(brief))).toContain('- .pi/damage-control-rules.yaml');

    const retry = await runPiJson(
      { ...rig, env: { ...rig.env, ...env } },
      { cwd: project.dir, prompt: 'Fix it. [tape:retry]', args: ['--approve'], sessionId: run.sessionId },
    );
    expect(retry.exitCode).toBe(0);
    const second = userTexts('retry', 0);
    expect(second.some((t) => t.includes('Build it.'))).toBe(true); // really the same session
    expect(count(second, brief)).toBe(1);
    const stored = sessionLines(rig.sessionDir, run.sessionId).filter(
      (l) => l.type === 'custom_message' && l.customType === 'factory-context',
    );
    expect(stored).toHaveLength(1);
  });

  it('prunes a big old tool result in the request while the session file keeps it whole', async () => {
    const run = await runNode(
      rig,
      project,
      'Run the tests. [tape:prune]',
      nodeEnv(project, { FACTORY_PRUNE_TURNS: '1', FACTORY_PRUNE_KB: '4' }),
    );
    expect(run.exitCode).toBe(0);
    const requests = rig.model.requestsFor('prune');
    expect(requests).toHaveLength(4);
    const toolTexts = (i: number) =>
      (requests[i]!.body.messages ?? []).filter((m) => m.role === 'tool').map((m) => contentText(m.content));
    expect(toolTexts(1)[0]).toContain('line 250:'); // the latest turn: whole
    const pruned = toolTexts(3)[0]!;
    expect(pruned).toContain('[factory-context: tool result pruned');
    expect(pruned).not.toContain('line 250:');
    expect(pruned.length).toBeLessThan(1500);
    const stored = sessionLines(rig.sessionDir, run.sessionId).filter(
      (l) => l.type === 'message' && (l.message as { role?: string }).role === 'toolResult',
    );
    expect(contentText((stored[0]!.message as { content: unknown }).content)).toContain('line 250:');
  });
});
