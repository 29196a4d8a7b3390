// Compact number formats shared by the views and the headless printers (`factory runs`, `factory show`): they
// keep a phase on one line of a narrow terminal. Pure: the core owns them, the views import them.

/** 850 → "850", 1234 → "1.2k", 45_600 → "46k", 1_234_567 → "1.2M". */
export function formatTokens(tokens: number): string {
  const n = Math.max(0, Math.round(tokens));
  if (n < 1000) return String(n);
  if (n < 10_000) return `${trimZero((n / 1000).toFixed(1))}k`;
  if (n < 999_500) return `${Math.round(n / 1000)}k`;
  if (n < 10_000_000) return `${trimZero((n / 1_000_000).toFixed(1))}M`;
  return `${Math.round(n / 1_000_000)}M`;
}

function trimZero(text: string): string {
  return text.endsWith('.0') ? text.slice(0, -2) : text;
}

/** 0.003078 → "$0.0031", 1.5 → "$1.50"; a positive amount too small to show reads "<$0.0001". */
export function formatCost(cost: number): string {
  if (cost > 0 && cost < 0.00005) return '<$0.0001';
  if (cost >= 1) return `$${cost.toFixed(2)}`;
  return `$${Math.max(0, cost).toFixed(4)}`;
}

/** 12.34 → "12.3s", 65 → "1m05s", 3725 → "1h02m". */
export function formatSeconds(seconds: number): string {
  const s = Math.max(0, seconds);
  if (s < 60) return `${s.toFixed(1)}s`;
  const whole = Math.floor(s);
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(whole / 3600)}h${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')}m`;
}

/** 40 s → "40 s ago", 200 s → "3 min ago", 5 h → "5 h ago", 3 days → "3 d ago". */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} d ago`;
}

/** A phase of a group that waits for a slot (`waits for a slot: 4 at once on this machine`). */
export function waitingLine(event: { limit: number; why?: string }): string {
  return `waits for a slot: ${event.limit} at once${event.why ? ` ${event.why}` : ''}`;
}
