// What turns text into vectors, for the vector stores' index and for the offline
// /v1/embeddings. One interface, so a model loaded from a local path
// (AGENT_API_EMBEDDER_PATH, see docs/retrieval.md) can replace the built-in lexical one.

export interface Embedder {
  /** Named in the index: vectors of different embedders are never compared. */
  readonly id: string;
  readonly dimensions: number;
  /**
   * One L2-normalized vector per text. Long work yields to the event loop between
   * texts; the signal stops it between texts.
   */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Cosine similarity of two L2-normalized vectors. */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The first `dimensions` values, normalized again (text-embedding-3's shortening). */
export function shorten(vector: Float32Array, dimensions: number): Float32Array {
  const out = vector.slice(0, dimensions);
  return normalize(out);
}

export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  if (n > 0) {
    const k = 1 / Math.sqrt(n);
    for (let i = 0; i < v.length; i++) v[i] = v[i]! * k;
  }
  return v;
}
