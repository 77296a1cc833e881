import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv as Ajv07 } from 'ajv';
import ajvFormats from 'ajv-formats';
import { generateFromSchema, generateJson, jsonPrefix, MAX_WORK, type GenerationLimits } from './json-from-schema.ts';
import { fitNumber } from './scalar-fitting.ts';
import { createHints } from './hints.ts';
import { compilePattern, matches } from './schema-check.ts';
import { stringFromPattern } from './string-from-pattern.ts';

// ajv is the referee: a generated value must pass a real validator. Strict
// mode refuses unknown keywords; its style lints (union types, open tuples) are off.
const options = { strict: true, strictTypes: false, strictTuples: false, allowUnionTypes: true, allErrors: true } as const;
const ajv2020 = new Ajv2020(options);
const ajv07 = new Ajv07(options);
// ajv-formats is CommonJS: under NodeNext its default import is the module object.
ajvFormats.default(ajv2020);
ajvFormats.default(ajv07);

function assertValid(schema: Record<string, unknown>, value: unknown, draft: '2020' | '07' = '2020'): void {
  const validate = (draft === '2020' ? ajv2020 : ajv07).compile(schema);
  assert.ok(validate(value), `${JSON.stringify(value)} does not validate: ${JSON.stringify(validate.errors)}`);
  // Our own checker must agree with ajv on our output.
  assert.ok(matches(schema, value), 'schema-check disagrees with ajv');
}

const SCHEMAS_2020: Record<string, Record<string, unknown>> = {
  'strict weather (additionalProperties false)': {
    type: 'object',
    properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['location', 'unit'],
    additionalProperties: false,
  },
  'nested person with formats and arrays': {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 2, maxLength: 40 },
      age: { type: 'integer', minimum: 18, maximum: 99 },
      email: { type: 'string', format: 'email' },
      website: { type: 'string', format: 'uri' },
      birthday: { type: 'string', format: 'date' },
      created: { type: 'string', format: 'date-time' },
      id: { type: 'string', format: 'uuid' },
      tags: { type: 'array', items: { type: 'string' }, minItems: 3, maxItems: 5, uniqueItems: true },
      address: {
        type: 'object',
        properties: {
          street: { type: 'string' },
          city: { type: 'string' },
          zip: { type: 'string', pattern: '^\\d{5}$' },
          geo: { type: 'object', properties: { lat: { type: 'number', minimum: -90, maximum: 90 }, lon: { type: 'number' } }, required: ['lat', 'lon'], additionalProperties: false },
        },
        required: ['street', 'city', 'zip', 'geo'],
        additionalProperties: false,
      },
    },
    required: ['name', 'age', 'email', 'website', 'birthday', 'created', 'id', 'tags', 'address'],
    additionalProperties: false,
  },
  '$defs refs (structured-outputs math example)': {
    $defs: {
      step: { type: 'object', properties: { explanation: { type: 'string' }, output: { type: 'string' } }, required: ['explanation', 'output'], additionalProperties: false },
    },
    type: 'object',
    properties: { steps: { type: 'array', items: { $ref: '#/$defs/step' } }, final_answer: { type: 'string' } },
    required: ['steps', 'final_answer'],
    additionalProperties: false,
  },
  'recursive tree via $ref': {
    $defs: {
      node: {
        type: 'object',
        properties: { value: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
        required: ['value', 'children'],
        additionalProperties: false,
      },
    },
    $ref: '#/$defs/node',
  },
  'recursive linked list with anyOf null': {
    $defs: {
      item: {
        type: 'object',
        properties: { value: { type: 'integer' }, next: { anyOf: [{ $ref: '#/$defs/item' }, { type: 'null' }] } },
        required: ['value', 'next'],
        additionalProperties: false,
      },
    },
    $ref: '#/$defs/item',
  },
  'nullable types and anyOf': {
    type: 'object',
    properties: {
      a: { type: ['string', 'null'] },
      b: { anyOf: [{ type: 'number', minimum: 10 }, { type: 'null' }] },
      c: { type: ['null', 'integer'], multipleOf: 4, minimum: 5 },
    },
    required: ['a', 'b', 'c'],
    additionalProperties: false,
  },
  'discriminated oneOf': {
    type: 'object',
    properties: {
      shape: {
        oneOf: [
          { type: 'object', properties: { kind: { const: 'circle' }, radius: { type: 'number', exclusiveMinimum: 0 } }, required: ['kind', 'radius'], additionalProperties: false },
          { type: 'object', properties: { kind: { const: 'square' }, side: { type: 'number' } }, required: ['kind', 'side'], additionalProperties: false },
        ],
      },
    },
    required: ['shape'],
    additionalProperties: false,
  },
  'overlapping oneOf needs a non-integer': { oneOf: [{ type: 'number' }, { type: 'integer' }] },
  'numeric bounds and multipleOf': {
    type: 'object',
    properties: {
      price: { type: 'number', multipleOf: 0.01, minimum: 0.5 },
      qty: { type: 'integer', exclusiveMinimum: 0, maximum: 10, multipleOf: 3 },
      ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      neg: { type: 'integer', maximum: -7 },
      tenth: { type: 'number', multipleOf: 0.1, minimum: 0.3, maximum: 0.75 }, // 0.7 and 0.6 fail ajv's float test
    },
    required: ['price', 'qty', 'ratio', 'neg', 'tenth'],
    additionalProperties: false,
  },
  'string patterns and lengths': {
    type: 'object',
    properties: {
      code: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' },
      slug: { type: 'string', pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' },
      hex: { type: 'string', pattern: '^#[0-9a-fA-F]{6}$' },
      phone: { type: 'string', pattern: '^\\+?[1-9]\\d{1,14}$' },
      choice: { type: 'string', pattern: '^(yes|no)$' },
      sized: { type: 'string', minLength: 10, maxLength: 12 },
      short: { type: 'string', maxLength: 3 },
    },
    required: ['code', 'slug', 'hex', 'phone', 'choice', 'sized', 'short'],
    additionalProperties: false,
  },
  'allOf merge': {
    allOf: [
      { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
      { properties: { b: { type: 'integer', minimum: 5 } }, required: ['b'] },
      { properties: { a: { minLength: 12 } } },
    ],
  },
  'unique enum items': { type: 'array', items: { enum: ['a', 'b', 'c'] }, minItems: 3, uniqueItems: true },
  'const, boolean, null, type arrays': {
    type: 'object',
    properties: { ok: { const: true }, flag: { type: 'boolean' }, nothing: { type: 'null' }, v: { type: ['integer', 'string'] } },
    required: ['ok', 'flag', 'nothing', 'v'],
    additionalProperties: false,
  },
  'minProperties with typed additionalProperties': { type: 'object', minProperties: 2, additionalProperties: { type: 'integer' } },
  'contains and prefixItems': {
    type: 'array',
    prefixItems: [{ type: 'string', format: 'date' }, { type: 'integer' }],
    minItems: 2,
    items: { type: 'string' },
    contains: { const: 'needle' },
  },
  'unique objects': {
    type: 'array',
    minItems: 3,
    uniqueItems: true,
    items: { type: 'object', properties: { id: { type: 'integer' }, label: { type: 'string' } }, required: ['id', 'label'], additionalProperties: false },
  },
};

for (const [name, schema] of Object.entries(SCHEMAS_2020)) {
  test(`generated value validates (2020-12): ${name}`, () => {
    assertValid(schema, generateFromSchema(schema));
    // And with hints from a message that offers values of the wrong shape.
    assertValid(schema, generateFromSchema(schema, createHints('Weather in Paris, name is X, code ABC, 42 items and 7 more')));
  });
}

test('generated value validates (draft-07): definitions and tuple items', () => {
  const schema = {
    definitions: { pt: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], minItems: 2, additionalItems: false } },
    type: 'object',
    properties: { points: { type: 'array', items: { $ref: '#/definitions/pt' }, minItems: 2 }, kind: { enum: ['line', 'polygon'] } },
    required: ['points', 'kind'],
    additionalProperties: false,
  };
  assertValid(schema, generateFromSchema(schema), '07');
});

test('string values come from the message when the property name fits', () => {
  const weather = SCHEMAS_2020['strict weather (additionalProperties false)']!;
  const v = generateFromSchema(weather, createHints("What's the weather in Paris in fahrenheit?")) as Record<string, unknown>;
  assert.equal(v.location, 'Paris');
  assert.equal(v.unit, 'fahrenheit'); // an enum value the message mentions

  const city = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  assert.deepEqual(generateFromSchema(city, createHints('Is it raining in New York today?')), { city: 'New York' });
  assert.deepEqual(generateFromSchema(city, createHints('forecast for the city of Lyon')), { city: 'Lyon' });

  const add = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };
  assert.deepEqual(generateFromSchema(add, createHints('please add 3 and 5.5')), { a: 3, b: 5.5 });

  const search = { type: 'object', properties: { query: { type: 'string' }, url: { type: 'string', format: 'uri' } }, required: ['query', 'url'] };
  const s = generateFromSchema(search, createHints('Search for "rust async" on https://docs.rs/tokio.')) as Record<string, unknown>;
  assert.equal(s.query, 'rust async');
  assert.equal(s.url, 'https://docs.rs/tokio');

  const explicit = { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] };
  assert.deepEqual(generateFromSchema(explicit, createHints('set the color to blue please')), { color: 'blue' });
});

test('a hint that breaks the schema is not used', () => {
  const schema = { type: 'object', properties: { city: { type: 'string', maxLength: 3 } }, required: ['city'] };
  const v = generateFromSchema(schema, createHints('weather in Paris')) as { city: string };
  assert.ok(v.city.length <= 3);
  assertValid(schema, v);
});

test('fitNumber honours exclusive bounds and float multipleOf like ajv', () => {
  assert.equal(fitNumber(0.3, { multipleOf: 0.1 }, false) / 0.1 % 1, 0);
  assert.equal(fitNumber(1, { exclusiveMinimum: 1 }, true), 2);
  assert.equal(fitNumber(1, { minimum: 5, exclusiveMinimum: true }, true), 6); // draft-04 boolean form
  assert.equal(fitNumber(50, { maximum: 10 }, false), 10);
});

test('stringFromPattern covers common shapes and gives up on lookarounds', () => {
  for (const p of ['^[A-Z]{3}-\\d{4}$', '^(foo|bar)+baz?$', '^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$', '^\\w+\\.txt$', '^v\\d+\\.\\d+\\.\\d+$']) {
    const s = stringFromPattern(p);
    assert.ok(s !== undefined && new RegExp(p, 'u').test(s), `${p} → ${s}`);
  }
  assert.equal(stringFromPattern('^(?=.*\\d).{8,}$'), undefined);
  assert.equal(stringFromPattern('^(a)\\1$'), undefined);
});

test('a property named __proto__ is an own key, not a prototype change', () => {
  // JSON.parse keeps "__proto__" as an ordinary key, as a request body would.
  const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}');
  const v = generateFromSchema(schema) as object;
  assert.ok(Object.hasOwn(v, '__proto__'));
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.equal(JSON.stringify(v), '{"__proto__":"example"}');
});

test('recursive schemas stop at the first recursion instead of nesting deep', () => {
  const tree = SCHEMAS_2020['recursive tree via $ref']!;
  assert.deepEqual(generateFromSchema(tree), { value: 'example', children: [] });
  const list = SCHEMAS_2020['recursive linked list with anyOf null']!;
  assert.deepEqual(generateFromSchema(list), { value: 1, next: null });
});

// --- Budgets: hostile schemas end in bounded output, never a crash or a hang -----

const SMALL: GenerationLimits = { maxChars: 200, maxWork: MAX_WORK };

test('legitimate schemas generate complete JSON, as JSON.stringify writes it', () => {
  for (const [name, schema] of Object.entries(SCHEMAS_2020)) {
    const out = generateJson(schema);
    assert.ok(out.complete, name);
    assert.equal(out.text, JSON.stringify(generateFromSchema(schema)), name);
  }
});

test('minLength 1e9 is never built: the text stops at the character budget', () => {
  const out = generateJson({ type: 'string', minLength: 1e9 }, undefined, SMALL);
  assert.equal(out.complete, false);
  assert.ok(out.text.length <= SMALL.maxChars && out.text.startsWith('"example'));
});

test('minItems 1e9 (also with uniqueItems) stops at a budget', () => {
  for (const schema of [
    { type: 'array', minItems: 1e9 },
    { type: 'array', minItems: 1e9, uniqueItems: true, items: { type: 'string', maxLength: 1 } },
    { type: 'object', minProperties: 1e9, additionalProperties: { type: 'array', minItems: 1e9 } },
  ]) {
    const out = generateJson(schema, undefined, SMALL);
    assert.equal(out.complete, false, JSON.stringify(schema));
    assert.ok(out.text.length <= SMALL.maxChars);
  }
  // Without a character limit, the work budget ends it (items of one character repeat).
  const unique = generateJson({ type: 'array', minItems: 1e9, uniqueItems: true, items: { type: 'string', maxLength: 1 } });
  assert.equal(unique.complete, false);
});

test('a pattern is never expanded past the room: a{1000000} gives no candidate', () => {
  assert.equal(stringFromPattern('a{1000000}', 0, 100), undefined);
  assert.equal(stringFromPattern('(a{1000}){1000}', 0, 4096), undefined);
  assert.equal(stringFromPattern('^a{3}$', 0, 100), 'aaa');
  const out = generateJson({ type: 'string', pattern: 'a{1000000}' }, undefined, SMALL);
  assert.ok(out.text.length <= SMALL.maxChars);
});

test('anyOf: [] (unsatisfiable) gives null, never undefined', () => {
  assert.deepEqual(generateJson({ anyOf: [] }), { text: 'null', complete: true });
  assert.equal(generateJson({ type: 'object', properties: { a: { oneOf: [] } }, required: ['a'] }).text, '{"a":null}');
});

test('user patterns run on RE2: a ReDoS pattern is checked in linear time', () => {
  const schema = { type: 'string', pattern: '^(a+)+$', minLength: 5000 };
  const out = generateJson(schema);
  assert.ok(out.complete);
  assert.ok(/^"a{5000}"$/.test(out.text));
  // The checker agrees that a long near-match fails, without backtracking.
  assert.equal(matches(schema, 'a'.repeat(5000) + 'b'), false);
  assert.equal(matches({ pattern: '\\u0041\\d' }, 'xA1'), true, 'ECMAScript escapes are translated');
  assert.equal(matches({ pattern: '^[\\u{1F600}]$' }, '😀'), true);
});

test('patterns RE2 cannot read are not checked, and never run on V8', () => {
  for (const p of ['(?=a)b', '(a)\\1', '(?<n>a)\\k<n>', '(?<!x)y']) {
    assert.equal(compilePattern(p), null, p);
    assert.equal(matches({ pattern: p }, 'zzz'), true, p);
  }
});

test('an exhausted meter stops checking (accepts) instead of walking on', () => {
  let left = 3;
  const meter = { spend: (n: number) => (left -= n) >= 0 };
  const schema = { type: 'array', items: { type: 'integer' } };
  const value = [...Array.from({ length: 999 }, () => 1), 'not an integer'];
  assert.equal(matches(schema, value), false);
  assert.equal(matches(schema, value, schema, 0, meter), true, 'the budget ran out before the last item');
  assert.ok(left < 0 && left > -10, 'stopped right after the budget');
});

test('a work budget ends a generation whose output would fit', () => {
  const props = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`p${i}`, { anyOf: [{ type: 'string', pattern: '^[a-z]{900}$' }, { type: 'null' }] }]));
  const out = generateJson({ type: 'object', properties: props, required: Object.keys(props) }, undefined, { maxChars: 1e9, maxWork: 20_000 });
  assert.equal(out.complete, false);
  assert.ok(out.text.startsWith('{"p0":'));
});

test('jsonPrefix writes what JSON.stringify does, up to a length', () => {
  const value = { a: [1, 'two', null, true, { b: -0 }], 'c"d': 'é\n', e: undefined };
  assert.deepEqual(jsonPrefix(value, 1000), { text: JSON.stringify(value), complete: true });
  assert.deepEqual(jsonPrefix(value, 10), { text: JSON.stringify(value).slice(0, 10), complete: false });
});
