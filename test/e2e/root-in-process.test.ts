// The composition root imported, not spawned: `runCli(argv, io)` runs a real prompt through the real pi and the
// scripted model in this very process, with the trace recorded as the CLI records it, and answers bad input with
// one line and exit 2. What a spawned CLI hides (the io it writes to, the lifecycle it leaves behind) shows here.
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli.js';
import { report } from '../../src/scripted/tape.js';
import { openTraceStore } from '../../src/trace/store.js';
import { promptBench, type PromptBench } from '../helpers/factory.js';

const GOOD = { status: 'success', summary: 'Three files.', artifacts: [], notes_for_next_agent: '' };

let bench: PromptBench | undefined;
const savedEnv = { ...process.env };
afterEach(async () => {
  process.env = { ...savedEnv };
  await bench?.cleanup();
  bench = undefined;
});

function captureIo(env: NodeJS.ProcessEnv): CliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    isTTY: false,
    env,
    out: () => out,
    err: () => err,
  };
}

describe('runCli in process', () => {
  it('a headless prompt: log on the given stderr, the envelope on the given stdout, the run in the trace; signals released', async () => {
    bench = await promptBench({ default: [report(GOOD)] });
    // The commands read the process environment (the agent dir, the pi under test), as the spawned CLI does.
    Object.assign(process.env, bench.rig.env, { CI: 'true' });
    const signalsBefore = process.listenerCount('SIGINT');
    const io = captureIo(process.env);
    const code = await runCli(
      ['prompt', 'Which files make up this repo?', '--model', 'scripted/alpha', '--cwd', bench.repo.dir],
      io,
    );
    expect(code).toBe(0);
    expect(JSON.parse(io.out())).toMatchObject(GOOD);
    const lines = io.err().trim().split('\n');
    expect(lines.at(-1)).toMatch(/^\[[0-9a-f]{8}\] run green — total cost ~\$0\.\d{4}$/);
    const adwId = /^\[([0-9a-f]{8})\]/.exec(lines[0]!)![1]!;
    // The root synced the trace at close: the run is indexed, green, with both phases.
    const store = openTraceStore(bench.paths);
    try {
      expect(store.listRuns(5)[0]).toMatchObject({
        adwId,
        adwName: 'adw_prompt',
        status: 'green',
        phases: '2/2',
        exitCode: 0,
      });
    } finally {
      store.close();
    }
    // The lifecycle took its signal handlers away with it.
    expect(process.listenerCount('SIGINT')).toBe(signalsBefore);
  });

  it('bad input: one line on the given stderr, exit 2, nothing on stdout', async () => {
    const io = captureIo(process.env);
    expect(await runCli(['prompt', '   ', '--no-ui'], io)).toBe(2);
    expect(io.err()).toBe('factory: empty ask: factory prompt "<what you want to know>"\n');
    expect(io.out()).toBe('');
    const flags = captureIo(process.env);
    expect(await runCli(['--frobnicate'], flags)).toBe(2);
    expect(flags.err().trim().split('\n')).toHaveLength(1);
  });

  it('--help and --version write to the given stdout', async () => {
    const help = captureIo(process.env);
    expect(await runCli(['--help'], help)).toBe(0);
    expect(help.out()).toContain('factory prompt "<ask>"');
    const version = captureIo(process.env);
    expect(await runCli(['--version'], version)).toBe(0);
    expect(version.out()).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
