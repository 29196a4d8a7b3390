// The doctor opened over a run (`d` on its screen) checks what the run runs on: the roster given with --config and
// the run's own environment, not the repository's default roster (the day-one trial's board said "4 failed" for
// keys and routes the run never used).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { doctorOfRun, doctorSession } from '../../src/commands/doctor.js';
import { openWorkspace } from '../../src/commands/workspace.js';
import { makeTempRepo, tempDir } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const REPO_ROSTER = readFileSync(new URL('../../adws/adw_config/factory.config.yaml', import.meta.url), 'utf8');
const LOCAL_ROSTER = 'gateway: ""\nagents:\n  builder:\n    model: local/m-correct\n';

function repoWithTwoRosters(): { dir: string; local: string } {
  const repo = makeTempRepo({ files: { 'adws/adw_config/factory.config.yaml': REPO_ROSTER } });
  cleanups.push(repo.cleanup);
  const outside = tempDir('factory-roster-', cleanups);
  const local = path.join(outside, 'factory-local.yaml');
  writeFileSync(local, LOCAL_ROSTER);
  mkdirSync(path.join(repo.dir, 'adws', 'adw_data'), { recursive: true });
  return { dir: repo.dir, local };
}

describe('the doctor over a run', () => {
  it('checks the roster the run was started with (--config), not the repository default', async () => {
    const { dir, local } = repoWithTwoRosters();
    const ws = await openWorkspace({ cwd: dir, config: local, retries: 0, ui: true, json: false }, { env: {} });
    expect(ws.rosterFile).toBe(local);
    const ids = (await doctorOfRun(ws)).planned.map((c) => c.id);
    // The repository roster names openrouter routes and their key for four roles; the run's roster only a local builder.
    expect(ids).toContain('models.route.builder');
    expect(ids.filter((id) => id.startsWith('models.key.'))).toEqual([]);
    // What the board's `d` used to read: the repository's roster, with its keys.
    const repoDefault = (await doctorSession([], { cwd: dir, retries: 0, ui: true, json: false }, {})).planned.map(
      (c) => c.id,
    );
    expect(repoDefault).toContain('models.key.OPENROUTER_API_KEY');
  });

  it('reads the run environment (a key the run has is not reported missing by the shell it was started from)', async () => {
    const { dir } = repoWithTwoRosters();
    const ws = await openWorkspace(
      { cwd: dir, retries: 0, ui: true, json: false },
      { env: { OPENROUTER_API_KEY: 'sk-or-v1-run-env-0123456789' } },
    );
    const session = await doctorOfRun(ws);
    const keys = session.planned.filter((c) => c.id === 'models.key.OPENROUTER_API_KEY');
    expect(keys).toHaveLength(1);
    const results = await session.pass();
    const row = results.find((r) => r.id === 'models.key.OPENROUTER_API_KEY');
    expect(row?.status).toBe('ok');
  });
});
