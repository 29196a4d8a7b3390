// The node battery: the factory's pi node loaded whole by the pi the cockpit will use, in a throwaway project
// set up the way `factory init` sets up a repository, each extension proven active by what it does — at zero
// tokens (a scripted model on 127.0.0.1, a private pi agent dir, no key, no network). It needs nothing but
// the cockpit itself: an installed cockpit has no test runner, so the battery is plain code, and the
// `.pi/tests` suite of a checkout asserts the very same probes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { readCheckpoint } from '../../.pi/lib/checkpoint.js';
import { SOCLE } from '../harness/types.js';
import { NODE_EXTENSIONS } from '../pi/node.js';
import { startScriptedModel } from '../scripted/server.js';
import { call, report, say } from '../scripted/tape.js';
import {
  type BatteryOptions,
  ENVELOPE,
  BRIEF_MARKER,
  MISSION,
  ADW_ID,
  parseLines,
  toolEnds,
  resultText,
  customEntries,
  jsonRun,
  compactOnce,
  type Live,
  makeProject,
} from './batteryRig.js';

export interface BatteryProbe {
  /** The extension (or `pi`) the probe proves. */
  name: string;
  ok: boolean;
  /** What was seen: one line. */
  detail: string;
}

export type { BatteryOptions } from './batteryRig.js';

export interface BatteryOutcome {
  probes: BatteryProbe[];
  /** The version the inventory reported (the pi that really ran the node). */
  piVersion?: string;
  /** The deadline ended the battery's pi processes: the red probes say so, not what the node does. */
  timedOut: boolean;
  ms: number;
}

/** The node's extensions whose file exists in `factoryRoot`, in the node's order. */
export function extensionsOnDisk(factoryRoot: string): string[] {
  return NODE_EXTENSIONS.filter((name) => fs.existsSync(path.join(factoryRoot, '.pi', 'extensions', `${name}.ts`)));
}

/** What the inventory must report: the socle always (a missing file is a missing extension), plus the rest on disk. */
export function expectedExtensions(factoryRoot: string): string[] {
  const onDisk = extensionsOnDisk(factoryRoot);
  return NODE_EXTENSIONS.filter((name) => onDisk.includes(name) || (SOCLE as readonly string[]).includes(name));
}

function probe(name: string, checks: Array<[boolean, string]>, okDetail: string): BatteryProbe {
  const failed = checks.find(([ok]) => !ok);
  return failed ? { name, ok: false, detail: failed[1] } : { name, ok: true, detail: okDetail };
}

/** Runs the battery; never throws for a red node (each probe says what it saw), only for a broken set-up. */
export async function runNodeBattery(opts: BatteryOptions): Promise<BatteryOutcome> {
  const start = performance.now();
  const expected = expectedExtensions(opts.factoryRoot);
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-battery-')));
  const model = await startScriptedModel({
    tapes: {
      // One phase through the whole node: a destructive command, a traced command, then the gate.
      pipeline: [
        call('bash', { command: 'rm -rf /' }),
        call('bash', { command: 'echo battery > obs.txt' }),
        report(ENVELOPE),
        say('never requested'),
      ],
      guard: [
        call('bash', { command: 'echo one' }),
        call('bash', { command: 'echo two > two.txt' }),
        say('never requested'),
      ],
      compact: [say('noted'), say('still noted'), say('## Progress\n### Done\n- the battery ran')],
    },
  });
  const live: Live = { children: new Set(), expired: false };
  const timer = setTimeout(() => {
    live.expired = true;
    live.children.forEach((child) => void child.kill(500));
  }, opts.timeoutMs ?? 180_000);
  try {
    const project = await makeProject(scratch, opts, model, expected, live);
    const [pipeline, guarded, compaction] = await Promise.all([
      jsonRun(opts, project, 'run the battery [tape:pipeline]'),
      jsonRun(opts, project, 'run the guard [tape:guard]', { FACTORY_MAX_TOOL_CALLS: '1' }),
      expected.includes('factory-compact') ? compactOnce(opts, project) : Promise.resolve(undefined),
    ]);
    const probes: BatteryProbe[] = [];
    probes.push(
      probe(
        'pi',
        [
          [
            pipeline.code === 0 && guarded.code === 0,
            `pi exited ${pipeline.code ?? 'by a signal'} / ${guarded.code ?? 'by a signal'}`,
          ],
        ],
        'ran both phases to their end',
      ),
    );

    const inventories = customEntries(pipeline.lines, 'factory-inventory') as Array<{
      pi_version?: string;
      present?: string[];
      missing?: string[];
    }>;
    const inventory = inventories[0];
    const at = pipeline.lines.findIndex((l) => l.type === 'entry_appended');
    const firstAnswer = pipeline.lines.findIndex(
      (l) => l.type === 'message_end' && (l.message as { role?: string } | undefined)?.role === 'assistant',
    );
    probes.push(
      probe(
        'factory-inventory',
        [
          [inventories.length === 1, `${inventories.length} inventory entries (one expected)`],
          [(inventory?.missing ?? ['?']).length === 0, `missing: ${(inventory?.missing ?? []).join(', ')}`],
          [
            isDeepStrictEqual([...(inventory?.present ?? [])].sort(), [...expected].sort()),
            `present: ${(inventory?.present ?? []).join(', ') || 'none'}`,
          ],
          [at >= 0 && at < firstAnswer, 'the inventory came after the first answer'],
        ],
        `${expected.length}/${expected.length} extensions loaded (pi ${inventory?.pi_version ?? '?'})`,
      ),
    );

    const [blocked, allowed] = toolEnds(pipeline.lines, 'bash');
    const obsFile = path.join(project.dir, 'obs.txt');
    probes.push(
      probe(
        'damage-control',
        [
          [
            blocked?.isError === true && /^Blocked by damage-control/.test(resultText(blocked)),
            '`rm -rf /` was not blocked',
          ],
          [
            allowed?.isError === false && fs.existsSync(obsFile) && fs.readFileSync(obsFile, 'utf8') === 'battery\n',
            'a harmless command did not run',
          ],
        ],
        '`rm -rf /` blocked, a harmless command ran',
      ),
    );

    const [reported] = toolEnds(pipeline.lines, 'report_phase');
    probes.push(
      probe(
        'factory-report',
        [
          [reported?.isError === false, 'report_phase was not registered or refused the envelope'],
          [
            isDeepStrictEqual((reported?.result as { details?: unknown } | undefined)?.details, ENVELOPE),
            'report_phase did not return the envelope',
          ],
          [
            model.requestsFor('pipeline').length === 3,
            `${model.requestsFor('pipeline').length} model calls (the report must end the run at 3)`,
          ],
        ],
        'report_phase validated the envelope and ended the run',
      ),
    );

    const traceFile = path.join(project.dataDir, 'traces', 'harness', `${pipeline.sessionId}.jsonl`);
    const trace = fs.existsSync(traceFile) ? parseLines(fs.readFileSync(traceFile, 'utf8')) : [];
    const stamped = trace.find((l) => l.type === 'tool_end' && l.tool_name === 'bash');
    probes.push(
      probe(
        'factory-obs',
        [
          [trace.length > 0, `no harness trace at ${traceFile}`],
          [
            trace[0]?.type === 'session_start' && trace.at(-1)?.type === 'session_shutdown',
            'the trace does not run from session_start to session_shutdown',
          ],
          [trace.filter((l) => l.type === 'tool_end').length === 3, 'the trace does not hold the three tool calls'],
          [
            stamped?.phase === 'build' && stamped?.role === 'builder' && stamped?.adw_id === ADW_ID,
            'trace lines are not stamped with the phase',
          ],
        ],
        'the harness trace holds the session, its tool calls and the shutdown',
      ),
    );

    const guardEnds = toolEnds(guarded.lines, 'bash');
    probes.push(
      probe(
        'factory-guard',
        [
          [
            guardEnds.length === 2 && guardEnds[0]?.isError === false && guardEnds[1]?.isError === true,
            'the call over the limit was not blocked',
          ],
          [resultText(guardEnds[1]).includes('factory-guard tripped'), 'the block does not name factory-guard'],
          [!fs.existsSync(path.join(project.dir, 'two.txt')), 'the blocked command ran anyway'],
          [model.requestsFor('guard').length === 2, 'the agent was not stopped after the trip'],
        ],
        'the call over FACTORY_MAX_TOOL_CALLS was blocked and the agent stopped',
      ),
    );

    if (expected.includes('factory-context')) {
      const first = JSON.stringify(model.requestsFor('pipeline')[0]?.body.messages ?? []);
      probes.push(
        probe(
          'factory-context',
          [[first.includes(BRIEF_MARKER), 'the role brief did not reach the model']],
          'the role brief reached the model with the first request',
        ),
      );
    }
    if (compaction !== undefined) {
      const summary =
        compaction instanceof Error
          ? ''
          : String((compaction.data as { summary?: unknown } | undefined)?.summary ?? '');
      probes.push(
        probe(
          'factory-compact',
          [
            [
              !(compaction instanceof Error) && compaction.success === true,
              compaction instanceof Error ? compaction.message : 'the compaction failed',
            ],
            [
              readCheckpoint(summary).carried?.mission?.text === MISSION,
              'the summary lost the [FACTORY] block or the mission in it',
            ],
          ],
          'a compaction kept the [FACTORY] block and the mission verbatim',
        ),
      );
    }
    return { probes, piVersion: inventory?.pi_version, timedOut: live.expired, ms: performance.now() - start };
  } finally {
    clearTimeout(timer);
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
