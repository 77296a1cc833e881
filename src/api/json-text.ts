// JSON text of values too large to stringify in one go (a list of 2,048 embeddings of
// 3,072 values is six million numbers: JSON.stringify would hold the event loop for
// seconds). The text is made piece by piece and handed out in chunks, with a turn of
// the event loop whenever a few milliseconds of work have passed. The output is what
// JSON.stringify gives, except that typed arrays (Float32Array...) are written as
// lists of numbers, and quickly: their values are joined natively, a slice at a time.

/** Work between two turns of the event loop (ms). */
const SLICE_MS = 4;
/** Characters handed out at once (a write to a socket, a part of a string). */
const CHUNK_CHARS = 64 * 1024;
/** Values of a typed array written per piece. */
const TYPED_SLICE = 512;
/** Entries of a plain array stringified per piece when they are all primitives. */
const PLAIN_SLICE = 256;

type NumberArray = Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array | Uint8ClampedArray;

const isNumberArray = (v: unknown): v is NumberArray => ArrayBuffer.isView(v) && !(v instanceof DataView) && !(v instanceof BigInt64Array) && !(v instanceof BigUint64Array);
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A typed array's values as JSON list entries (non-finite values are null, as JSON.stringify writes them). */
function numbersText(values: NumberArray): string {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) return Array.from(values, (n) => (Number.isFinite(n) ? String(n) : 'null')).join(',');
  }
  return values.join(',');
}

function isPrimitive(v: unknown): boolean {
  return v === null || (typeof v !== 'object' && typeof v !== 'function');
}

/** The value JSON.stringify would write for `value` under `key` (toJSON, boxed primitives); undefined: left out. */
function prepared(value: unknown, key: string): unknown {
  if (isNumberArray(value)) return value;
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') value = (value as { toJSON(key: string): unknown }).toJSON(key);
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return value.valueOf();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  return value;
}

/** The JSON text of a prepared value, in pieces. */
function* pieces(value: unknown, stack: object[]): Generator<string> {
  if (value === undefined) return yield 'null'; // only reached inside arrays: objects skip it
  if (isPrimitive(value)) {
    if (typeof value === 'bigint') throw new TypeError('Do not know how to serialize a BigInt');
    return yield JSON.stringify(value);
  }
  if (isNumberArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; i += TYPED_SLICE) {
      if (i > 0) yield ',';
      yield numbersText(value.subarray(i, i + TYPED_SLICE));
    }
    return yield ']';
  }
  if (stack.includes(value as object)) throw new TypeError('Converting circular structure to JSON');
  stack.push(value as object);
  if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; ) {
      if (i > 0) yield ',';
      const end = Math.min(value.length, i + PLAIN_SLICE);
      let j = i;
      while (j < end && isPrimitive(value[j]) && typeof value[j] !== 'bigint' && value[j] !== undefined) j++;
      if (j - i > 1) {
        // A run of primitives: one native stringify, without its brackets.
        yield JSON.stringify(value.slice(i, j)).slice(1, -1);
        i = j;
      } else {
        yield* pieces(prepared(value[i], String(i)), stack);
        i++;
      }
    }
    yield ']';
  } else {
    yield '{';
    let first = true;
    for (const key of Object.keys(value as object)) {
      const v = prepared((value as Record<string, unknown>)[key], key);
      if (v === undefined) continue;
      yield `${first ? '' : ','}${JSON.stringify(key)}:`;
      first = false;
      yield* pieces(v, stack);
    }
    yield '}';
  }
  stack.pop();
}

/**
 * The JSON text of `value` in chunks of about 64 KB, giving the event loop a turn
 * whenever a few milliseconds of work have passed. Undefined at the top writes nothing.
 */
export async function* jsonChunks(value: unknown): AsyncGenerator<string> {
  const top = prepared(value, '');
  if (top === undefined) return;
  let buffer = '';
  let sliceStart = performance.now();
  for (const piece of pieces(top, [])) {
    buffer += piece;
    if (buffer.length >= CHUNK_CHARS) {
      yield buffer;
      buffer = '';
    }
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  if (buffer !== '') yield buffer;
}

/** The whole JSON text of `value`, made without holding the event loop (see jsonChunks). */
export async function jsonText(value: unknown): Promise<string> {
  let text = '';
  for await (const chunk of jsonChunks(value)) text += chunk;
  return text;
}

/**
 * Marks a typed array to be written as a list of numbers by JSON.stringify too (which
 * otherwise writes {"0": ...}), for a value that may be stringified elsewhere.
 */
export function asJsonList<T extends NumberArray>(values: T): T {
  Object.defineProperty(values, 'toJSON', { value: toList, enumerable: false });
  return values;
}

function toList(this: NumberArray): number[] {
  return Array.from(this);
}
