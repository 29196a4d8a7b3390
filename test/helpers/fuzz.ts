// Seeded fuzzing for the parsers that read agent output and user files. Every input is reproducible from the
// seed and the iteration: a failing case names both, and `FUZZ_SEED=<seed>` reruns the same sequence.

/** mulberry32: small, fast, and good enough to spread inputs; not for anything secret. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Gen {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  /** True with probability p. */
  chance(p: number): boolean;
  /** A string of `length` items drawn from `alphabet` (a string of characters or a list of pieces). */
  text(length: number, alphabet: string | readonly string[]): string;
}

export function gen(seed: number): Gen {
  const next = prng(seed);
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]) => items[int(items.length)]!,
    chance: (p: number) => next() < p,
    text(length, alphabet) {
      const pieces = typeof alphabet === 'string' ? [...alphabet] : alphabet;
      let out = '';
      for (let i = 0; i < length; i += 1) out += pieces[int(pieces.length)]!;
      return out;
    },
  };
}

/** The seed of this run: FUZZ_SEED when set (to replay a failure), else a fixed default so CI is stable. */
export function fuzzSeed(fallback = 20261201): number {
  const fromEnv = Number(process.env.FUZZ_SEED);
  return Number.isInteger(fromEnv) ? fromEnv : fallback;
}

/**
 * Runs `check` on `iterations` generated inputs, each from its own sub-seed (seed + iteration), and throws on
 * the first failure with the seed and iteration that reproduce it.
 */
export function fuzz<T>(
  name: string,
  iterations: number,
  make: (g: Gen, iteration: number) => T,
  check: (input: T) => void,
  seed = fuzzSeed(),
): void {
  for (let i = 0; i < iterations; i += 1) {
    const input = make(gen(seed * 7919 + i), i);
    try {
      check(input);
    } catch (error) {
      const shown =
        typeof input === 'string'
          ? JSON.stringify(input.length > 400 ? `${input.slice(0, 400)}…` : input)
          : JSON.stringify(input)?.slice(0, 400);
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(
        `${name}: failed at seed ${seed}, iteration ${i} (FUZZ_SEED=${seed}): ${message}\ninput: ${shown}`,
      );
    }
  }
}
