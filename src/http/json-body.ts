// The JSON body parser every route shares. Beyond Fastify's own (secure-json-parse,
// which refuses `__proto__` and `constructor.prototype` keys), it refuses bodies that
// are not UTF-8 (RFC 8259 requires it; a lenient decode would hand handlers U+FFFD in
// place of what was sent) and bodies nested deeper than MAX_JSON_DEPTH: every later
// step that walks a value (validation, serialization, schema generation) then works
// on a bounded depth and can never overflow the stack.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { invalidRequest } from './errors.ts';

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

/**
 * Where the body first nests deeper than `max`: the top-level field it happens in (null
 * when the body itself is a deep array), or undefined when it never does. A byte scan:
 * brackets and quotes are ASCII, and no byte of a multi-byte UTF-8 character is ASCII.
 */
export function tooDeep(bytes: Uint8Array, max = MAX_JSON_DEPTH): { field: string | null } | undefined {
  let depth = 0;
  let inString = false;
  let stringStart = -1;
  let lastString: [number, number] | null = null;
  let field: [number, number] | null = null;
  for (let i = 0; i < bytes.length; i++) {
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
      if (++depth > max) return { field: field && bytes[0] === OPEN_OBJECT ? keyText(bytes, field) : null };
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      depth--;
    } else if (b === COLON && depth === 1) {
      field = lastString;
    }
  }
  return undefined;
}

function keyText(bytes: Uint8Array, [start, end]: [number, number]): string | null {
  try {
    const key: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8'));
    return typeof key === 'string' ? key : null;
  } catch {
    return null;
  }
}

export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) throw invalidRequest("The body is empty but Content-Type is 'application/json'.");
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalidRequest('The request body is not valid UTF-8.');
  }
  const deep = tooDeep(body);
  if (deep) {
    const where = deep.field === null ? '' : ` (in '${deep.field}')`;
    throw invalidRequest(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels${where}.`, deep.field);
  }
  try {
    return sjson.parse(text, null, PARSE_OPTIONS);
  } catch (err) {
    throw invalidRequest(`We could not parse the JSON body of your request: ${(err as Error).message}`);
  }
}

export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request: FastifyRequest, body: Buffer, done) => {
    try {
      done(null, parseJsonBody(body));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
