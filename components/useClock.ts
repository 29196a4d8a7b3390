// The screen's single timer: while `active`, re-render every `intervalMs` with a fresh `now`. Views get
// `now` as a prop, so they stay pure and a finished run costs no timer at all.

import { useEffect, useState } from 'react';

export function useClock(active: boolean, intervalMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [active, intervalMs]);
  return now;
}
