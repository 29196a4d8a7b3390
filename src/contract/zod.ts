// The part of zod the factory uses, in one module: envelopes, the roster schema and the ADW registry import zod from
// here only (`import * as z from './zod.js'`), so the process holds one zod. Compiled, this file is a re-export;
// `npm run build` then replaces dist/src/contract/zod.js with one tree-shaken file of the same exports
// (scripts/bundle-zod.js). zod's own entry is ~80 modules, its 50 locales among them (1.6 MB of JavaScript,
// ~60 ms of CPU), which a `factory prompt` would load while pi starts on the same two cores; the bundle, ~15 ms.
// Same code, same behaviour: only the files it is read from change. Tests run the re-export.
export {
  array,
  boolean,
  enum,
  globalRegistry,
  looseObject,
  number,
  object,
  preprocess,
  record,
  strictObject,
  string,
  toJSONSchema,
} from 'zod';
export type { core, infer, output, ZodObject, ZodRawShape, ZodType } from 'zod';
