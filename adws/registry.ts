// The ADWs this factory knows, with the arguments each records on its run (`run_started.args`) as zod schemas:
// what `factory resume` reads back from a run log is validated here, never cast. The commands use the inferred
// types only (a type import: zod is not loaded on the way to a prompt's first spawn).
import * as z from '../src/contract/zod.js';
import { ADW_NAME as BON } from './adw_bon.js';
import { ADW_NAME as BUILD } from './adw_build.js';
import { ADW_NAME as PROMPT } from './adw_prompt.js';

const retries = z.number().int().min(0).max(10);
const harness = z.string().optional(); // checked against the known harnesses when the workspace opens

export const PromptArgsSchema = z.object({ ask: z.string().min(1), model: z.string().optional(), retries, harness });
export const BuildArgsSchema = z.object({ spec: z.string().min(1), model: z.string().optional(), retries, harness });
export const BonArgsSchema = z.object({
  spec: z.string().min(1),
  arms: z.number().int().min(1),
  models: z.array(z.string()),
  apply: z.boolean(),
  inPlace: z.boolean().optional(),
  unsandboxed: z.boolean().optional(),
  concurrency: z.number().int().min(1).optional(),
  maxCost: z.number().positive().optional(),
  stopAfterGreen: z.number().int().min(1).optional(),
  deadlineMs: z.number().int().positive().optional(),
  yes: z.boolean().optional(),
  judge: z.boolean().optional(),
});

export type PromptArgs = z.infer<typeof PromptArgsSchema>;
export type BuildArgs = z.infer<typeof BuildArgsSchema>;
export type BonArgs = z.infer<typeof BonArgsSchema>;

/** Every ADW by name: its argument schema, and whether a stopped run of it can be resumed in its live session. */
export const ADWS = {
  [PROMPT]: { args: PromptArgsSchema, resumable: true },
  [BUILD]: { args: BuildArgsSchema, resumable: true },
  // A best-of-N run resumes from its primer's session file: finished arms keep their verdicts, the others fork again.
  [BON]: { args: BonArgsSchema, resumable: true },
} as const;

export type AdwName = keyof typeof ADWS;

export type ResumableArgs =
  | { adwName: typeof PROMPT; args: PromptArgs }
  | { adwName: typeof BUILD; args: BuildArgs }
  | { adwName: typeof BON; args: BonArgs };

/** A run's recorded ADW and arguments, checked: the resumable pair, or a one-line motif saying why not. */
export function readResumable(adwName: string, args: unknown): ResumableArgs | { motif: string } {
  const what = adwName ? `an ${adwName}` : 'a run of unknown kind';
  if (!(adwName in ADWS)) return { motif: `${what}: it cannot be resumed` };
  const adw = ADWS[adwName as AdwName];
  if (!adw.resumable) return { motif: `${what}: it cannot be resumed` };
  const parsed = adw.args.safeParse(args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      motif: `${what} whose recorded arguments are not valid (${issue ? `${issue.path.join('.') || 'args'}: ${issue.message}` : 'unreadable'}): it cannot be resumed`,
    };
  }
  if (adwName === BON) return { adwName: BON, args: parsed.data as BonArgs };
  return adwName === PROMPT
    ? { adwName, args: parsed.data as PromptArgs }
    : { adwName: BUILD, args: parsed.data as BuildArgs };
}
