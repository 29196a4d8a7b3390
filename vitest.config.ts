import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', '.pi/tests/**/*.test.ts'],
    // A guard against a hang, never a speed target: a best-of-N run through real pi on a loaded 2-core machine has
    // taken over a minute (the e2e tests once set their own, each a guess at the machine's speed).
    testTimeout: 300_000,
    hookTimeout: 120_000,
    // End-to-end tests start real pi processes (~0.7 s each) on a 2-core machine: keep parallelism modest.
    maxWorkers: 2,
  },
});
