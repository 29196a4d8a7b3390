import { describe, expect, it } from 'vitest';
import type { Key } from 'ink';
import { helpItems, helpText, intentFor, keyLabel, keyNameOf, RUN_KEYS } from '../../components/keymap.js';
import {
  dispatchRunIntent,
  runModeOf,
  STATUS_ABORTING,
  STATUS_CONFIRM_QUIT,
  type RunController,
  type RunMode,
} from '../../state/controller.js';
import { createRunStore, type RunStore } from '../../state/run/store.js';
import type { RunEvent } from '../../src/contract/events.js';

function key(flags: Partial<Key> = {}): Key {
  return {
    upArrow: false,
    downArrow: false,
    leftArrow: false,
    rightArrow: false,
    pageDown: false,
    pageUp: false,
    home: false,
    end: false,
    return: false,
    escape: false,
    ctrl: false,
    shift: false,
    tab: false,
    backspace: false,
    delete: false,
    meta: false,
    super: false,
    hyper: false,
    capsLock: false,
    numLock: false,
    ...flags,
  };
}

describe('keyNameOf', () => {
  it('names printable keys, control chords and named keys', () => {
    expect(keyNameOf('q', key())).toBe('q');
    expect(keyNameOf('c', key({ ctrl: true }))).toBe('ctrl+c');
    expect(keyNameOf('', key({ escape: true, meta: true }))).toBe('escape');
    expect(keyNameOf('', key({ leftArrow: true }))).toBe('left');
    expect(keyNameOf('', key({ return: true }))).toBe('return');
    expect(keyNameOf('x', key({ meta: true }))).toBe('meta+x');
  });

  it('ignores pastes and kitty key releases', () => {
    expect(keyNameOf('qqq', key())).toBeUndefined();
    expect(keyNameOf('q', key({ eventType: 'release' }))).toBeUndefined();
  });
});

describe('run key tables', () => {
  const modes = Object.keys(RUN_KEYS) as RunMode[];

  it('no key means two things in the same mode', () => {
    for (const mode of modes) {
      const keys = RUN_KEYS[mode].flatMap((binding) => binding.keys);
      expect(new Set(keys).size, mode).toBe(keys.length);
    }
  });

  it('help is derived from the very bindings that act', () => {
    for (const mode of modes) {
      const table = RUN_KEYS[mode];
      const text = helpText(table);
      for (const binding of table) {
        for (const name of binding.keys) {
          expect(text, mode).toContain(keyLabel(name));
          expect(intentFor(table, name)).toBe(binding.intent);
        }
        expect(text).toContain(binding.help);
      }
    }
    expect(helpText(RUN_KEYS.running)).toBe('ctrl-c abort turn (twice: quit) · q quit (asks first) · d doctor');
    expect(helpItems(RUN_KEYS['confirm-quit'])).toEqual([
      { keys: 'q/ctrl-c', help: 'abort run and quit' },
      { keys: 'esc', help: 'keep running' },
    ]);
    expect(helpText(RUN_KEYS.quitting)).toBe('');
  });

  it('unbound keys resolve to nothing', () => {
    expect(intentFor(RUN_KEYS.running, 'x')).toBeUndefined();
    expect(intentFor(RUN_KEYS.running, 'escape')).toBeUndefined();
    expect(intentFor(RUN_KEYS.quitting, 'ctrl+c')).toBeUndefined();
  });
});

/** A controller that records what the keys asked of the core. */
function recorder(): RunController & { calls: string[] } {
  const calls: string[] = [];
  return { calls, abort: () => calls.push('abort'), quit: () => calls.push('quit') };
}

const started: RunEvent = {
  type: 'run_started',
  adwId: 'a1b2c3d4',
  ts: 1,
  adwName: 'adw_prompt',
  cwd: '/w',
  phases: [{ name: 'prompt', kind: 'agent', attempts: 3 }],
};

/** Route one key through the mode table and the dispatcher, as useKeymap does. */
function press(store: RunStore, controller: RunController, name: string): void {
  const intent = intentFor(RUN_KEYS[runModeOf(store.getState())], name);
  if (intent) dispatchRunIntent(store, controller, intent);
}

describe('Ctrl-C and q semantics (SPEC 5)', () => {
  it('first Ctrl-C aborts the turn and says so, the second quits', () => {
    const store = createRunStore();
    store.getState().apply(started);
    const controller = recorder();
    expect(runModeOf(store.getState())).toBe('running');
    press(store, controller, 'ctrl+c');
    expect(controller.calls).toEqual(['abort']);
    expect(store.getState().ui.statusLine).toBe(STATUS_ABORTING);
    expect(runModeOf(store.getState())).toBe('aborting');
    press(store, controller, 'ctrl+c');
    expect(controller.calls).toEqual(['abort', 'quit']);
    expect(runModeOf(store.getState())).toBe('quitting');
    press(store, controller, 'ctrl+c');
    press(store, controller, 'q');
    expect(controller.calls).toEqual(['abort', 'quit']);
  });

  it('q during a live run asks first; esc keeps the run; q twice quits without an abort of its own', () => {
    const store = createRunStore();
    store.getState().apply(started);
    const controller = recorder();
    press(store, controller, 'q');
    expect(controller.calls).toEqual([]);
    expect(store.getState().ui.statusLine).toBe(STATUS_CONFIRM_QUIT);
    press(store, controller, 'escape');
    expect(runModeOf(store.getState())).toBe('running');
    expect(store.getState().ui.statusLine).toBeUndefined();
    press(store, controller, 'q');
    press(store, controller, 'q');
    expect(controller.calls).toEqual(['quit']);
  });

  it('Ctrl-C while quit is being confirmed quits', () => {
    const store = createRunStore();
    store.getState().apply(started);
    const controller = recorder();
    press(store, controller, 'q');
    press(store, controller, 'ctrl+c');
    expect(controller.calls).toEqual(['quit']);
  });

  it('once the run is finished, q or Ctrl-C quits at once', () => {
    for (const name of ['q', 'ctrl+c']) {
      const store = createRunStore();
      store.getState().apply(started);
      store
        .getState()
        .apply({ type: 'run_finished', adwId: 'a1b2c3d4', ts: 2, exit: 0, seconds: 1, tokens: 0, cost: 0 });
      const controller = recorder();
      expect(runModeOf(store.getState())).toBe('finished');
      press(store, controller, name);
      expect(controller.calls).toEqual(['quit']);
    }
  });
});

describe('d: the doctor over a run', () => {
  it('is bound while the run goes and once it is over, and asks the controller (when it offers one)', () => {
    expect(intentFor(RUN_KEYS.running, 'd')).toBe('doctor');
    expect(intentFor(RUN_KEYS.finished, 'd')).toBe('doctor');
    expect(intentFor(RUN_KEYS['confirm-quit'], 'd')).toBeUndefined();
    const store = createRunStore();
    let opened = 0;
    dispatchRunIntent(store, { abort: () => {}, quit: () => {}, doctor: () => (opened += 1) }, 'doctor');
    expect(opened).toBe(1);
    // A controller without a doctor (a replay) makes `d` a no-op, not a crash.
    expect(() => dispatchRunIntent(store, { abort: () => {}, quit: () => {} }, 'doctor')).not.toThrow();
  });
});
