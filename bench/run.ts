// `npm run bench`: the performance goals of the foundation, printed as ratios. Not part of `npm test`:
// timings belong here, never in unit tests.
import './ui-production.js';
import { benchP1 } from './p1-stream.js';
import { benchP2 } from './p2-overhead.js';
import { benchP3 } from './p3-cockpit.js';
import { benchNodes, benchP4 } from './p4-startup.js';
import { benchP5 } from './p5-doctor.js';
import { benchP6 } from './p6-clone-tokens.js';
import { benchP7 } from './p7-pruning.js';
import { benchP8 } from './p8-adversarial.js';
import { benchP9 } from './p9-cached-fanout.js';
import { benchP10 } from './p10-parallel-arms.js';
import { benchP11 } from './p11-spend.js';
import { reportP14 } from './p14-baseline-beside.js';
import { verdictLine } from './timing.js';

// `npm run bench p3:5 p6`: ids to run (all when none); `p3:<seconds>` shortens P3 for a quick check;
// `p5:quick` measures the doctor without its battery.
const only = process.argv.slice(2);
const wanted = (id: string) => only.length === 0 || only.some((arg) => arg.split(':')[0] === id);
const argOf = (id: string) => only.find((arg) => arg.startsWith(`${id}:`))?.slice(id.length + 1);

async function main(): Promise<void> {
  if (wanted('p1')) await benchP1();
  if (wanted('p2')) {
    const p2 = await benchP2();
    console.log(
      `P2 factory prompt ${p2.factoryMs.toFixed(0)} ms vs raw pi -p ${p2.piMs.toFixed(0)} ms: +${p2.overheadMs.toFixed(0)} ms, median of paired differences (goal ≤ 150 ms) — ${verdictLine(p2.overheadMs <= 150)}`,
    );
  }
  if (wanted('p3')) {
    const seconds = argOf('p3');
    await benchP3({ seconds: seconds ? Number(seconds) : undefined });
  }
  if (wanted('p4')) {
    // On every runtime at hand (the bench's own, Node 24 from .ci/node24, the bundled Node 22…).
    for (const node of benchNodes()) {
      const p4 = await benchP4(15, node);
      console.log(
        `P4 on Node ${p4.version}: factory --version ${p4.factoryMs.toFixed(0)} ms vs node -e 0 ${p4.nodeMs.toFixed(0)} ms: ${p4.ratio.toFixed(2)}× (+${(p4.factoryMs - p4.nodeMs).toFixed(0)} ms)`,
      );
    }
  }
  if (wanted('p5')) await benchP5({ quick: argOf('p5') === 'quick' });
  if (wanted('p6')) await benchP6();
  if (wanted('p7')) await benchP7();
  if (wanted('p8')) benchP8();
  if (wanted('p9')) await benchP9();
  if (wanted('p10')) await benchP10();
  if (wanted('p11')) await benchP11();
  if (wanted('p14')) await reportP14();
}

main().catch((error: unknown) => {
  console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
