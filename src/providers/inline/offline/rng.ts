// The engine's only source of variation: a small seeded PRNG, so the same
// input and seed always give the same output (no Math.random anywhere).

/** Seed used when the request gives none, so output stays reproducible. */
export const DEFAULT_SEED = 0x5eed;

/** 32-bit FNV-1a over the UTF-16 code units; cheap and stable across runs. */
export function hashString(text: string, basis = 0x811c9dc5): number {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [0, n). */
  int(n: number): number;
  /** One item of a non-empty list. */
  pick<T>(items: readonly T[]): T;
}

/** mulberry32: tiny, fast, good enough for choosing wordings. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => items[int(items.length)] as T,
  };
}

/**
 * The PRNG for one request. Temperature 0 ignores the caller's seed: the
 * answer must then be the same for every seed.
 */
export function requestRng(input: string, seed: number | undefined, temperature: number | undefined): Rng {
  const effectiveSeed = temperature === 0 || seed === undefined ? DEFAULT_SEED : seed;
  return mulberry32(hashString(input, hashString(String(effectiveSeed))));
}

/** A deterministic, random-looking id such as `call_3fK9...`. */
export function randomId(rng: Rng, prefix: string, length = 24): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let id = prefix;
  for (let i = 0; i < length; i++) id += alphabet[rng.int(alphabet.length)];
  return id;
}
