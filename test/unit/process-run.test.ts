// The run-to-end helper on real processes: what ends a program early (timeout, cancel, output limit) ends its
// whole process group through the supervisor's ladder, a program deaf to SIGTERM is killed after the grace, and
// nothing it started is left behind.
import { describe, expect, it } from 'vitest';
import { runToEnd } from '../../src/process/run.js';
import { alive, until } from '../helpers/processes.js';
import { killAllChildren, liveChildren } from '../../src/process/supervisor.js';

/** Polls until `check()` holds (5 s at most). */
const waitFor = (check: () => boolean, ms = 5000) => until('the condition', check, ms);

/** A shell that starts a `sleep` in its group, prints the sleep's pid, then waits (on it, or forever). */
const WITH_GRANDCHILD = 'sleep 600 & echo $!; wait';

function pidIn(text: string): number {
  return Number(/(\d+)/.exec(text)?.[1]);
}

describe('runToEnd', () => {
  it('gives the exit code and both outputs, bytes untouched, and starts with EOF on stdin', async () => {
    const out = await runToEnd('sh', ['-c', 'cat; printf "out\\n\\0x"; echo err >&2; exit 3']);
    expect(out.code).toBe(3);
    expect(out.signal).toBeNull();
    expect(out.stdout.equals(Buffer.from('out\n\0x'))).toBe(true);
    expect(out.stderr.toString()).toBe('err\n');
    expect(out).toMatchObject({ timedOut: false, aborted: false, outputLimited: false, spawnError: undefined });
    expect(liveChildren()).toBe(0);
  });

  it('passes the environment as given, with the run tag', async () => {
    const out = await runToEnd('sh', ['-c', 'echo "$FACTORY_RUN_TAG:$ONLY_HERE:${HOME:-none}"'], {
      env: { PATH: process.env.PATH, ONLY_HERE: 'yes' },
      runTag: 'tag12345',
    });
    expect(out.stdout.toString()).toBe('tag12345:yes:none\n');
  });

  it('reports a program that cannot start, by its errno name', async () => {
    const out = await runToEnd('factory-no-such-program', []);
    expect(out.spawnError?.code).toBe('ENOENT');
    expect(out.code).toBeNull();
    expect(liveChildren()).toBe(0);
  });

  it('on timeout ends the whole group, the grandchild included', async () => {
    let printed = '';
    const out = await runToEnd('sh', ['-c', WITH_GRANDCHILD], {
      timeoutMs: 300,
      onOutput: (chunk) => (printed += chunk.toString()),
    });
    expect(out.timedOut).toBe(true);
    expect(out.code).toBeNull();
    expect(out.signal).toBe('SIGTERM'); // the timeout ended it (timedOut), not the sleep: no wall-clock bound needed
    await waitFor(() => !alive(pidIn(printed)));
    expect(liveChildren()).toBe(0);
  });

  it('on cancel ends the group; already cancelled, it starts nothing', async () => {
    const controller = new AbortController();
    let printed = '';
    const running = runToEnd('sh', ['-c', WITH_GRANDCHILD], {
      signal: controller.signal,
      onOutput: (chunk) => {
        printed += chunk.toString();
        controller.abort();
      },
    });
    const out = await running;
    expect(out.aborted).toBe(true);
    expect(out.timedOut).toBe(false);
    await waitFor(() => !alive(pidIn(printed)));

    const never = await runToEnd('sh', ['-c', 'echo ran'], { signal: controller.signal });
    expect(never).toMatchObject({ aborted: true, code: null });
    expect(never.stdout.length).toBe(0);
  });

  it('kills a program deaf to SIGTERM once the grace is over', async () => {
    const deaf = "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000);";
    // Ended only once it says its handler is in place (a loaded machine can take longer than any fixed timeout
    // to start Node): the SIGTERM then surely lands on a program that ignores it.
    const controller = new AbortController();
    let endedAt = 0;
    const out = await runToEnd(process.execPath, ['-e', deaf], {
      signal: controller.signal,
      killGraceMs: 400,
      onOutput: (chunk) => {
        if (endedAt === 0 && chunk.toString().includes('ready')) {
          endedAt = Date.now();
          controller.abort();
        }
      },
    });
    const took = Date.now() - endedAt;
    expect(out.aborted).toBe(true);
    expect(out.signal).toBe('SIGKILL');
    // SIGKILL came after the grace, not before it (an upper bound would only measure the machine).
    expect(took).toBeGreaterThanOrEqual(350);
  });

  it('ends a program whose output passes the limit, and keeps what came before it', async () => {
    const out = await runToEnd('sh', ['-c', 'yes'], { maxOutputBytes: 10_000, timeoutMs: 10_000 });
    expect(out.outputLimited).toBe(true);
    expect(out.timedOut).toBe(false);
    expect(out.stdout.length).toBe(10_000);
    expect(out.stdout.subarray(0, 4).toString()).toBe('y\ny\n');
  });

  it('keeps the whole output of a program that writes a lot and ends with process.exit() (stdout through a file)', async () => {
    const size = 400_000;
    const script = `process.stdout.write('x'.repeat(${size})); process.exit(3)`;
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => runToEnd(process.execPath, ['-e', script], { stdoutToFile: true })),
    );
    for (const out of runs) {
      expect(out.code).toBe(3);
      expect(out.stdout.length).toBe(size);
    }
    const cut = await runToEnd(process.execPath, ['-e', script], { stdoutToFile: true, maxOutputBytes: 1000 });
    expect(cut.stdout.length).toBe(1000);
    expect(cut.outputLimited).toBe(true);
  });

  it('gives every chunk to onOutput in order, and keeps nothing when told so', async () => {
    const chunks: string[] = [];
    const out = await runToEnd('sh', ['-c', 'echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three'], {
      keepOutput: false,
      onOutput: (chunk, from) => chunks.push(`${from}:${chunk.toString().trim()}`),
    });
    expect(out.code).toBe(0);
    expect(chunks).toEqual(['stdout:one', 'stderr:two', 'stdout:three']);
    expect(out.stdout.length + out.stderr.length).toBe(0);
  });

  it('sweeps the group when the program ends on its own, and does not wait for pipes held by an escaped process', async () => {
    // A sleep left in the group and one in a session of its own (found by its spawn id) die with the sweep; the one
    // that escaped both group and spawn id holds the pipe open until drainMs.
    const script = [
      'sleep 600 & echo $!',
      "setsid sh -c 'echo $$; exec sleep 600' &",
      'sleep 0.2',
      // Its own pid, not $!: setsid may fork, and $! would then be a setsid that has already ended.
      "env -u FACTORY_SPAWN_ID setsid sh -c 'echo $$ >&2; exec sleep 600' &",
      'sleep 0.2',
      'exit 0',
    ].join('\n');
    const out = await runToEnd('sh', ['-c', script], { drainMs: 200 });
    expect(out.code).toBe(0);
    // runToEnd came back while the escaped sleep still held the pipes: it did not wait for them to close.
    const escaped = Number(out.stderr.toString().trim());
    try {
      expect(escaped).toBeGreaterThan(0);
      expect(alive(escaped)).toBe(true);
    } finally {
      if (escaped > 0) process.kill(escaped, 'SIGKILL');
    }
    const pids = out.stdout.toString().trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    await waitFor(() => pids.every((pid) => !alive(pid)));
    expect(liveChildren()).toBe(0);
  });

  it('is in the supervisor live set while it runs: killAllChildren ends it', async () => {
    let printed = '';
    const running = runToEnd('sh', ['-c', WITH_GRANDCHILD], { onOutput: (chunk) => (printed += chunk.toString()) });
    await waitFor(() => printed !== '');
    expect(liveChildren()).toBe(1);
    await killAllChildren(300);
    const out = await running;
    expect(out.signal).toBe('SIGTERM');
    expect(alive(pidIn(printed))).toBe(false);
    expect(liveChildren()).toBe(0);
  });
});
