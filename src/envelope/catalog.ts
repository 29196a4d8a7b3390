// The envelope catalog: each envelope type's JSON Schema and contract text, precomputed at build time
// (scripts/build-catalog.js) next to the compiled code. The first pi call of a run needs only these two
// texts, so it no longer waits for zod to load (~50 ms of every start); zod is loaded while pi works, for
// the parse. Without a catalog (tests running from src/) the cards are computed on the spot.
import fs from 'node:fs';

export interface EnvelopeCard {
  title: string;
  schema: Record<string, unknown>;
  contract: string;
}

export const CATALOG_FILE = 'envelopes.catalog.json';

let catalog: Record<string, EnvelopeCard> | null | undefined;

function readCatalog(): Record<string, EnvelopeCard> | null {
  if (catalog !== undefined) return catalog;
  try {
    catalog = JSON.parse(fs.readFileSync(new URL(`./${CATALOG_FILE}`, import.meta.url), 'utf8')) as Record<
      string,
      EnvelopeCard
    >;
  } catch {
    catalog = null;
  }
  return catalog;
}

/** Start loading the zod side now (the caller is about to wait on a child process). */
export function loadEnvelopes(): Promise<typeof import('./envelopes.js')> {
  return import('./envelopes.js');
}

/** Compute every card from the zod definitions: the build writes this, the fallback uses it. */
export async function computeCatalog(): Promise<Record<string, EnvelopeCard>> {
  const { ENVELOPE_TYPES, schema, contract } = await loadEnvelopes();
  const out: Record<string, EnvelopeCard> = {};
  for (const [title, type] of Object.entries(ENVELOPE_TYPES))
    out[title] = { title, schema: schema(type), contract: contract(type) };
  return out;
}

export async function envelopeCard(title: string): Promise<EnvelopeCard> {
  const card = readCatalog()?.[title] ?? (await computeCatalog())[title];
  if (!card) throw new Error(`unknown envelope type ${JSON.stringify(title)}`);
  return card;
}
