import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', '.pi/tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests start real pi processes (~0.7 s each) on a 2-core machine: keep parallelism modest.
    maxWorkers: 2,
  },
});
