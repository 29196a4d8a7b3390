// A spinner that owns no timer: its frame comes from the screen clock, so one interval drives every
// spinner and live duration on screen.

import React from 'react';
import { Text } from 'ink';
import { SPINNER_FRAMES, SPINNER_INTERVAL_MS } from './theme.js';

export function spinnerFrame(now: number): string {
  return SPINNER_FRAMES[Math.floor(now / SPINNER_INTERVAL_MS) % SPINNER_FRAMES.length];
}

export function Spinner({ now, color = 'cyan' }: { now: number; color?: string }): React.JSX.Element {
  return <Text color={color}>{spinnerFrame(now)}</Text>;
}
