// The screen's single timer: while `active`, the screen is drawn again `intervalMs` after its last drawing, with a
// fresh `now`. A drawing for any other reason (a store notice) restarts the wait, so a busy board is never drawn
// twice a frame for the clock's sake. Views get `now` as a prop, so they stay pure and a finished run costs no timer.

import { useEffect, useState } from 'react';

export function useClock(active: boolean, intervalMs: number): number {
  const [, setTick] = useState(0);
  const now = Date.now();
  useEffect(() => {
    if (!active) return;
    const timer = setTimeout(() => setTick((tick) => tick + 1), intervalMs);
    return () => clearTimeout(timer);
  });
  return now;
}
