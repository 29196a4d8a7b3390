import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../src/contract/errors.js';
import { factoryRoot } from '../../src/pi/resolve.js';

// Start-up cost: yaml and zod must load only when a roster file is read. The mocks pass the real modules
// through untouched; they only record that somebody imported them.
const loaded = vi.hoisted(() => ({ yaml: 0, zod: 0 }));
vi.mock('yaml', async (importOriginal) => {
  loaded.yaml += 1;
  return importOriginal();
});
vi.mock('zod', async (importOriginal) => {
  loaded.zod += 1;
  return importOriginal();
});

const roster = await import('../../src/config/roster.js');
const {
  agentFor,
  briefFor,
  briefSource,
  defaultRoster,
  fallbackRoute,
  gateCommands,
  loadRoster,
  loadRosterIfPresent,
  payloadDir,
  RosterError,
  rosterPath,
} = roster;

const FIXTURES = path.join(factoryRoot(), 'test', 'fixtures', 'roster');
const fixture = (name: string) => path.join(FIXTURES, name);

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-roster-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function refusal(file: string): Promise<string> {
  const error = await loadRoster(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RosterError);
  expect(error).toBeInstanceOf(UsageError); // the CLI's exit-2 path
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  return message;
}

describe('lazy loading', () => {
  // First in the file on purpose: later tests read roster files and load both modules.
  it('a repository without a roster file never imports yaml or zod', async () => {
    const result = await loadRosterIfPresent(dir);
    expect(result).toEqual(defaultRoster());
    agentFor(result, 'builder');
    briefFor(dir, 'builder');
    expect(loaded).toEqual({ yaml: 0, zod: 0 });
  });

  it('a roster file does import them', async () => {
    await loadRoster(fixture('full.yaml'));
    expect(loaded.yaml).toBeGreaterThan(0);
    expect(loaded.zod).toBeGreaterThan(0);
  });
});

describe('loadRoster', () => {
  it('reads every field and normalises it', async () => {
    const r = await loadRoster(fixture('full.yaml'));
    expect(r.file).toBe(fixture('full.yaml'));
    expect(r.gateway).toBe('openrouter');
    expect(r.harness).toBe('pi');
    expect(r.pi).toBe('/opt/pi/bin/pi');
    expect(r.fallbackModel).toBe('moonshotai/kimi-k2.6');
    expect(r.payload).toEqual({
      dir: 'packages/app',
      commands: [
        { run: 'npm test', timeoutSeconds: 600 },
        { run: 'npm run lint', timeoutSeconds: 120 },
      ],
    });
    expect(r.agents.prompter).toEqual({
      model: 'z-ai/glm-5.3',
      thinking: 'low',
      tools: ['read', 'grep', 'ls'],
      timeoutSeconds: 300,
      limits: { maxTurns: 10, maxToolCalls: 20, maxCostUsd: 0.25 },
      auth: undefined,
    });
    expect(r.agents.builder?.tools).toEqual(['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls']); // deduplicated
    expect(r.agents.builder?.auth).toEqual({ keys: ['ZAI_API_KEY'], direct: true });
    expect(r.agents.judge?.auth).toEqual({ keys: [], direct: false });
  });

  it('an empty file is an empty roster: the defaults apply', async () => {
    const file = path.join(dir, 'empty.yaml');
    fs.writeFileSync(file, '# nothing yet\n');
    expect(await loadRoster(file)).toEqual({ ...defaultRoster(), file });
  });

  it('refuses an unknown tool, naming its path and the known ones', async () => {
    expect(await refusal(fixture('unknown-tool.yaml'))).toBe(
      `${fixture('unknown-tool.yaml')}: agents.builder.tools[2]: unknown tool "grpe" (known: read, bash, edit, write, grep, find, ls)`,
    );
  });

  it('refuses report_phase in a tool list: the factory adds it', async () => {
    expect(await refusal(fixture('report-tool.yaml'))).toMatch(
      /: agents\.builder\.tools\[1\]: report_phase is added by the factory/,
    );
  });

  it('refuses a wrong type with the expected and received kinds', async () => {
    expect(await refusal(fixture('timeout-string.yaml'))).toBe(
      `${fixture('timeout-string.yaml')}: agents.builder.timeout: number expected, string received`,
    );
  });

  it('refuses an unknown key (strict objects) with the keys that level accepts', async () => {
    expect(await refusal(fixture('unknown-key.yaml'))).toBe(
      `${fixture('unknown-key.yaml')}: agents.builder: unknown key "tols" (known: model, thinking, tools, timeout, limits, auth, writable)`,
    );
  });

  it.each([
    ['bon:\n  deadline: soon\n', 'bon.deadline: a duration expected (e.g. 90s, 20m, 1h30m), got "soon"'],
    ['bon:\n  max_cost: -1\n', 'bon.max_cost: a positive number expected, got -1'],
    ['bon:\n  stop_after_green: 1.5\n', 'bon.stop_after_green: a whole number expected, got 1.5'],
    [
      'bon:\n  budget: 3\n',
      'bon: unknown key "budget" (known: max_cost, arm_max_cost, confirm_above, stop_after_green, deadline, judge)',
    ],
  ])('refuses a bad bon section %j in one line', async (text, motif) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roster-bon-'));
    const file = path.join(dir, 'factory.config.yaml');
    try {
      fs.writeFileSync(file, text);
      expect(await refusal(file)).toBe(`${file}: ${motif}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the bon section: caps in dollars, the deadline in milliseconds', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roster-bon-'));
    const file = path.join(dir, 'factory.config.yaml');
    try {
      fs.writeFileSync(
        file,
        'bon: { max_cost: 5, arm_max_cost: 1.5, confirm_above: 3, stop_after_green: 2, deadline: 1h30m, judge: true }\n',
      );
      expect((await loadRoster(file)).bon).toEqual({
        maxCost: 5,
        armMaxCost: 1.5,
        confirmAbove: 3,
        stopAfterGreen: 2,
        deadlineMs: 5_400_000,
        judge: true,
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a YAML syntax error with its line', async () => {
    expect(await refusal(fixture('syntax-error.yaml'))).toMatch(
      new RegExp(
        `^${fixture('syntax-error.yaml').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: YAML syntax error at line 5, column \\d+: Flow sequence`,
      ),
    );
  });

  it('refuses an unknown thinking level, listing pi levels', async () => {
    expect(await refusal(fixture('bad-thinking.yaml'))).toMatch(
      /agents\.prompter\.thinking: unknown thinking level "hgh" \(known: off, minimal, low, medium, high, xhigh, max\)$/,
    );
  });

  it('never echoes a value pasted where a key NAME belongs', async () => {
    const message = await refusal(fixture('key-value-in-auth.yaml'));
    expect(message).toMatch(/agents\.builder\.auth\.keys\[0\]: an environment variable NAME expected/);
    expect(message).not.toContain('sk-or-v1');
  });

  it('refuses a payload folder outside the workspace', async () => {
    expect(await refusal(fixture('payload-outside.yaml'))).toMatch(
      /payload\.dir: a folder inside the workspace .* got "\.\.\/elsewhere"$/,
    );
  });

  it('reports the first problem and counts the others, on one line', async () => {
    expect(await refusal(fixture('several-problems.yaml'))).toMatch(
      /: gateway: a provider name expected .* got "openrouter\/" \(and 2 more problems\)$/,
    );
  });

  it('refuses a YAML document that is not a mapping', async () => {
    expect(await refusal(fixture('not-a-mapping.yaml'))).toMatch(/: roster: mapping expected, array received$/);
  });

  it('refuses negative numbers, bad role names and bad model ids', async () => {
    const write = (text: string) => {
      const file = path.join(dir, 'r.yaml');
      fs.writeFileSync(file, text);
      return file;
    };
    expect(await refusal(write('agents:\n  builder:\n    timeout: -5\n'))).toMatch(
      /agents\.builder\.timeout: a positive number expected, got -5$/,
    );
    expect(await refusal(write('agents:\n  Builder:\n    model: a/b\n'))).toMatch(
      /agents\.Builder: role names are lower-case words/,
    );
    expect(await refusal(write('fallback_model: glm-5\n'))).toMatch(
      /fallback_model: model id must be provider\/id .* got "glm-5"$/,
    );
    expect(await refusal(write('agents:\n  builder:\n    limits: { max_turns: 2.5 }\n'))).toMatch(
      /agents\.builder\.limits\.max_turns: /,
    );
    expect(await refusal(write('payload:\n  commands: [ls, 3]\n'))).toMatch(
      /payload\.commands\[1\]: a command string or \{run, timeout\} expected, number received$/,
    );
    expect(await refusal(write('payload:\n  commands: [{run: ls, tmeout: 3}]\n'))).toMatch(
      /payload\.commands\[0\]: unknown key "tmeout" \(known: run, timeout\)$/,
    );
    expect(await refusal(write('payload:\n  setup: 3\n'))).toMatch(/payload\.setup: /);
    expect(await refusal(write('payload:\n  setpu: npm ci\n'))).toMatch(
      /payload: unknown key "setpu" \(known: dir, commands, setup\)$/,
    );
  });

  it('payload.setup: a command string or {run, timeout}, run in the payload folder', async () => {
    const file = path.join(dir, 'setup.yaml');
    fs.writeFileSync(file, 'payload:\n  dir: app\n  setup: npm ci\n');
    const r = await loadRoster(file);
    expect(roster.setupCommand('/w', r)).toEqual({ run: 'npm ci', cwd: '/w/app', timeoutMs: expect.any(Number) });
    fs.writeFileSync(file, 'payload:\n  setup: { run: make deps, timeout: 90 }\n');
    expect(roster.setupCommand('/w', await loadRoster(file))).toEqual({
      run: 'make deps',
      cwd: '/w',
      timeoutMs: 90_000,
    });
    fs.writeFileSync(file, 'payload:\n  commands: [ls]\n');
    expect(roster.setupCommand('/w', await loadRoster(file))).toBeUndefined();
  });

  it('a missing or unreadable file is a one-line refusal', async () => {
    expect(await refusal(path.join(dir, 'nope.yaml'))).toBe(`roster not found: ${path.join(dir, 'nope.yaml')}`);
    expect(await refusal(dir)).toMatch(/: unreadable \(EISDIR\)$/);
  });
});

describe('loadRosterIfPresent / rosterPath', () => {
  it('reads the repository roster when there is one', async () => {
    const file = rosterPath(dir);
    expect(file).toBe(path.join(dir, 'adws', 'adw_config', 'factory.config.yaml'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'gateway: openrouter\n');
    expect((await loadRosterIfPresent(dir)).gateway).toBe('openrouter');
  });

  it('an explicit --config must exist', async () => {
    await expect(loadRosterIfPresent(dir, path.join(dir, 'missing.yaml'))).rejects.toThrow(/^roster not found: /);
    expect((await loadRosterIfPresent(dir, fixture('full.yaml'))).file).toBe(fixture('full.yaml'));
  });
});

describe('agentFor', () => {
  it('routes the model through the gateway and fills defaults', async () => {
    const r = await loadRoster(fixture('full.yaml'));
    const prompter = agentFor(r, 'prompter');
    expect(prompter).toEqual({
      role: 'prompter',
      model: 'z-ai/glm-5.3',
      route: 'openrouter/z-ai/glm-5.3',
      direct: false,
      thinking: 'low',
      tools: ['read', 'grep', 'ls'],
      timeoutMs: 300_000,
      limits: { maxTurns: 10, maxToolCalls: 20, maxCostUsd: 0.25 },
      auth: undefined,
    });
    expect(agentFor(r, 'builder')).toMatchObject({
      route: 'zai/glm-5.3',
      direct: true,
      auth: { keys: ['ZAI_API_KEY'] },
      timeoutMs: 1_800_000,
    });
    expect(agentFor(r, 'judge')).toMatchObject({ route: 'openrouter/anthropic/claude-sonnet-4.5', auth: { keys: [] } }); // not prefixed twice
  });

  it("a --model override is routed like the roster, with the role's direct flag", async () => {
    const r = await loadRoster(fixture('full.yaml'));
    expect(agentFor(r, 'prompter', { model: 'anthropic/claude-haiku-4.5' }).route).toBe(
      'openrouter/anthropic/claude-haiku-4.5',
    );
    expect(agentFor(r, 'builder', { model: 'deepseek/deepseek-chat' }).route).toBe('deepseek/deepseek-chat');
  });

  it('without a roster: no model, no gateway, role defaults (the builder edits, the prompter reads)', () => {
    const builder = agentFor(defaultRoster(), 'builder');
    expect(builder).toMatchObject({ model: undefined, route: undefined, direct: false, auth: undefined, limits: {} });
    expect(builder.tools).toEqual(['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls']);
    expect(agentFor(defaultRoster(), 'prompter').tools).not.toContain('edit');
    expect(agentFor(defaultRoster(), 'prompter', { model: 'scripted/alpha' }).route).toBe('scripted/alpha');
    const unknown = agentFor(defaultRoster(), 'critic');
    expect(unknown.tools).not.toContain('write');
    expect(unknown.timeoutMs).toBe(600_000);
  });

  it('hands out copies: a caller cannot edit the roster through a profile', async () => {
    const r = await loadRoster(fixture('full.yaml'));
    agentFor(r, 'prompter').tools.push('write');
    expect(r.agents.prompter?.tools).toEqual(['read', 'grep', 'ls']);
  });

  it('fallbackRoute, payloadDir and gateCommands', async () => {
    const r = await loadRoster(fixture('full.yaml'));
    expect(fallbackRoute(r)).toBe('openrouter/moonshotai/kimi-k2.6');
    expect(fallbackRoute(defaultRoster())).toBeUndefined();
    expect(payloadDir('/repo', r)).toBe('/repo/packages/app');
    expect(payloadDir('/repo', defaultRoster())).toBe('/repo');
    expect(gateCommands('/repo', r)).toEqual([
      { run: 'npm test', cwd: '/repo/packages/app', timeoutMs: 600_000 },
      { run: 'npm run lint', cwd: '/repo/packages/app', timeoutMs: 120_000 },
    ]);
    expect(gateCommands('/repo', defaultRoster())).toEqual([]);
  });
});

describe('the shipped roster and briefs', () => {
  it("this repository's roster is valid and routes real registry ids through openrouter", async () => {
    const r = await loadRosterIfPresent(factoryRoot());
    expect(r.file).toBe(path.join(factoryRoot(), 'adws', 'adw_config', 'factory.config.yaml'));
    expect(r.gateway).toBe('openrouter');
    expect(r.payload.commands.map((c) => c.run)).toEqual(['npm test']);
    for (const role of ['prompter', 'builder']) {
      const profile = agentFor(r, role);
      expect(profile.route).toMatch(/^openrouter\/[^/]+\/[^/]+$/);
      expect(profile.auth?.keys).toEqual(['OPENROUTER_API_KEY']);
      expect(briefFor(factoryRoot(), role)?.length).toBeGreaterThan(200);
    }
    expect(agentFor(r, 'prompter').tools).not.toContain('edit');
    expect(fallbackRoute(r)).not.toBe(agentFor(r, 'builder').route);
  });

  it('briefFor reads the workspace brief, falls back to the neutral default, and never leaves the folder', () => {
    expect(briefFor(dir, 'builder')).toBeUndefined();
    const neutral = briefSource(dir, 'builder', factoryRoot());
    expect(neutral).toMatchObject({
      origin: 'default',
      file: path.join(factoryRoot(), 'templates', 'briefs', 'builder.md'),
    });
    expect(neutral?.text).not.toBe(briefFor(factoryRoot(), 'builder')); // the factory's house rules serve only itself
    const briefs = path.join(dir, 'adws', 'adw_config', 'briefs');
    fs.mkdirSync(briefs, { recursive: true });
    fs.writeFileSync(path.join(briefs, 'builder.md'), '\n# Local builder\nBe brief.\n');
    fs.writeFileSync(path.join(briefs, 'prompter.md'), '  \n');
    expect(briefSource(dir, 'builder', factoryRoot())).toMatchObject({
      origin: 'repo',
      text: '# Local builder\nBe brief.',
    });
    expect(briefFor(dir, 'prompter')).toBeUndefined(); // blank = none
    fs.writeFileSync(path.join(dir, 'adws', 'adw_config', 'secret.md'), 'outside');
    expect(briefFor(dir, '../secret')).toBeUndefined();
  });
});
