// Writes dist/src/envelopes.catalog.json from the compiled zod definitions (see src/envelopeCatalog.ts).
import fs from 'node:fs';
import { CATALOG_FILE, computeCatalog } from '../dist/src/envelopeCatalog.js';

const target = new URL(`../dist/src/${CATALOG_FILE}`, import.meta.url);
fs.writeFileSync(target, `${JSON.stringify(await computeCatalog(), null, 2)}\n`);
