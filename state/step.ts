// What a reducer of key actions returns: the next state and, when the action was accepted and the core must act
// on it, one effect. The store folds the state and hands the effect back; the screen's intent dispatcher runs it
// on the controller. So nothing ever compares the store before and after an action to guess what to do.

export interface Step<S, E> {
  state: S;
  effect?: E;
}

/** A step with no effect. */
export function stay<S>(state: S): { state: S } {
  return { state };
}

/** Fold actions through a stepping reducer: the last state, and every effect in the order they were asked. */
export function foldSteps<S, A, E>(
  reduce: (state: S, action: A) => Step<S, E>,
  actions: readonly A[],
  initial: S,
): { state: S; effects: E[] } {
  let state = initial;
  const effects: E[] = [];
  for (const action of actions) {
    const step = reduce(state, action);
    state = step.state;
    if (step.effect !== undefined) effects.push(step.effect);
  }
  return { state, effects };
}
