// What a pi is to the factory (the command a spawn runs) and how its versions compare. A leaf: resolve.ts finds
// a pi, piVersion.ts knows its version without spawning it, and both need these words without needing each other.

export interface PiCommand {
  /** The executable to spawn. */
  command: string;
  /** Arguments that come before pi's own (the CLI script when a Node runtime is the command). */
  prefixArgs: string[];
  source: 'FACTORY_PI' | 'PATH' | 'bundled';
  /** One human line: what will run. */
  display: string;
}

/** Semver-ish comparison: numeric parts, a leading `v` ignored, a pre-release sorts before its release. */
export function compareVersions(a: string, b: string): -1 | 0 | 1 {
  const parse = (v: string) => {
    const [core = '', pre] = v.trim().replace(/^v/i, '').split('+')[0]!.split(/-(.*)/s);
    return { nums: core.split('.').map((n) => Number.parseInt(n, 10) || 0), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.nums.length, y.nums.length, 3); i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}
