// Hostile values and how they are written. A value is a small description (so a
// reproduction prints in a line) that is expanded to bytes only when sent: strings of a
// megabyte, arrays of 100,000 items, 5,000 levels of nesting, JSON text that
// JSON.stringify cannot produce (1e400, -0) and strings with invalid UTF-8 bytes.
import fc from 'fast-check';
import type { JsonSchema, JsonType, SchemaSet } from './json-schema.ts';

export type Hostile =
  | { t: 'json'; v: unknown }
  | { t: 'str'; n: number; ch: string }
  | { t: 'arr'; n: number; item: unknown }
  | { t: 'deep'; depth: number; kind: 'array' | 'object'; leaf: unknown }
  /** JSON text as is, e.g. 1e400 or -0 */
  | { t: 'raw'; text: string }
  /** a string literal whose bytes (hex) may be invalid UTF-8 */
  | { t: 'bytes'; hex: string };

export const json = (v: unknown): Hostile => ({ t: 'json', v });

/** The JSON text of a hostile value. */
export function hostileText(h: Hostile): Buffer {
  switch (h.t) {
    case 'json':
      return Buffer.from(JSON.stringify(h.v));
    case 'str':
      return Buffer.from(JSON.stringify(h.ch.repeat(h.n)));
    case 'arr': {
      const item = JSON.stringify(h.item);
      return Buffer.from(`[${Array.from({ length: h.n }, () => item).join(',')}]`);
    }
    case 'deep': {
      const leaf = JSON.stringify(h.leaf);
      return Buffer.from(h.kind === 'array' ? '['.repeat(h.depth) + leaf + ']'.repeat(h.depth) : '{"a":'.repeat(h.depth) + leaf + '}'.repeat(h.depth));
    }
    case 'raw':
      return Buffer.from(h.text);
    case 'bytes':
      return Buffer.concat([Buffer.from('"'), Buffer.from(h.hex, 'hex'), Buffer.from('"')]);
  }
}

/** What the server's JSON parser makes of it (the oracle judges this). */
export function hostileValue(h: Hostile): unknown {
  switch (h.t) {
    case 'json':
      return h.v;
    case 'str':
      return h.ch.repeat(h.n);
    case 'arr':
      return Array.from({ length: h.n }, () => h.item);
    case 'deep': {
      let v: unknown = h.leaf;
      for (let i = 0; i < h.depth; i++) v = h.kind === 'array' ? [v] : { a: v };
      return v;
    }
    case 'raw':
      return JSON.parse(h.text);
    case 'bytes':
      return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.from(h.hex, 'hex'));
  }
}

export function describeHostile(h: Hostile): string {
  switch (h.t) {
    case 'json': {
      const s = JSON.stringify(h.v) ?? 'undefined';
      return s.length > 160 ? `${s.slice(0, 160)}… (${s.length} chars)` : s;
    }
    case 'str':
      return `${JSON.stringify(h.ch)} × ${h.n}`;
    case 'arr':
      return `[${JSON.stringify(h.item)} × ${h.n}]`;
    case 'deep':
      return h.kind === 'array' ? `[[[…${JSON.stringify(h.leaf)}…]]] ${h.depth} deep` : `{"a":{"a":…${JSON.stringify(h.leaf)}…}} ${h.depth} deep`;
    case 'raw':
      return h.text;
    case 'bytes':
      return `"<bytes ${h.hex}>"`;
  }
}

/** A sample value of each JSON type, hostile in its own way. */
const SAMPLES: Record<JsonType, fc.Arbitrary<unknown>> = {
  null: fc.constant(null),
  boolean: fc.boolean(),
  integer: fc.constantFrom(0, -1, 1, 42, 2 ** 31, -(2 ** 53)),
  number: fc.constantFrom(0.5, -1.25, 3.14159, 1e-7),
  string: fc.constantFrom('', 'x', 'true', '1', 'null', '{}', 'ключ', '\u0000', 'a'.repeat(300)),
  array: fc.constantFrom([], [1], ['x'], [null], [{}], [[]]),
  object: fc.constantFrom({}, { a: 1 }, { type: 'x' }, { '': '' }, { length: 1 }),
};

/** Values of a JSON type `schema` does not admit (null excluded: an explicit null means "not set" to some fields). */
export function wrongTypeArb(set: SchemaSet, schema: JsonSchema): fc.Arbitrary<Hostile> | null {
  const admitted = set.types(schema);
  const wrong = (['boolean', 'integer', 'number', 'string', 'array', 'object'] as const).filter(
    (t) => !admitted.has(t) && !(t === 'integer' && admitted.has('number')),
  );
  if (wrong.length === 0) return null;
  return fc.constantFrom(...wrong).chain((t) => SAMPLES[t].map(json));
}

/** Numbers around and beyond a numeric schema's range, and texts JSON.stringify cannot write. */
export function numberArb(schema: JsonSchema): fc.Arbitrary<Hostile> {
  const edges: Hostile[] = [
    json(1e308),
    json(-1e308),
    json(Number.MAX_SAFE_INTEGER + 2),
    json(-(2 ** 63)),
    json(5e-324),
    json(1.5),
    json(0.1 + 0.2),
    { t: 'raw', text: '1e400' },
    { t: 'raw', text: '-1e400' },
    { t: 'raw', text: '-0' },
    { t: 'raw', text: '123456789012345678901234567890' },
    { t: 'raw', text: '1E+2' },
    json('NaN'),
    json('Infinity'),
    json('-0'),
    json('1e3'),
  ];
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  if (min !== undefined) edges.push(json(min - 1), json(min - 1e-9), json(min));
  if (max !== undefined) edges.push(json(max + 1), json(max + 1e-9), json(max));
  return fc.constantFrom(...edges);
}

/** Over-long strings and lists for a schema with maxLength / maxItems. */
export function overLimitArb(schema: JsonSchema): fc.Arbitrary<Hostile> | null {
  const options: Hostile[] = [];
  if (typeof schema.maxLength === 'number' && schema.maxLength < 100_000) {
    options.push({ t: 'str', n: schema.maxLength + 1, ch: 'x' }, { t: 'str', n: schema.maxLength + 1, ch: 'я' });
  }
  if (typeof schema.minLength === 'number' && schema.minLength > 0) options.push(json(''));
  if (typeof schema.maxItems === 'number' && schema.maxItems < 100_000) options.push({ t: 'arr', n: schema.maxItems + 1, item: 'x' });
  if (typeof schema.minItems === 'number' && schema.minItems > 0) options.push(json([]));
  return options.length ? fc.constantFrom(...options) : null;
}

export const hugeStringArb = (limit: number): fc.Arbitrary<Hostile> =>
  fc
    .record({
      bytes: fc.constantFrom(65_536, 262_144, Math.floor(limit * 0.45), Math.floor(limit * 0.9)),
      ch: fc.constantFrom('x', 'я', '😀', '\\', '"', ' ', '\u0000'),
    })
    // Sized by the bytes on the wire, so the body stays under the limit whatever the character.
    .map(({ bytes, ch }) => ({ t: 'str' as const, n: Math.floor(bytes / (Buffer.byteLength(JSON.stringify(ch)) - 2)), ch }));

export const hugeArrayArb: fc.Arbitrary<Hostile> = fc
  .record({ n: fc.constantFrom(10_000, 100_000), item: fc.constantFrom<unknown>(0, 'x', null, {}, []) })
  .map(({ n, item }) => ({ t: 'arr', n, item }));

export const deepArb: fc.Arbitrary<Hostile> = fc
  .record({ depth: fc.constantFrom(5_000, 5_000, 5_000, 50_000), kind: fc.constantFrom<'array' | 'object'>('array', 'object'), leaf: fc.constantFrom<unknown>(1, 'text', null, 'auto') })
  .map(({ depth, kind, leaf }) => ({ t: 'deep', depth, kind, leaf }));

/** Invalid UTF-8 inside a string: lone continuation bytes, overlongs, surrogates, past U+10FFFF, truncated sequences. */
export const invalidUtf8Arb: fc.Arbitrary<Hostile> = fc
  // (A raw control byte would make the JSON itself invalid: truncated-json sends those.)
  .constantFrom('ff', 'fe', '80', 'c0af', 'c328', 'eda080', 'edbfbf', 'f4908080', 'e282', 'f09f98', '61ff62', 'efbbbf')
  .map((bad) => ({ t: 'bytes' as const, hex: `6869${bad}6869` }));

/** Names a field should never have, and some it might: non-Latin-1, control characters, separators, huge. */
export const fieldNameArb: fc.Arbitrary<string> = fc.constantFrom(
  'ключ',
  '名前',
  'emoji😀',
  'zz_extra',
  'a b',
  'x,y',
  'x, y',
  '',
  ' ',
  'é',
  '\u0000',
  '\u2028',
  'line\r\nbreak',
  '\t',
  'hasOwnProperty',
  'toString',
  'valueOf',
  '__defineGetter__',
  '$ref',
  'n'.repeat(5_000),
  'ø'.repeat(300),
);

/** Values of no particular shape, for fields whose type does not matter to the case. */
export const anyJsonArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(1, 'x', true, [], {}, [1, 2], { a: { b: 1 } }, 'ключ', -1, 1e308),
  fc.jsonValue({ maxDepth: 3 }),
);

/**
 * JSON Schemas that are valid JSON but pathological for anything that builds or checks
 * values from them: unsatisfiable sizes, huge repetition, catastrophic backtracking,
 * empty unions, recursion, deep nesting, huge enums.
 */
export const PATHOLOGICAL_SCHEMAS: readonly { name: string; schema: Hostile }[] = [
  { name: 'minLength 1e9', schema: json({ type: 'string', minLength: 1e9 }) },
  { name: 'minItems 1e9', schema: json({ type: 'array', minItems: 1e9 }) },
  { name: 'object with minItems 1e9 property', schema: json({ type: 'object', properties: { a: { type: 'array', minItems: 1e9, items: { type: 'string', minLength: 1e6 } } }, required: ['a'] }) },
  { name: 'pattern a{1000000}', schema: json({ type: 'string', pattern: 'a{1000000}' }) },
  { name: 'pattern (a{1000}){1000}', schema: json({ type: 'string', pattern: '^(a{1000}){1000}$' }) },
  { name: 'anyOf []', schema: json({ anyOf: [] }) },
  { name: 'oneOf []', schema: json({ oneOf: [] }) },
  { name: 'ReDoS ^(a+)+$ minLength 40', schema: json({ type: 'string', pattern: '^(a+)+$', minLength: 40 }) },
  { name: 'ReDoS ^(a|aa)+$ ', schema: json({ type: 'object', properties: { s: { type: 'string', pattern: '^(a|aa)+b$', minLength: 50 } }, required: ['s'] }) },
  { name: 'invalid pattern', schema: json({ type: 'string', pattern: '(?<' }) },
  { name: 'minimum > maximum', schema: json({ type: 'integer', minimum: 1e308, maximum: -1e308 }) },
  { name: 'multipleOf 0', schema: json({ type: 'number', multipleOf: 0 }) },
  { name: 'multipleOf tiny', schema: json({ type: 'number', minimum: 1e300, multipleOf: 1e-300 }) },
  { name: 'not {}', schema: json({ not: {} }) },
  { name: 'false', schema: json(false) },
  { name: 'allOf string & number', schema: json({ allOf: [{ type: 'string' }, { type: 'number' }] }) },
  { name: '$ref to itself', schema: json({ $ref: '#' }) },
  { name: 'required recursive ref', schema: json({ type: 'object', properties: { a: { $ref: '#' } }, required: ['a'] }) },
  { name: '$ref cycle through $defs', schema: json({ $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' }) },
  { name: 'dangling $ref', schema: json({ $ref: '#/$defs/nothing' }) },
  { name: 'uniqueItems minItems 1e6 boolean', schema: json({ type: 'array', items: { type: 'boolean' }, uniqueItems: true, minItems: 1e6 }) },
  { name: 'minProperties 1e9', schema: json({ type: 'object', minProperties: 1e9 }) },
  { name: 'huge required list', schema: json({ type: 'object', required: Array.from({ length: 20_000 }, (_, i) => `p${i}`) }) },
  { name: 'enum of 100,000', schema: json({ enum: Array.from({ length: 100_000 }, (_, i) => `v${i}`) }) },
  { name: 'properties nested 1,000 deep', schema: { t: 'raw', text: '{"type":"object","properties":{"a":'.repeat(1_000) + '{"type":"string"}' + ',"required":["a"]}}'.repeat(1_000) } },
  { name: 'items nested 5,000 deep', schema: { t: 'raw', text: '{"type":"array","minItems":1,"items":'.repeat(5_000) + '{}' + '}'.repeat(5_000) } },
  { name: 'anyOf nested 3,000 deep', schema: { t: 'raw', text: '{"anyOf":['.repeat(3_000) + '{"type":"string"}' + ']}'.repeat(3_000) } },
  { name: 'prefixItems 100,000', schema: json({ type: 'array', prefixItems: Array.from({ length: 100_000 }, () => ({ type: 'string', minLength: 10 })), minItems: 100_000 }) },
  { name: 'const 1 MB-ish', schema: json({ const: 'c'.repeat(200_000) }) },
  { name: 'format and contentEncoding', schema: json({ type: 'string', format: 'date-time', contentEncoding: 'base64', minLength: 1e7 }) },
  { name: 'type list of everything', schema: json({ type: ['string', 'number', 'object', 'array', 'boolean', 'null', 'bogus'] }) },
  { name: 'schema that is a string', schema: json('not a schema') },
  { name: 'schema that is an array', schema: json([{ type: 'string' }]) },
  { name: '__proto__ keyed properties', schema: { t: 'raw', text: '{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"object","properties":{"prototype":{"type":"object"}}}},"required":["__proto__","constructor"]}' } },
  { name: 'if/then/else chain', schema: json({ if: { type: 'string' }, then: { minLength: 1e9 }, else: { minimum: 1e308, exclusiveMinimum: 1e308 } }) },
  { name: 'contains minContains 1e9', schema: json({ type: 'array', contains: { type: 'string' }, minContains: 1e9 }) },
  { name: 'patternProperties ReDoS', schema: json({ type: 'object', patternProperties: { '^(a+)+$': { type: 'string' } }, minProperties: 3 }) },
  { name: 'dependentRequired cycle', schema: json({ type: 'object', required: ['a'], dependentRequired: { a: ['b'], b: ['a'] }, properties: { a: { not: {} } } }) },
];
