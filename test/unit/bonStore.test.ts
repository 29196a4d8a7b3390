import { whyFirst } from '../../src/bon/harvest/rank.js';
import { describe, expect, it } from 'vitest';
import {
  armsOf,
  createBonStore,
  initialBonState,
  MAX_ARMS,
  primerLine,
  primerTextOf,
  proposalLine,
  reduceBonEvent,
  reduceBonUi,
  selectedArm,
  whyFirstOf,
  type BonAction,
  type BonEffect,
  type BonState,
} from '../../state/bon/store.js';
import { bonModeOf, dispatchBonIntent, type BonController, type BonIntent } from '../../state/controller.js';
import { BON_KEYS, helpText, intentFor, keyLabel } from '../../components/keymap.js';
import type { ArmRank, FailureKind, RunEvent } from '../../src/contract/events.js';
import { foldSteps } from '../../state/step.js';
import { ev, eventsThrough, RANKING, RED_MOTIF, samplePatch, STAGES, T0, type Stage } from '../helpers/bonEvents.js';
import { recordingBonController, type RecordingBonController } from '../helpers/bonController.js';

function fold(events: readonly RunEvent[], state: BonState = initialBonState()): BonState {
  return events.reduce(reduceBonEvent, state);
}
const through = (stage: Stage) => fold(eventsThrough(stage));
const ui = (state: BonState, ...actions: BonAction[]) => foldSteps(reduceBonUi, actions, state).state;
const arm = (state: BonState, k: number, now = T0 + 20_000) => {
  const view = armsOf(state, now).find((candidate) => candidate.arm === k);
  if (view === undefined) throw new Error(`no arm_${k}`);
  return view;
};

describe('reduceBonEvent: the arms of a best-of-3', () => {
  it('run_started lists the arms pending, in plan order, and forgets any earlier run', () => {
    const earlier = through('harvested');
    const state = fold(eventsThrough('started').slice(0, 1), earlier);
    expect(armsOf(state, T0).map((view) => [view.arm, view.status, view.turns])).toEqual([
      [1, 'pending', 0],
      [2, 'pending', 0],
      [3, 'pending', 0],
    ]);
    expect(state.bon.harvest).toBeUndefined();
    expect(state.bon.arms).toEqual({});
  });

  it('phase_started and attempt_started: the arm runs with its model; its clock ticks from its start', () => {
    const state = fold([...eventsThrough('arm2'), ...STAGES.arm3running.slice(0, 2)]);
    const view = arm(state, 3, T0 + 12_700 + 2_500);
    expect(view).toMatchObject({ status: 'running', model: 'scripted/pricey', turns: 0, tokens: 0 });
    expect(view.seconds).toBeCloseTo(2.5, 5);
  });

  it('usage counts turns and shows the live figures; activity keeps the last tool call only', () => {
    const view = arm(through('arm3running'), 3);
    expect(view).toMatchObject({ turns: 2, tokens: 1300, cost: 0.0027, lastTool: 'bash npm test' });
    // A text line is not a tool call: arm_1's last call stays the edit.
    expect(arm(through('arm1'), 1).lastTool).toBe('edit src/sum.js');
  });

  it('usage of a phase that is not live, and activity of the primer, touch no arm', () => {
    const before = through('arm1');
    const after = fold([ev('usage', 9000, { phase: 'arm_1', tokens: 5000, cost: 1 })], before);
    expect(arm(after, 1)).toMatchObject({ turns: 2, tokens: 1100 });
    expect(after.bon.arms.prime).toBeUndefined();
  });

  it('gate_result, phase_ok and arm_patch: a green arm with its chips and patch', () => {
    expect(arm(through('arm1'), 1)).toMatchObject({
      status: 'green',
      tokens: 1100,
      cost: 0.0021,
      seconds: 4,
      gates: [
        { gate: 'changed_files', ok: true },
        { gate: 'npm test', ok: true },
      ],
      patch: { bytes: 1536, files: ['src/sum.js'] },
      motif: undefined,
    });
  });

  it('phase_failed on a red gate: red with the motif; patch harvested all the same', () => {
    expect(arm(through('arm2'), 2)).toMatchObject({ status: 'red', motif: RED_MOTIF, patch: { bytes: 800 } });
  });

  it('an arm whose abort was asked ends "aborted"; a dead pi reads "crashed" — from the failure kind, never the motif', () => {
    let state = through('arm3running');
    state = ui(ui(state, { type: 'abort_arm' }), { type: 'confirm_abort' });
    expect(arm(state, 3)).toMatchObject({ status: 'running', aborting: true });
    state = fold(
      [
        ev('phase_failed', 17000, {
          phase: 'arm_3',
          kind: 'agent',
          attempts: 2,
          motif: 'turn aborted by the user',
          seconds: 4.3,
          tokens: 1300,
          cost: 0.0027,
        }),
      ],
      state,
    );
    expect(arm(state, 3)).toMatchObject({ status: 'aborted', aborting: false, motif: 'turn aborted by the user' });

    const died = (motif: string, failure: FailureKind) =>
      arm(
        fold(
          [
            ev('phase_failed', 17000, {
              phase: 'arm_3',
              kind: 'agent',
              attempts: 2,
              motif,
              failure,
              seconds: 4.3,
              tokens: 1300,
              cost: 0.0027,
            }),
          ],
          through('arm3running'),
        ),
        3,
      ).status;
    expect(died('crashed: pi exited with signal SIGKILL', 'crashed')).toBe('crashed');
    expect(died('pi exited mid-turn (code 1)', 'exit')).toBe('crashed');
    expect(died('the turn ended', 'aborted')).toBe('aborted');
    expect(died('no JSON object in the answer', 'verdict')).toBe('red');
    // The words of a motif decide nothing: an agent may well write "crashed" in its own answer.
    expect(died('crashed: the agent says so', 'verdict')).toBe('red');
  });

  it('attempt_failed with a retry keeps the arm running (its correction turn)', () => {
    const state = fold(
      [
        ev('attempt_failed', 15000, {
          phase: 'arm_3',
          attempt: 1,
          attempts: 2,
          motif: 'no JSON object',
          willRetry: true,
        }),
      ],
      through('arm3running'),
    );
    expect(arm(state, 3).status).toBe('running');
  });

  it('phase_planned inserts the cloned arm before harvest, once; without `before` it is appended', () => {
    let state = ui(through('arm3running'), { type: 'clone' });
    expect(state.bon.ui.pendingClones).toBe(1);
    const planned = ev('phase_planned', 16600, {
      phase: { name: 'arm_4', kind: 'agent', attempts: 2, arm: 4 },
      before: 'harvest',
    });
    state = fold([planned, planned], state);
    expect(state.phases.map((phase) => phase.name)).toEqual([
      'check',
      'prime',
      'arm_1',
      'arm_2',
      'arm_3',
      'arm_4',
      'harvest',
    ]);
    expect(state.bon.ui.pendingClones).toBe(0);
    expect(arm(state, 4).status).toBe('pending');

    const appended = fold(
      [ev('phase_planned', 1, { phase: { name: 'extra', kind: 'code', attempts: 1 } })],
      through('started'),
    );
    expect(appended.phases.at(-1)?.name).toBe('extra');
  });

  it('harvest: ranks (#1 #2 #3), the winner starred and selected by default, the primer kept', () => {
    const state = through('harvested');
    const views = armsOf(state, T0 + 20_000);
    expect(views.map((view) => [view.arm, view.rank, view.winner])).toEqual([
      [1, 1, true],
      [2, 3, false],
      [3, 2, false],
    ]);
    expect(selectedArm(state)).toBe(1);
    expect(state.bon.harvest?.primer).toEqual({ tokens: 2100, cost: 0.005, sessionId: 'primer-1' });
    expect(state.bon.harvest?.applyCommand).toBe('factory apply b0b0b0b0');
    // Totals count the primer once plus each arm's own figures.
    expect(state.totals.tokens).toBe(2100 + 1100 + 900 + 1600);
  });

  it('a harvest that says an arm is red makes it red even when its phase ended ok', () => {
    const ranking: ArmRank[] = RANKING.map((rank) =>
      rank.arm === 3 ? { ...rank, green: false, motif: 'patch empty' } : rank,
    );
    const events = eventsThrough('harvested').map((event) =>
      event.type === 'harvest' ? { ...event, ranking } : event,
    );
    expect(arm(fold(events), 3)).toMatchObject({ status: 'red', motif: 'patch empty' });
  });

  it('run_finished interrupted mid-arm: the live arm ends aborted', () => {
    const state = fold(
      [ev('run_finished', 17000, { exit: 130, seconds: 17, tokens: 5400, cost: 0.0116, interrupted: true })],
      through('arm3running'),
    );
    expect(arm(state, 3)).toMatchObject({ status: 'aborted', motif: 'interrupted' });
  });

  it('events of another run are ignored', () => {
    const state = through('arm1');
    expect(
      reduceBonEvent(
        state,
        ev('arm_patch', 1, { phase: 'arm_2', arm: 2, patchFile: 'x', bytes: 1, files: [] }, 'ffffffff'),
      ),
    ).toBe(state);
  });
});

describe('whyFirst and primerLine', () => {
  it('names the winner against the green runner-up, with the saving and the red count', () => {
    expect(whyFirst(RANKING)).toBe(
      'why #1: arm_1 (scripted/fast) is green and cheapest: $0.0021 vs $0.0034 for arm_3 (-38%) (1 red)',
    );
  });

  it('same cost: faster; same cost and time: plan order; the only green; no green', () => {
    const tie = (seconds: number): ArmRank[] => [
      { ...RANKING[0], cost: 0.002, seconds: 3 },
      { ...RANKING[1], cost: 0.002, seconds },
    ];
    expect(whyFirst(tie(5))).toBe(
      'why #1: arm_1 (scripted/fast) is green, as cheap as arm_3 ($0.0020) and faster: 3.0s vs 5.0s',
    );
    expect(whyFirst(tie(3))).toBe(
      'why #1: arm_1 (scripted/fast) is green and ties arm_3 on cost and time (within 10 %): first in plan order',
    );
    expect(whyFirst([RANKING[0], RANKING[2]])).toBe('why #1: arm_1 (scripted/fast) is the only green arm (1 red)');
    expect(whyFirst([RANKING[2]])).toMatch(/^no green arm: nothing to apply \(the best ranked, arm_\d, is red/);
    expect(whyFirst([])).toBe('no arm ran: nothing to apply');
  });

  it('primer: paid once, and after the harvest what cold arms would have paid more', () => {
    expect(primerLine({ tokens: 2100, cost: 0.005 }, 3, false)).toBe('primer: 2.1k tokens, $0.0050, paid once');
    expect(primerLine({ tokens: 2100, cost: 0.005 }, 3, true)).toBe(
      'primer: 2.1k tokens, $0.0050, paid once — cold it would have been paid 3 times: ~4.2k more tokens',
    );
  });
});

describe('reduceBonUi: selection, diff, abort, clone, apply', () => {
  it('←/→ move the selection among the arms and stop at the ends', () => {
    const state = through('harvested');
    expect(selectedArm(ui(state, { type: 'select', by: 1 }))).toBe(2);
    expect(
      selectedArm(ui(state, { type: 'select', by: 1 }, { type: 'select', by: 1 }, { type: 'select', by: 1 })),
    ).toBe(3);
    expect(selectedArm(ui(state, { type: 'select', by: -1 }))).toBe(1);
    // Before the harvest the default is the running arm.
    expect(selectedArm(through('arm3running'))).toBe(3);
  });

  it('the diff opens only on a harvested patch, loads, scrolls within bounds, drops stale answers', () => {
    const running = through('arm3running');
    const refused = ui(running, { type: 'open_diff' });
    expect(refused.bon.ui.diff).toBeUndefined();
    expect(refused.ui.statusLine).toMatch(/arm_3 has no patch yet/);

    let state = ui(through('harvested'), { type: 'open_diff' });
    expect(state.bon.ui.diff).toMatchObject({ arm: 1, status: 'loading', offset: 0 });
    expect(ui(state, { type: 'diff_loaded', arm: 2, text: 'x' }).bon.ui.diff?.status).toBe('loading');
    state = ui(state, { type: 'diff_loaded', arm: 1, text: samplePatch(40) });
    expect(state.bon.ui.diff?.lines).toHaveLength(47);
    state = ui(state, { type: 'scroll', by: 5, page: 20 });
    expect(state.bon.ui.diff?.offset).toBe(5);
    expect(ui(state, { type: 'scroll', by: -50, page: 20 }).bon.ui.diff?.offset).toBe(0);
    expect(ui(state, { type: 'scroll_to', to: 'bottom', page: 20 }).bon.ui.diff?.offset).toBe(27);
    expect(ui(state, { type: 'scroll', by: 500, page: 20 }).bon.ui.diff?.offset).toBe(27);
    expect(ui(state, { type: 'close_diff' }).bon.ui.diff).toBeUndefined();
    const failed = ui(ui(through('harvested'), { type: 'open_diff' }), {
      type: 'diff_failed',
      arm: 1,
      message: 'ENOENT:\n no such file',
    });
    expect(failed.bon.ui.diff).toMatchObject({ status: 'failed', error: 'ENOENT: no such file' });
  });

  it('abort_arm asks first, then marks the running arm once; n keeps it; with no arm running it only says so', () => {
    const asked = ui(through('arm3running'), { type: 'abort_arm' });
    expect(asked.bon.ui.confirmAbort).toBe(3);
    expect(asked.bon.arms.arm_3.abortRequested).toBeFalsy();
    expect(asked.ui.statusLine).toBe('abort arm_3? y aborts it (the other arms go on), n keeps it running');
    const kept = ui(asked, { type: 'cancel_abort' });
    expect(kept.bon.ui.confirmAbort).toBeUndefined();
    expect(kept.ui.statusLine).toBe('arm_3 keeps running');
    const state = ui(asked, { type: 'confirm_abort' });
    expect(state.bon.arms.arm_3.abortRequested).toBe(true);
    expect(state.ui.statusLine).toBe('aborting arm_3… the other arms go on');
    expect(ui(state, { type: 'abort_arm' }).ui.statusLine).toBe('arm_3 is already being aborted');
    const idle = ui(through('arm2'), { type: 'abort_arm' });
    expect(idle.bon.arms).toEqual(through('arm2').bon.arms);
    expect(idle.ui.statusLine).toBe('no arm is running');
  });

  it(`clone counts arms asked but not yet planned, stops at ${MAX_ARMS} and after the harvest`, () => {
    let state = ui(through('arm3running'), { type: 'clone' }, { type: 'clone' });
    expect(state.bon.ui.pendingClones).toBe(2);
    state = ui(state, { type: 'clone' });
    expect(state.bon.ui.pendingClones).toBe(2);
    expect(state.ui.statusLine).toBe('already 5 arms: no more clones');
    const late = ui(through('harvested'), { type: 'clone' });
    expect(late.bon.ui.pendingClones).toBe(0);
    expect(late.ui.statusLine).toBe('the harvest has begun: no more arms');
  });

  it('a clone the core refuses is answered at once: its count goes down and the board says why', () => {
    const asked = ui(through('arm3running'), { type: 'clone' }, { type: 'clone' });
    const refused = fold([ev('clone_refused', 9_000, { motif: 'the harvest is done: no more arms' })], asked);
    expect(refused.bon.ui.pendingClones).toBe(1);
    expect(refused.ui.statusLine).toBe('the harvest is done: no more arms');
  });

  it('apply waits for the harvest, asks first, then hands one arm over', () => {
    expect(ui(through('arm3done'), { type: 'ask_apply' }).ui.statusLine).toBe('apply waits for the harvest');
    let state = ui(through('harvested'), { type: 'ask_apply' });
    expect(state.bon.ui.confirmApply).toBe(1);
    expect(bonModeOf(state)).toBe('confirm-apply');
    const cancelled = ui(state, { type: 'cancel_apply' });
    expect([cancelled.bon.ui.confirmApply, cancelled.bon.ui.applying, cancelled.ui.statusLine]).toEqual([
      undefined,
      undefined,
      'apply cancelled',
    ]);
    state = ui(state, { type: 'confirm_apply' });
    expect(state.bon.ui).toMatchObject({ confirmApply: undefined, applying: 1 });
    // A red arm can be chosen, and the question says it is red.
    const red = ui(through('harvested'), { type: 'select', by: 1 }, { type: 'ask_apply' });
    expect(red.ui.statusLine).toBe("apply arm_2's patch (it is red)? y applies, n cancels");
  });
});

describe('unverified arms: every gate red on HEAD the same way', () => {
  // arms 1 and 3 leave `npm test` red exactly as on HEAD: the core excuses it, and nothing verified them.
  const excusedRun = (stage: Stage): RunEvent[] =>
    eventsThrough(stage).map((event) => {
      const own = 'phase' in event && (event.phase === 'arm_1' || event.phase === 'arm_3');
      if (event.type === 'gate_result' && own && event.gate === 'npm test')
        return { ...event, ok: false, motif: RED_MOTIF, preexisting: true };
      if (event.type === 'phase_ok' && own)
        return {
          ...event,
          result: { arm: Number(event.phase.slice(4)), green: false, unverified: true, excused: ['npm test'] },
        };
      if (event.type === 'harvest') {
        const ranking = RANKING.map((rank) =>
          rank.arm === 2 ? rank : { ...rank, green: false, unverified: true, excused: ['npm test'] },
        );
        return { ...event, ranking, winner: undefined, applyCommand: undefined };
      }
      return event;
    });

  it('the card says unverified (its own word, not green, not red) before the harvest and after it; no winner star', () => {
    expect(arm(fold(excusedRun('arm3done')), 1)).toMatchObject({
      status: 'unverified',
      motif: 'npm test red on HEAD the same way — nothing verified it',
    });
    const state = fold(excusedRun('harvested'));
    expect(armsOf(state, T0 + 20_000).map((view) => [view.arm, view.status, view.winner])).toEqual([
      [1, 'unverified', false],
      [2, 'red', false],
      [3, 'unverified', false],
    ]);
    expect(whyFirstOf(state)).toEqual({
      text: expect.stringMatching(/^no verified arm: nothing to apply unless you name one/),
      green: false,
    });
  });

  it('p without a choice applies nothing; an arm chosen with ←/→ is asked about as unverified', () => {
    const state = fold(excusedRun('harvested'));
    const refused = ui(state, { type: 'ask_apply' });
    expect([refused.bon.ui.confirmApply, refused.ui.statusLine]).toEqual([
      undefined,
      'no verified arm: arm_1 is unverified — choose an arm with ←/→, then p, to apply it anyway',
    ]);
    const chosen = ui(state, { type: 'select', by: 1 }, { type: 'select', by: -1 }, { type: 'ask_apply' });
    expect([chosen.bon.ui.confirmApply, chosen.ui.statusLine]).toEqual([
      1,
      "apply arm_1's patch (it is unverified)? y applies, n cancels",
    ]);
  });

  it('a gate red on HEAD the same way does not make a green arm red on the board', () => {
    const events = eventsThrough('arm1').map((event) =>
      event.type === 'gate_result' && event.gate === 'npm test'
        ? { ...event, ok: false, motif: RED_MOTIF, preexisting: true }
        : event,
    );
    expect(arm(fold(events), 1).status).toBe('green');
  });
});

describe('reduceBonUi effects: what the core is asked for, folded over a list of actions', () => {
  const effects = (state: BonState, ...actions: BonAction[]): BonEffect[] =>
    foldSteps(reduceBonUi, actions, state).effects;

  it("the diff reads the selected arm's patch once it is opened, never for an arm without one", () => {
    expect(effects(through('arm3running'), { type: 'open_diff' })).toEqual([]);
    expect(
      effects(
        through('harvested'),
        { type: 'select', by: 1 },
        { type: 'open_diff' },
        { type: 'scroll', by: 1, page: 5 },
        { type: 'close_diff' },
      ),
    ).toEqual([{ type: 'read_patch', arm: 2 }]);
  });

  it('abort_arm asks once for the running arm; clone once per arm asked, none past the limit or the harvest', () => {
    expect(effects(through('arm3running'), { type: 'abort_arm' })).toEqual([]); // a question, not yet an abort
    expect(
      effects(
        through('arm3running'),
        { type: 'abort_arm' },
        { type: 'confirm_abort' },
        { type: 'abort_arm' },
        { type: 'confirm_abort' },
      ),
    ).toEqual([{ type: 'abort_arm', arm: 3 }]);
    expect(effects(through('arm2'), { type: 'abort_arm' })).toEqual([]);
    expect(effects(through('arm3running'), { type: 'clone' }, { type: 'clone' }, { type: 'clone' })).toEqual([
      { type: 'clone_arm' },
      { type: 'clone_arm' },
    ]);
    expect(effects(through('harvested'), { type: 'clone' })).toEqual([]);
  });

  it('apply hands one arm over only on y after p; n, or y with nothing asked, hand nothing', () => {
    const harvested = through('harvested');
    expect(effects(harvested, { type: 'ask_apply' }, { type: 'cancel_apply' }, { type: 'confirm_apply' })).toEqual([]);
    expect(
      effects(
        harvested,
        { type: 'ask_apply' },
        { type: 'confirm_apply' },
        { type: 'ask_apply' },
        { type: 'confirm_apply' },
      ),
    ).toEqual([{ type: 'apply', arm: 1 }]);
    expect(effects(through('arm3done'), { type: 'ask_apply' }, { type: 'confirm_apply' })).toEqual([]);
  });

  it('a store dispatch returns the effect of the action it folded', () => {
    const store = createBonStore(through('harvested'));
    expect(store.getState().dispatch({ type: 'open_diff' })).toEqual({ type: 'read_patch', arm: 1 });
    expect(store.getState().bon.ui.diff?.status).toBe('loading');
    expect(store.getState().dispatch({ type: 'close_diff' })).toBeUndefined();
  });
});

describe('bon selectors: what the board draws beside the arms', () => {
  it('why #1 once the harvest ranked the arms, green only when the first arm is', () => {
    expect(whyFirstOf(through('arm3done'))).toBeUndefined();
    expect(whyFirstOf(through('harvested'))).toEqual({ text: whyFirst(RANKING), green: true });
    const red = RANKING.map((rank) => ({ ...rank, green: false }));
    const events = eventsThrough('harvested').map((event) =>
      event.type === 'harvest' ? { ...event, ranking: red, winner: undefined } : event,
    );
    expect(whyFirstOf(fold(events))).toMatchObject({ green: false, text: expect.stringMatching(/^no green arm/) });
    const none = eventsThrough('harvested').map((event) =>
      event.type === 'harvest' ? { ...event, ranking: [], winner: undefined } : event,
    );
    expect(whyFirstOf(fold(none))).toEqual({ text: 'no arm ran: nothing to apply', green: false });
  });

  it('why #1 is the line the harvest carried (ranked once, in the core), not one the board works out again', () => {
    const carried = eventsThrough('harvested').map((event) =>
      event.type === 'harvest' ? { ...event, why: 'why #1: the line the core wrote' } : event,
    );
    expect(whyFirstOf(fold(carried))).toEqual({ text: 'why #1: the line the core wrote', green: true });
  });

  it('the primer line: none while it waits, its live figures, then the core account after the harvest', () => {
    expect(primerTextOf(through('started'), 3)).toBeUndefined();
    expect(primerTextOf(through('primed'), 3)).toBe('primer: 2.1k tokens, $0.0050, paid once');
    expect(primerTextOf(through('harvested'), 3)).toBe(primerLine({ tokens: 2100, cost: 0.005 }, 3, true));
  });

  it('the proposal: where the harvest is written and the command it proposes', () => {
    expect(proposalLine(through('arm3done'))).toBeUndefined();
    expect(proposalLine(through('harvested'))).toBe(
      'proposal: factory apply b0b0b0b0 · harvest: adws/adw_data/bon/b0b0b0b0/harvest.json',
    );
  });
});

function recorder(patch: string | Promise<string> = samplePatch(10)): RecordingBonController {
  return recordingBonController(() => patch);
}

describe('dispatchBonIntent: the controller is called for what the reducers accepted', () => {
  const send = (store: ReturnType<typeof createBonStore>, controller: BonController, ...intents: BonIntent[]) => {
    for (const intent of intents) dispatchBonIntent(store, controller, intent, { page: 10 });
  };

  it('abort-arm, clone, apply and diff reach the controller once each', async () => {
    const store = createBonStore(through('arm3running'));
    const controller = recorder(Promise.resolve(samplePatch(3)));
    send(store, controller, 'abort-arm', 'confirm-abort', 'abort-arm', 'confirm-abort', 'clone');
    expect(controller.calls).toEqual(['abortArm 3', 'cloneArm']);
    for (const event of [...eventsThrough('harvested')].slice(eventsThrough('arm3running').length))
      store.getState().apply(event);
    send(store, controller, 'ask-apply', 'apply', 'ask-apply', 'diff');
    expect(controller.calls).toEqual(['abortArm 3', 'cloneArm', 'apply 1', 'readPatch 1']);
    await Promise.resolve();
    expect(store.getState().bon.ui.diff?.status).toBe('ready');
  });

  it('a readPatch that throws shows the failure in the diff view', () => {
    const store = createBonStore(through('harvested'));
    const controller = recorder();
    controller.readPatch = () => {
      throw new Error('EACCES: permission denied');
    };
    send(store, controller, 'diff');
    expect(store.getState().bon.ui.diff).toMatchObject({ status: 'failed', error: 'EACCES: permission denied' });
  });

  it('Ctrl-C from the diff view aborts the turn first, then quits', () => {
    // The arms are done, the run still live (harvest not yet): a diff of arm_1 is open.
    const store = createBonStore(through('arm3done'));
    const controller = recorder();
    send(store, controller, 'diff');
    expect(bonModeOf(store.getState())).toBe('diff');
    send(store, controller, 'interrupt');
    expect(controller.calls.at(-1)).toBe('abort');
    send(store, controller, 'interrupt');
    expect(controller.calls.at(-1)).toBe('quit');
    expect(bonModeOf(store.getState())).toBe('quitting');
  });
});

describe('bon key tables', () => {
  it('no key means two things in one mode, and the help line names every bound key', () => {
    for (const [mode, table] of Object.entries(BON_KEYS)) {
      const keys = table.flatMap((binding) => binding.keys);
      expect(new Set(keys).size, mode).toBe(keys.length);
      for (const binding of table)
        for (const name of binding.keys) {
          expect(helpText(table), mode).toContain(keyLabel(name));
          expect(intentFor(table, name)).toBe(binding.intent);
        }
    }
    expect(helpText(BON_KEYS.running)).toBe(
      '←/→ select arm · enter diff · a abort arm · c clone arm · m message arm · + raise cap · o overlap · s compare · p apply · ctrl-c abort turn (twice: quit) · q quit (asks first) · d doctor',
    );
    expect(helpText(BON_KEYS.diff)).toBe(
      '↑/k/↓/j scroll · PgUp/PgDn page · g top · G end · esc/q back to board · ctrl-c abort / quit',
    );
  });
});
