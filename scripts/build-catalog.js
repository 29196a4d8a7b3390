// Writes dist/src/envelope/envelopes.catalog.json from the compiled zod definitions (see src/envelope/catalog.ts).
import fs from 'node:fs';
import { CATALOG_FILE, computeCatalog } from '../dist/src/envelope/catalog.js';

const target = new URL(`../dist/src/envelope/${CATALOG_FILE}`, import.meta.url);
fs.writeFileSync(target, `${JSON.stringify(await computeCatalog(), null, 2)}\n`);
