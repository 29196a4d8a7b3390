#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm install` (prepare) or `npm run build`.
import('../dist/src/cli.js').then(
  (cli) => cli.main(),
  (error) => {
    if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/src/cli.js')) {
      process.stderr.write('factory: not built yet — run `npm run build` (or `npm install`) in the factory folder\n');
      process.exit(2);
    }
    throw error;
  },
);
