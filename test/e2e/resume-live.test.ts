// `factory resume` never takes over a run another cockpit is still driving: it would kill that cockpit's pi
// and put two writers on one session.
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../../src/scripted/tape.js';
import { runCli } from '../helpers/cli.js';
import { processesTagged, promptBench, type PromptBench } from '../helpers/factory.js';

let bench: PromptBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

describe('resume of a live run', () => {
  it('is refused in one line (exit 2) and leaves the live run untouched', async () => {
    bench = await promptBench({ default: [call('bash', { command: 'sleep 600' })] });
    const env = { ...bench.rig.env, CI: 'true' };
    let adwId: string | undefined;
    let resumed: Awaited<ReturnType<typeof runCli>> | undefined;
    const live = await runCli(['prompt', 'Which files?', '--model', 'scripted/alpha', '--cwd', bench.repo.dir], {
      env,
      onStderr: (child, stderr) => {
        if (adwId || !stderr.includes('session ')) return;
        adwId = /^\[([0-9a-f]{8})\]/.exec(stderr)?.[1];
        const poll = setInterval(() => {
          if (!adwId || !processesTagged(adwId).some(Boolean) || bench!.rig.model.requests.length === 0) return;
          clearInterval(poll);
          void runCli(['resume', adwId, '--no-ui', '--cwd', bench!.repo.dir], { env }).then((r) => {
            resumed = r;
            // The live run still has its pi and its tool: then it is interrupted as a user would.
            expect(processesTagged(adwId!).length).toBeGreaterThan(0);
            child.kill('SIGINT');
          });
        }, 100);
      },
    });
    expect(resumed?.code).toBe(2);
    expect(resumed?.stderr.trim().split('\n')).toHaveLength(1);
    expect(resumed?.stderr).toMatch(new RegExp(`run ${adwId} is still running \\(cockpit pid \\d+\\): stop it first`));
    expect(live.code).toBe(130);
  });
});
