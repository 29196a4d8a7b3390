// The scroll keys' actions, one rule for every view that scrolls (the doctor's checklist, a diff, a comparison):
// a line at a time, a page less one line (so the last line of the page stays in view), or an end.

export type ScrollIntent = 'up' | 'down' | 'page-up' | 'page-down' | 'top' | 'bottom';

export type ScrollAction =
  | { type: 'scroll'; by: number; page: number }
  | { type: 'scroll_to'; to: 'top' | 'bottom'; page: number };

export function scrollAction(intent: ScrollIntent, page: number): ScrollAction {
  switch (intent) {
    case 'up':
    case 'down':
      return { type: 'scroll', by: intent === 'up' ? -1 : 1, page };
    case 'page-up':
    case 'page-down':
      return { type: 'scroll', by: (intent === 'page-up' ? -1 : 1) * Math.max(1, page - 1), page };
    case 'top':
    case 'bottom':
      return { type: 'scroll_to', to: intent, page };
    default: {
      const unreachable: never = intent;
      throw new Error(`unknown scroll intent ${String(unreachable)}`);
    }
  }
}
