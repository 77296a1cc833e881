// Moves a large value from a worker thread to the event loop in pieces. Rebuilding a
// value sent whole (structured clone) costs the receiving thread about as much as
// parsing it (tens of milliseconds for 9 MB of JSON), all at once. Here the sender cuts
// the value into pieces of about PIECE_BYTES, each serialized on its own (v8.serialize,
// the structured clone format), and the receiver rebuilds one piece at a time, giving
// the event loop back between pieces (parse-pool.ts).
//
// A piece is a list of steps in depth-first order: a leaf value (anything the
// structured clone takes, whole), the start of an array, a plain object or a string too
// large for one piece (its members, or its parts, follow), or the end of one. A long
// string is rebuilt by concatenation, which V8 does without copying (a rope).
import v8 from 'node:v8';

/** About how much of the value one piece holds (an estimate of its serialized size). */
export const PIECE_BYTES = 128 * 1024;

/**
 * What a step costs in a piece besides its value (the step's own array, its kind and
 * key): counted, so a value of many small members (100,000 `{}`) is not cut into pieces
 * three times the size meant, each a long rebuild on the event loop.
 */
const STEP_BYTES = 8;

const LEAF = 0;
const OPEN = 1;
const CLOSE = 2;
const OPEN_STRING = 3;
const PART = 4;

/**
 * [LEAF, key, value] | [OPEN, key, isArray] | [OPEN_STRING, key] | [PART, text] | [CLOSE];
 * the key is null for array members and the root.
 */
type Step = [typeof LEAF, string | null, unknown] | [typeof OPEN, string | null, boolean] | [typeof OPEN_STRING, string | null] | [typeof PART, string] | [typeof CLOSE];

type Container = unknown[] | Record<string, unknown>;
/** What the reader is inside: a container being filled, or a string being put together. */
type Frame = { container: Container } | { key: string | null; text: string };

/** Arrays and plain objects are cut into members; anything else travels whole. */
function isContainer(v: unknown): v is Container {
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) return true;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The value's serialized size, roughly, counted only up to past `limit`. */
function sizeOver(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length + 4;
    else if (Array.isArray(v)) {
      total += 4;
      for (let i = 0; i < v.length && total <= limit; i++, total++) stack.push(v[i]);
    } else if (typeof v === 'object' && v !== null) {
      total += 4;
      for (const k in v) {
        if (total > limit) break;
        total += k.length + 4;
        stack.push((v as Record<string, unknown>)[k]);
      }
    } else total += 9;
    if (total > limit) return total;
  }
  return total;
}

/** The value as serialized pieces, each its own ArrayBuffer (to be transferred). */
export function toPieces(value: unknown, pieceBytes = PIECE_BYTES): ArrayBuffer[] {
  const pieces: ArrayBuffer[] = [];
  let steps: Step[] = [];
  let bytes = 0;
  const flush = () => {
    if (steps.length === 0) return;
    const b = v8.serialize(steps);
    pieces.push(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);
    steps = [];
    bytes = 0;
  };
  const visit = (v: unknown, key: string | null): void => {
    const size = sizeOver(v, pieceBytes);
    if (typeof v === 'string' && size > pieceBytes) {
      steps.push([OPEN_STRING, key]);
      for (let at = 0; at < v.length; at += pieceBytes) {
        steps.push([PART, v.slice(at, at + pieceBytes)]);
        bytes += pieceBytes;
        if (bytes >= pieceBytes) flush();
      }
      steps.push([CLOSE]);
    } else if (size <= pieceBytes || !isContainer(v)) {
      steps.push([LEAF, key, v]);
      bytes += size + STEP_BYTES + (key?.length ?? 0);
    } else {
      steps.push([OPEN, key, Array.isArray(v)]);
      bytes += 16 + STEP_BYTES;
      if (Array.isArray(v)) for (const member of v) visit(member, null);
      else for (const k of Object.keys(v)) visit(v[k], k);
      steps.push([CLOSE]);
      bytes += STEP_BYTES;
    }
    if (bytes >= pieceBytes) flush();
  };
  visit(value, null);
  flush();
  return pieces;
}

/** Rebuilds a value from its pieces, given in order. */
export class PieceReader {
  private readonly stack: Frame[] = [];
  private root: unknown;
  private started = false;

  /** True once the last piece has been read. */
  get done(): boolean {
    return this.started && this.stack.length === 0;
  }

  get value(): unknown {
    if (!this.done) throw new Error('the value is not complete');
    return this.root;
  }

  read(piece: ArrayBuffer): void {
    const steps = v8.deserialize(Buffer.from(piece)) as Step[];
    for (const step of steps) {
      switch (step[0]) {
        case CLOSE: {
          const frame = this.stack.pop();
          // A string's parts are all here: it takes its place now.
          if (frame && 'text' in frame) this.place(frame.key, frame.text);
          break;
        }
        case OPEN_STRING:
          this.stack.push({ key: step[1], text: '' });
          break;
        case PART: {
          const frame = this.stack.at(-1);
          if (!frame || !('text' in frame)) throw new Error('a piece does not fit the value read so far');
          frame.text += step[1];
          break;
        }
        case OPEN: {
          const container: Container = step[2] ? [] : {};
          this.place(step[1], container);
          this.stack.push({ container });
          break;
        }
        case LEAF:
          this.place(step[1], step[2]);
          break;
      }
    }
  }

  private place(key: string | null, value: unknown): void {
    const top = this.stack.at(-1);
    const parent = top && 'container' in top ? top.container : undefined;
    if (!this.started) {
      this.started = true;
      this.root = value;
    } else if (Array.isArray(parent)) parent.push(value);
    // As JSON.parse makes members: own data properties, so a key such as `__proto__` names a member and never reaches a prototype.
    else if (parent && key !== null) Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
    else throw new Error('a piece does not fit the value read so far');
  }
}
