#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm install` (prepare) or `npm run build`.
// The Node floor is checked first, in syntax any Node parses: an older runtime gets one line and exit 2, not a
// SyntaxError from somewhere inside the CLI. Its 2 is EXIT.infrastructure of src/contract/exit.ts, spelled here
// because nothing of the CLI can be loaded yet.
var FLOOR = 20;
var major = Number(String(process.versions.node).split('.')[0]);
if (!(major >= FLOOR)) {
  process.stderr.write('factory: Node ' + process.versions.node + ' is too old: the cockpit needs Node ' + FLOOR + ' or newer (' + FLOOR + ' is past its end of life; install Node 24 LTS, e.g. `nvm install 24`)\n');
  process.exit(2);
}
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
