// MCP servers stay out of factory nodes. The repo's `.pi/mcp.json` (pi reads it once --approve grants trust) names a
// stdio "server" whose only act is to leave a marker file when pi starts it. pi ≥ 0.99 starts it for a plain
// `pi --approve` run (the control: proof the setup would show a leak) and not for the factory's attempt, which
// passes --no-mcp because the version is known from pi's package.json without spawning pi. pi 0.85 has no MCP and
// refuses the flag ("Unknown option"): there the attempt must go green without it, and no marker ever appears.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Envelope, schema } from '../../src/envelope/envelopes.js';
import { runPiAttempt } from '../../src/harness/pi.js';
import { knownPiVersion, PI_NO_MCP_SINCE } from '../../src/pi/piVersion.js';
import { compareVersions } from '../../src/pi/resolve.js';
import { report, say } from '../../src/scripted/tape.js';
import { promptBench, type PromptBench } from '../helpers/factory.js';
import { runPiJson } from '../helpers/rig.js';

const GOOD = { status: 'success', summary: 'Three files.', artifacts: ['README.md'], notes_for_next_agent: '' };

let bench: PromptBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

/** Points the repo's .pi/mcp.json at a stdio server that writes `marker` when started. */
function mcpProbe(repoDir: string, marker: string): void {
  const script = `require('fs').writeFileSync(${JSON.stringify(marker)}, 'started'); setTimeout(() => {}, 5000);`;
  fs.writeFileSync(
    path.join(repoDir, '.pi', 'mcp.json'),
    JSON.stringify({ mcpServers: { probe: { command: process.execPath, args: ['-e', script] } } }),
  );
}

async function appears(file: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (fs.existsSync(file)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return fs.existsSync(file);
}

describe('MCP servers in a factory node', () => {
  it("the user's MCP servers do not start in a factory attempt; the attempt is green on every supported pi", async () => {
    bench = await promptBench({ default: [report(GOOD)], control: [say('ok')] });
    const { rig, repo, paths } = bench;
    const hasMcp = compareVersions(rig.piVersion, PI_NO_MCP_SINCE) >= 0;
    expect(knownPiVersion(rig.pi)).toBe(rig.piVersion); // known without a spawn: the flag can be gated at no cost

    const controlMarker = path.join(repo.dir, '..', `${path.basename(repo.dir)}-control.marker`);
    mcpProbe(repo.dir, controlMarker);
    const control = await runPiJson(rig, { cwd: repo.dir, prompt: '[tape:control] hello', args: ['--approve'] });
    expect(control.exitCode).toBe(0);
    expect(await appears(controlMarker, 5_000)).toBe(hasMcp);

    const factoryMarker = path.join(repo.dir, '..', `${path.basename(repo.dir)}-factory.marker`);
    mcpProbe(repo.dir, factoryMarker);
    const jsonSchema = schema(Envelope) as { title: string };
    const result = await runPiAttempt(rig.pi, {
      prompt: 'Which files?',
      cwd: repo.dir,
      workspace: paths,
      model: rig.agentDir.route,
      envelopeSchema: { title: jsonSchema.title, schema: jsonSchema },
      identity: { adwId: 'mcp00001', phase: 'prompt', role: 'prompter' },
      timeoutMs: 30_000,
      idleTimeoutMs: 30_000,
      env: rig.env,
    });
    expect(result).toMatchObject({ source: 'gate', payload: { status: 'success' } });
    expect(await appears(factoryMarker, 2_000)).toBe(false);
    fs.rmSync(controlMarker, { force: true });
  });
});
