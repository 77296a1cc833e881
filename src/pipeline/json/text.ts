// The one JSON parser, for every transport: HTTP bodies (http/json-body.ts is a thin
// adapter over it), WebSocket messages and batch lines, through the call runner. Beyond Fastify's own
// (secure-json-parse, which refuses `__proto__` and `constructor.prototype` keys), it refuses bodies that
// are not UTF-8 (RFC 8259 requires it; a lenient decode would hand handlers U+FFFD in
// place of what was sent) and bodies nested deeper than MAX_JSON_DEPTH: every later
// step that walks a value (validation, serialization, schema generation) then works
// on a bounded depth and can never overflow the stack. Large bodies take the same parser
// on a worker thread (parse-pool.ts).
import sjson from 'secure-json-parse';
import { invalidRequest } from '../../errors.ts';

/** Far above any real request (a chat message with an image part is 5 levels deep). */
export const MAX_JSON_DEPTH = 100;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * Where the body first nests deeper than `max` (or, with `stopAt`, where that byte is):
 * the top-level field it is in (null when the body is not an object or it is outside
 * any field), or undefined when the depth is never passed. A byte scan: brackets and
 * quotes are ASCII, and no byte of a multi-byte UTF-8 character is ASCII.
 */
export function tooDeep(bytes: Uint8Array, max = MAX_JSON_DEPTH, stopAt = Infinity): { field: string | null } | undefined {
  let depth = 0;
  let inString = false;
  let stringStart = -1;
  let lastString: [number, number] | null = null;
  let field: [number, number] | null = null;
  // In the top-level object, where a member's name (not its value) comes next: a byte
  // there, or in that name, is in no field.
  let atName = false;
  const topObject = bytes[0] === OPEN_OBJECT;
  for (let i = 0; i < bytes.length; i++) {
    if (i >= stopAt) return { field: field && depth >= 1 && topObject && !(depth === 1 && atName) ? keyText(bytes, field) : null };
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) {
        inString = false;
        if (depth === 1) lastString = [stringStart, i + 1];
      }
      continue;
    }
    if (b === QUOTE) {
      inString = true;
      stringStart = i;
    } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      if (++depth > max) return { field: field && topObject ? keyText(bytes, field) : null };
      if (depth === 1) atName = b === OPEN_OBJECT;
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      depth--;
    } else if (depth === 1 && b === COLON) {
      field = lastString;
      atName = false;
    } else if (depth === 1 && b === COMMA) {
      atName = topObject;
    }
  }
  return undefined;
}

/** Offset of the first byte that breaks UTF-8 (overlong forms and surrogates included), or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    const need = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0 || i + need >= bytes.length) return i;
    const b1 = bytes[i + 1]!;
    // The second byte's range rules out overlong forms, surrogates and code points past U+10FFFF.
    const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    if (b1 < lo || b1 > hi) return i;
    for (let k = 2; k <= need; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += need + 1;
  }
  return -1;
}

function keyText(bytes: Uint8Array, [start, end]: [number, number]): string | null {
  try {
    const key: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8'));
    return typeof key === 'string' ? key : null;
  } catch {
    return null;
  }
}

export interface JsonTextOptions {
  /** Largest size in bytes; a larger text is refused before anything else is looked at. */
  limit?: number;
  /** What errors call the text: 'request body' (HTTP) or 'message' (the Responses WebSocket). */
  noun?: string;
}

/**
 * The one JSON parser, for any transport (an HTTP body, a WebSocket message): the value,
 * or an ApiError (400 invalid_request) naming the top-level field at fault where one is.
 * A string is taken as already decoded; bytes must be UTF-8.
 */
export function parseJsonText(input: Uint8Array | string, options: JsonTextOptions = {}): unknown {
  const noun = options.noun ?? 'request body';
  const bytes = typeof input === 'string' ? Buffer.from(input) : input;
  if (options.limit !== undefined && bytes.length > options.limit) throw invalidRequest(`The ${noun} is larger than the limit of ${options.limit} bytes.`);
  if (bytes.length === 0) throw invalidRequest(noun === 'request body' ? "The body is empty but Content-Type is 'application/json'." : `The ${noun} is empty.`);
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    try {
      text = utf8.decode(input);
    } catch {
      const field = tooDeep(input, Infinity, firstInvalidUtf8(input))?.field ?? null;
      throw invalidRequest(`The ${noun} is not valid UTF-8${field === null ? '' : ` (in '${field}')`}.`, field);
    }
  }
  const deep = tooDeep(bytes);
  if (deep) {
    const where = deep.field === null ? '' : ` (in '${deep.field}')`;
    throw invalidRequest(`The JSON ${noun} is nested deeper than ${MAX_JSON_DEPTH} levels${where}.`, deep.field);
  }
  try {
    return sjson.parse(text, null, PARSE_OPTIONS);
  } catch (err) {
    throw invalidRequest(`We could not parse the JSON ${noun}: ${(err as Error).message}`);
  }
}

export function parseJsonBody(body: Buffer): unknown {
  return parseJsonText(body);
}

/**
 * Bodies larger than this are parsed (and, on a contract endpoint, checked) on a worker
 * thread (parse-pool.ts): on the event loop they would hold it for milliseconds.
 */
export const LARGE_JSON_BYTES = 256 * 1024;

