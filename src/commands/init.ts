// `factory init [--into <repo>] [--json]`: the repository set-up a newcomer runs once (see src/init/initRepo.ts).
import { describeInit, initRepo } from '../init/initRepo.js';
import { factoryRoot } from '../pi/resolve.js';
import type { CommandFlags } from './workspace.js';

export async function initOutput(flags: CommandFlags): Promise<string> {
  const result = await initRepo({ into: flags.into ?? flags.cwd ?? process.cwd(), factoryRoot: factoryRoot() });
  return flags.json ? `${JSON.stringify({ type: 'init', ...result })}\n` : describeInit(result);
}
