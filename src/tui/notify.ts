// Notifications for someone who looked away from the cockpit: when a run ends or an arm waits on them (paused at its
// cap, a forecast asking for a yes). A bell always (every terminal and tmux pass it on); a desktop notification
// where the terminal is known to show one: OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty, Ghostty) or OSC 777
// (VTE terminals such as GNOME Terminal, foot, rxvt-unicode). Neither moves the cursor or prints: safe under Ink.
// Inside tmux or screen an OSC would need passthrough wrapping the user may not allow, so there it is the bell alone.
import type { RunEvent } from '../contract/events.js';
import { EXIT } from '../contract/exit.js';

const BEL = '\u0007';
const ESC = '\u001b';

/** Which desktop notification this terminal shows, read from its environment. */
export function notificationKind(env: NodeJS.ProcessEnv): 'osc9' | 'osc777' | 'bell' {
  if (env.TMUX || (env.TERM ?? '').startsWith('screen') || (env.TERM ?? '').startsWith('tmux')) return 'bell';
  const program = env.TERM_PROGRAM ?? '';
  if (['iTerm.app', 'WezTerm', 'ghostty'].includes(program) || env.WT_SESSION || env.KITTY_WINDOW_ID) return 'osc9';
  if (env.VTE_VERSION || (env.TERM ?? '').startsWith('foot') || (env.TERM ?? '').startsWith('rxvt')) return 'osc777';
  return 'bell';
}

/** The text a notification may carry: one line, no control character (it travels inside an escape sequence). */
function clean(text: string): string {
  return text
    .replace(/[\u0000-\u001f\u007f-\u009f;]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
}

/** The bytes that notify `message` on this terminal: the bell, then its desktop notification if it has one. */
export function notificationBytes(message: string, env: NodeJS.ProcessEnv): string {
  const text = clean(message);
  switch (notificationKind(env)) {
    case 'osc9':
      return `${BEL}${ESC}]9;factory: ${text}${BEL}`;
    case 'osc777':
      return `${BEL}${ESC}]777;notify;factory;${text}${BEL}`;
    default:
      return BEL;
  }
}

/** What a run's event has to say to someone who looked away, if anything. */
export function notificationOf(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'run_finished':
      if (event.interrupted) return `run ${event.adwId} interrupted`;
      if (event.budget) return `run ${event.adwId} stopped by its budget`;
      return event.exit === EXIT.green
        ? `run ${event.adwId} green`
        : `run ${event.adwId} failed at ${event.failedPhase ?? '?'}`;
    case 'spend':
      return event.kind === 'paused'
        ? `${event.phase ?? 'an arm'} paused at its cap: + gives it more, a ends it`
        : undefined;
    case 'forecast':
      return event.confirm ? `the fan-out forecast waits for a yes (y / n)` : undefined;
    default:
      return undefined;
  }
}

/** A run's listener that writes each notification to `out` (the terminal the screen is drawn on). */
export function notifier(out: { write(text: string): unknown }, env: NodeJS.ProcessEnv): (event: RunEvent) => void {
  return (event) => {
    const message = notificationOf(event);
    if (message !== undefined) out.write(notificationBytes(message, env));
  };
}
