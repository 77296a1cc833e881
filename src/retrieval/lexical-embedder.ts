// The built-in embedder: no model weights (none can be downloaded, and no npm package
// ships a sentence model's weights), so a strong lexical one. Each text becomes a bag
// of hashed features: word stems (Porter, `stemmer`), stem bigrams, and character
// 4-grams of each word (spelling variants and compounds meet); term weights are
// sublinear (1 + ln tf), function words count little, every feature is hashed with a
// sign (collisions cancel instead of piling up) into `dimensions` buckets, and the
// vector is L2-normalized. Deterministic: the same text gives the same vector on every
// instance and after every restart, so an index never needs rebuilding.
import { stemmer } from 'stemmer';
import { normalize, type Embedder } from './embedder.ts';

const WORD = /[\p{L}\p{N}]+/gu;
const STOP = new Set(
  (
    'a an and are as at be been being but by can could did do does doing for from had has have having he her here hers him his how i if in into is it its ' +
    'itself just me more most my no nor not of off on once only or other our ours out over own same she should so some such than that the their theirs them ' +
    'then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours'
  ).split(' '),
);

const WEIGHT_STEM = 1;
const WEIGHT_BIGRAM = 0.6;
const WEIGHT_GRAMS = 0.5; // shared by a word's character 4-grams
const WEIGHT_STOP = 0.15;
/** A text's words read at most (the service's own model reads 512 tokens a chunk; words are fewer). */
const MAX_WORDS = 4096;
/** Words embedded between two looks at the clock. */
const WORDS_PER_STEP = 256;
/** Yield to the event loop after this much work (ms). */
const SLICE_MS = 4;

/** 32-bit FNV-1a of a string's UTF-16 units, seeded by kind so a stem and a 4-gram never share a hash by construction. */
function hash(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export interface LexicalOptions {
  /**
   * Nested ("Matryoshka"): the vector is blocks of 1, 1, 2, 4, 8, ... values, each
   * holding every feature hashed anew, so any prefix (text-embedding-3's `dimensions`)
   * still carries the whole text instead of the few features that hashed into it.
   */
  nested?: boolean;
}

export class LexicalEmbedder implements Embedder {
  readonly id: string;
  private readonly blocks: [number, number][];
  constructor(
    readonly dimensions = 384,
    options: LexicalOptions = {},
  ) {
    this.id = `lexical-v1-${dimensions}${options.nested ? '-nested' : ''}`;
    this.blocks = [[0, dimensions]];
    if (options.nested) {
      this.blocks = [];
      for (let lo = 0, size = 1; lo < dimensions; lo += size, size = lo === 1 ? 1 : lo) this.blocks.push([lo, Math.min(dimensions, lo + size)]);
    }
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    let sliceStart = performance.now();
    const pause = async () => {
      if (performance.now() - sliceStart <= SLICE_MS) return;
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
      sliceStart = performance.now();
    };
    for (const text of texts) {
      await pause();
      const weights = new Map<string, number>();
      // A long text (an 8,192-token input) yields between runs of words too.
      for (const _ of this.accumulate(text, weights)) await pause();
      out.push(this.vector(weights));
    }
    return out;
  }

  /** One text's vector, synchronously (bounded by MAX_WORDS). */
  embedOne(text: string): Float32Array {
    const weights = new Map<string, number>();
    for (const _ of this.accumulate(text, weights));
    return this.vector(weights);
  }

  /** Adds the text's features to `weights`, pausing (yield) every WORDS_PER_STEP words. */
  private *accumulate(text: string, weights: Map<string, number>): Generator<void> {
    const add = (feature: string, w: number) => weights.set(feature, (weights.get(feature) ?? 0) + w);
    let previous: string | null = null;
    let words = 0;
    for (const m of text.normalize('NFKC').toLowerCase().matchAll(WORD)) {
      if (++words > MAX_WORDS) break;
      if (words % WORDS_PER_STEP === 0) yield;
      const word = m[0];
      if (STOP.has(word)) {
        add(`w:${word}`, WEIGHT_STOP);
        previous = null;
        continue;
      }
      const stem = word.length > 2 && !/\d/.test(word) ? stemmer(word) : word;
      add(`w:${stem}`, WEIGHT_STEM);
      if (previous !== null) add(`b:${previous} ${stem}`, WEIGHT_BIGRAM);
      previous = stem;
      if (word.length >= 4) {
        const padded = `<${word}>`;
        const n = padded.length - 3;
        for (let i = 0; i < n; i++) add(`g:${padded.slice(i, i + 4)}`, WEIGHT_GRAMS / n);
      }
    }
  }

  private vector(weights: Map<string, number>): Float32Array {
    const v = new Float32Array(this.dimensions);
    for (const [feature, tf] of weights) {
      // Sublinear: a term said ten times is not ten times as telling.
      const w = tf >= 1 ? 1 + Math.log(tf) : tf;
      let h = hash(feature, 0);
      for (let b = 0; b < this.blocks.length; b++) {
        const [lo, hi] = this.blocks[b]!;
        if (b > 0) h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0; // a fresh hash per block
        v[lo + ((h >>> 1) % (hi - lo))]! += h & 1 ? w : -w;
      }
    }
    return normalize(v);
  }
}

/** The telling words of a query (no function words), each with its stem, at most `max`. */
export function queryTerms(text: string, max = 32): { word: string; stem: string }[] {
  const seen = new Set<string>();
  const out: { word: string; stem: string }[] = [];
  for (const m of text.normalize('NFKC').toLowerCase().matchAll(WORD)) {
    const word = m[0];
    if (STOP.has(word) || seen.has(word)) continue;
    seen.add(word);
    out.push({ word, stem: word.length > 2 && !/\d/.test(word) ? stemmer(word) : word });
    if (out.length >= max) break;
  }
  return out;
}
