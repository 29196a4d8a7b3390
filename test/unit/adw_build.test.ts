// adw_build's code phases and declarations, without any agent: the harness here refuses to be called, so a
// test that reached it would fail (the agent path is covered end to end in test/e2e/build.test.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ADW_NAME,
  BUILD_TOOLS,
  buildAsk,
  buildPhases,
  type BuildAdwOptions,
  type BuildCheck,
} from '../../adws/adw_build.js';
import type { RunEvent } from '../../src/contract/events.js';
import type { Harness } from '../../src/harness/types.js';
import { workspacePaths } from '../../src/config/paths.js';
import { execute, Run } from '../../src/engine/runner.js';
import { makeTempRepo } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const noAgent: Harness = {
  name: 'none',
  run: () => Promise.reject(new Error('the agent must not be called in this test')),
};

function options(cwd: string, extra: Partial<BuildAdwOptions> = {}): BuildAdwOptions {
  return {
    specPath: 'specs/s.md',
    harness: noAgent,
    workspace: workspacePaths(cwd),
    cwd,
    retries: 1,
    payloadCommands: [{ run: 'npm test', cwd: 'payload', timeoutMs: 1000 }],
    ...extra,
  };
}

async function runCheckOnly(opts: BuildAdwOptions): Promise<{ exit: number; events: RunEvent[]; run: Run }> {
  const run = new Run(ADW_NAME, opts.cwd);
  const events: RunEvent[] = [];
  run.subscribe((e) => events.push(e));
  const exit = await execute(run, buildPhases(opts).slice(0, 1));
  return { exit, events, run };
}

describe('adw_build declarations', () => {
  it('declares check, build (builder tools by default), then gates judging build', () => {
    const phases = buildPhases(options('/tmp'));
    expect(phases.map((p) => [p.name, p.kind, p.judges])).toEqual([
      ['check', 'code', undefined],
      ['build', 'agent', undefined],
      ['gates', 'code', 'build'],
    ]);
    expect(phases[1]!.retries).toBe(1);
    expect(BUILD_TOOLS).toEqual(['read', 'bash', 'edit', 'write', 'grep', 'find', 'ls']);
  });

  it('asks with the brief first, then the spec path and the gates that will judge', () => {
    const check: BuildCheck = {
      spec: 'specs/s.md',
      specBytes: 10,
      tree: { head: null, branch: 'main', dirty: [], untracked: [] },
    };
    const ask = buildAsk(options('/repo', { brief: '  Builder brief.  ' }), check);
    expect(ask.startsWith('Builder brief.\n\nImplement the spec in `specs/s.md`.')).toBe(true);
    expect(ask).toContain('- `npm test` (in payload) must exit 0');
    expect(ask).toContain('changed_files');
    expect(buildAsk(options('/repo'), check).startsWith('Implement the spec')).toBe(true);
  });
});

describe('adw_build check phase', () => {
  it('records the spec and the tree state', async () => {
    const repo = makeTempRepo({ files: { 'specs/s.md': '# spec\n' } });
    cleanups.push(repo.cleanup);
    fs.writeFileSync(path.join(repo.dir, 'wip.txt'), 'x');
    const { exit, run } = await runCheckOnly(options(repo.dir));
    expect(exit).toBe(0);
    expect(run.results.check).toMatchObject({
      spec: 'specs/s.md',
      specBytes: 7,
      tree: { branch: 'main', dirty: [], untracked: ['wip.txt'] },
    });
  });

  it('refuses a folder given as the spec, and a folder that is not a git work tree', async () => {
    const repo = makeTempRepo({ files: { 'specs/s.md': '# spec\n' } });
    cleanups.push(repo.cleanup);
    const asFolder = await runCheckOnly(options(repo.dir, { specPath: 'specs' }));
    expect(asFolder.exit).toBe(2); // a refused check is bad input
    expect(asFolder.events.find((e) => e.type === 'phase_failed')).toMatchObject({
      motif: 'spec is not a file: specs',
    });

    const plain = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-nogit-')));
    cleanups.push(() => fs.rmSync(plain, { recursive: true, force: true }));
    fs.mkdirSync(path.join(plain, 'specs'));
    fs.writeFileSync(path.join(plain, 'specs/s.md'), '# spec\n');
    const noGit = await runCheckOnly(options(plain));
    expect(noGit.exit).toBe(2);
    expect(noGit.events.find((e) => e.type === 'phase_failed')).toMatchObject({
      motif: `${plain} is not a git work tree: the build needs git to record its starting point`,
    });
  });
});
