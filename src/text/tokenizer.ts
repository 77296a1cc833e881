// o200k token counts and encodings that never hold the event loop for long.
//
// gpt-tokenizer's byte-pair merge is quadratic in the length of one pre-token, and a
// run of one repeated character is one pre-token ('A' x 100,000 takes seconds). So
// text is cut into chunks before the BPE, only where o200k's own pre-tokenizer always
// splits (counts stay exact there), and a run without such a place is cut every
// MAX_RUN_BYTES (there a count may differ from the uncut one by a token or so; only
// runs such as one letter repeated, a single word, CJK sentence or stretch of spaces
// longer than 256 bytes are cut so). Large texts are counted asynchronously, in batches.
import o200k from 'gpt-tokenizer/encoding/o200k_base';

// User text may contain "<|endoftext|>" and the like: count it as plain text instead
// of letting the tokenizer throw.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Longest stretch, in UTF-8 bytes, encoded without a safe cut. The merge is quadratic
 * in bytes: 256 random letters take about 0.2 ms, and 85 CJK characters as long.
 */
export const MAX_RUN_BYTES = 256;
/** Chunks handed to the tokenizer at once: large enough to amortize its per-call setup. */
const CHUNK_CHARS = 1024;

// --- Where o200k's pre-tokenizer always splits ------------------------------------

const OTHER = 0;
const SPACE = 1;
const LETTER = 2; // a letter that is neither of the next two (Lm, Lo)
const LOWER = 3; // Ll
const UPPER = 4; // Lu, Lt
const NUMBER = 5;
const MARK = 6;
const APOSTROPHE = 7;

const IS_SPACE = /^\s$/u;
const IS_LOWER = /^\p{Ll}$/u;
const IS_UPPER = /^[\p{Lu}\p{Lt}]$/u;
const IS_LETTER = /^\p{L}$/u;
const IS_NUMBER = /^\p{N}$/u;
const IS_MARK = /^\p{M}$/u;

function computeClass(cp: number): number {
  if (cp === 0x27) return APOSTROPHE;
  const ch = String.fromCodePoint(cp);
  if (IS_SPACE.test(ch)) return SPACE;
  if (IS_LOWER.test(ch)) return LOWER;
  if (IS_UPPER.test(ch)) return UPPER;
  if (IS_LETTER.test(ch)) return LETTER;
  if (IS_NUMBER.test(ch)) return NUMBER;
  if (IS_MARK.test(ch)) return MARK;
  return OTHER;
}

/** Classes of the BMP, filled on first use (255: not computed yet). */
const bmpClasses = new Uint8Array(0x10000).fill(255);

function classOf(cp: number): number {
  if (cp >= 0x10000) return computeClass(cp);
  let c = bmpClasses[cp] as number;
  if (c === 255) bmpClasses[cp] = c = computeClass(cp);
  return c;
}

/**
 * True when no o200k pre-token spans the boundary between a character of class `a`
 * and one of class `b` (code unit `unit`), whatever surrounds them. Derived from the
 * split pattern: a word is upper-case letters then lower-case ones (with marks and an
 * 's-style suffix) and may take one leading non-letter; numbers come alone in groups
 * of up to three; punctuation runs take trailing \r, \n and /; whitespace runs keep
 * their last space for the next word. Cutting after a space could change how
 * `\s+(?!\S)` ends, so cuts are only ever made after a non-space.
 */
function cutBetween(a: number, b: number, unit: number): boolean {
  if (a === SPACE) return false;
  const letterA = a === LETTER || a === LOWER || a === UPPER;
  if (b === SPACE) return (unit !== 10 && unit !== 13) || letterA || a === NUMBER;
  if (a === NUMBER) return b !== NUMBER;
  if (b === NUMBER) return true;
  if (a === LOWER && b === UPPER) return true; // camelCase
  return letterA && b === OTHER;
}

/**
 * The text in chunks of about `target` characters that encode to the same tokens as
 * the whole, except at forced cuts in a run of more than `maxRunBytes` with no safe cut.
 */
export function* chunks(text: string, target = CHUNK_CHARS, maxRunBytes = MAX_RUN_BYTES): Generator<string> {
  const n = text.length;
  if (n <= target && n * 3 <= maxRunBytes) {
    if (n > 0) yield text;
    return;
  }
  let start = 0; // of the chunk being built
  let safe = 0; // the last safe cut at or after start
  let runBytes = 0; // UTF-8 bytes since `safe`
  let prev = SPACE;
  for (let i = 0; i < n; ) {
    const unit = text.charCodeAt(i);
    let cp = unit;
    let width = 1;
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < n) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = ((unit - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
        width = 2;
      }
    }
    const cls = classOf(cp);
    if (i > start) {
      if (cutBetween(prev, cls, unit)) {
        safe = i;
        runBytes = 0;
      } else if (runBytes >= maxRunBytes) {
        // A run with no safe cut: force one here, so no pre-token exceeds the bound.
        yield text.slice(start, i);
        start = safe = i;
        runBytes = 0;
      }
      if (i - start >= target && safe > start) {
        yield text.slice(start, safe);
        start = safe;
      }
    }
    runBytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    prev = cls;
    i += width;
  }
  if (start < n) yield text.slice(start);
}

// --- Synchronous: small texts -------------------------------------------------------

/**
 * Up to this length the async API counts synchronously: one chunk, some tens of
 * microseconds of prose and under 2 ms of the worst text (random CJK).
 */
export const SYNC_CHARS = CHUNK_CHARS;

/** o200k tokens of a text. Linear time, but synchronous: for user-sized texts use countTokensAsync. */
export function countTokens(text: string): number {
  let total = 0;
  for (const chunk of chunks(text)) total += o200k.countTokens(chunk, PLAIN_TEXT);
  return total;
}

/** o200k token ids of a text (synchronous, see countTokens). */
export function encodeText(text: string): number[] {
  const ids: number[] = [];
  for (const chunk of chunks(text)) for (const id of o200k.encode(chunk, PLAIN_TEXT)) ids.push(id);
  return ids;
}

/** A token id the tokenizer does not know. */
export class UnknownTokenError extends RangeError {
  constructor(readonly token: number) {
    super(`${token} is not an o200k token id`);
    this.name = 'UnknownTokenError';
  }
}

/**
 * The text of o200k token ids (synchronous: about 1 ms for 8,192 ids). Throws
 * UnknownTokenError naming the first id the vocabulary lacks (there are gaps below its size).
 */
export function decodeTokens(ids: readonly number[]): string {
  try {
    return o200k.decode(ids);
  } catch (err) {
    for (const id of ids) {
      try {
        o200k.decode([id]);
      } catch {
        throw new UnknownTokenError(id);
      }
    }
    throw err;
  }
}

/** Small chunks for output: a stream encodes only a little past where it stops. */
const OUTPUT_CHUNK_CHARS = 128;

/**
 * The token ids of a text, chunk by chunk, encoded only as they are pulled: a caller
 * that stops at its token budget never encodes the rest. Each chunk's ids decode to
 * whole characters.
 */
export function* encodeLazily(text: string): Generator<number[]> {
  for (const chunk of chunks(text, OUTPUT_CHUNK_CHARS)) yield o200k.encode(chunk, PLAIN_TEXT);
}

/**
 * The token ids of the start of a text: more than `limit` of them when the text has
 * that many (so a caller can tell it was cut), encoding only about that much text.
 */
export function encodePrefix(text: string, limit: number): number[] {
  const ids: number[] = [];
  for (const chunkIds of encodeLazily(text)) {
    for (const id of chunkIds) ids.push(id);
    if (ids.length > limit) break;
  }
  return ids;
}

// --- Asynchronous: large texts --------------------------------------------------------

/** Work between two turns of the event loop, in characters and in time (whichever comes first). */
const BATCH_CHARS = 16_384;
const BATCH_MS = 2;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Counts many texts, giving the event loop a turn (setImmediate, so I/O runs too)
 * between batches of chunks, so counting a 10 MB prompt never holds the loop for more
 * than a few milliseconds at a time.
 */
export class TokenCounter {
  total = 0;
  private batchChars = 0;
  private batchStart = performance.now();

  /**
   * Adds the tokens of `text` to `total` and returns them. With `limit`, counting stops
   * once the text has more than that many (the count returned is then above the limit,
   * not exact): a caller that only refuses long texts need not read all of one.
   */
  async add(text: string, limit = Infinity): Promise<number> {
    let count = 0;
    for (const chunk of chunks(text)) {
      if (count > limit) break;
      if (this.batchChars >= BATCH_CHARS || performance.now() - this.batchStart >= BATCH_MS) {
        await nextTurn();
        this.batchChars = 0;
        this.batchStart = performance.now();
      }
      count += o200k.countTokens(chunk, PLAIN_TEXT);
      this.batchChars += chunk.length;
    }
    this.total += count;
    return count;
  }
}

/** o200k tokens of a text of any size; beyond SYNC_CHARS it yields to the event loop between batches. */
export async function countTokensAsync(text: string): Promise<number> {
  if (text.length <= SYNC_CHARS) return countTokens(text);
  return new TokenCounter().add(text);
}

/**
 * A text as small consecutive pieces (about 128 characters), each with its token count,
 * cut where o200k always splits: the pieces' counts add up to the whole text's, so a
 * caller can cut the text into token windows without decoding. Yields to the event loop
 * between batches, like TokenCounter.
 */
export async function* tokenPieces(text: string): AsyncGenerator<{ text: string; tokens: number }> {
  let batchStart = performance.now();
  for (const piece of chunks(text, OUTPUT_CHUNK_CHARS)) {
    if (performance.now() - batchStart >= BATCH_MS) {
      await nextTurn();
      batchStart = performance.now();
    }
    yield { text: piece, tokens: o200k.countTokens(piece, PLAIN_TEXT) };
  }
}
