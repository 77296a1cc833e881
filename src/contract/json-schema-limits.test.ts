import { test } from 'node:test';
import assert from 'node:assert/strict';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import { compileTable } from './check.ts';
import { createChatCompletion } from './endpoints/chat.ts';
import { createCompletion } from './endpoints/completions.ts';
import { createResponse } from './endpoints/responses.ts';
import { checkJsonSchema, JSON_SCHEMA_BUDGET_NOTE, JSON_SCHEMA_LIMITS as L, patternProblem } from './json-schema-limits.ts';

const problemAt = (schema: unknown): string | undefined => checkJsonSchema(schema)?.path.join('.');

// --- Legitimate schemas pass -------------------------------------------------------

const Step = z.object({ explanation: z.string(), output: z.string() });
const Person = z.object({
  name: z.string().min(1).max(40),
  email: z.email(),
  born: z.iso.date().nullable(),
  tags: z.array(z.string()).max(5),
  role: z.enum(['admin', 'user']),
  address: z.object({ city: z.string(), zip: z.string().regex(/^\d{5}$/) }).nullable(),
  steps: z.array(Step),
});

/** A pydantic v2 model_json_schema(), as the Python SDK sends it. */
const PYDANTIC = {
  $defs: {
    Address: { properties: { city: { title: 'City', type: 'string' }, zip: { pattern: '^\\d{5}(-\\d{4})?$', title: 'Zip', type: 'string' } }, required: ['city', 'zip'], title: 'Address', type: 'object', additionalProperties: false },
    Color: { enum: ['red', 'green'], title: 'Color', type: 'string' },
  },
  properties: {
    name: { maxLength: 40, minLength: 1, title: 'Name', type: 'string' },
    when: { anyOf: [{ format: 'date-time', type: 'string' }, { type: 'null' }], default: null, title: 'When' },
    address: { anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }], default: null },
    color: { $ref: '#/$defs/Color' },
    scores: { items: { maximum: 10, minimum: 0, type: 'number', multipleOf: 0.5 }, maxItems: 2147483647, title: 'Scores', type: 'array' },
    meta: { additionalProperties: { type: 'integer' }, propertyNames: { pattern: '^[a-z_]+$' }, type: 'object' },
  },
  required: ['name', 'when', 'address', 'color', 'scores', 'meta'],
  title: 'Order',
  type: 'object',
  additionalProperties: false,
};

test('SDK-generated and pydantic schemas are within the budget', () => {
  const fromZod = zodResponseFormat(Person, 'person').json_schema.schema;
  assert.equal(checkJsonSchema(fromZod), undefined, JSON.stringify(fromZod));
  const tool = zodFunction({ name: 'save', parameters: Person }).function.parameters;
  assert.equal(checkJsonSchema(tool), undefined);
  assert.equal(checkJsonSchema(PYDANTIC), undefined);
  assert.equal(checkJsonSchema({ type: 'object', properties: {} }), undefined);
  assert.equal(checkJsonSchema({ $ref: '#', not: {}, if: { type: 'string' }, then: { minLength: 1 }, else: false, exclusiveMinimum: true, minimum: 0 }), undefined);
});

test('the budgets at their limit pass, one beyond is refused', () => {
  const props = (k: number) => Object.fromEntries(Array.from({ length: k }, (_, i) => [`p${i}`, { type: 'string' }]));
  assert.equal(checkJsonSchema({ type: 'object', properties: props(L.properties) }), undefined);
  assert.equal(problemAt({ type: 'object', properties: props(L.properties + 1) }), `properties.p${L.properties}`);
  assert.equal(checkJsonSchema({ enum: Array.from({ length: L.enumValues }, (_, i) => i) }), undefined);
  assert.equal(problemAt({ anyOf: [{ enum: [1] }, { enum: Array.from({ length: L.enumValues }, (_, i) => i) }] }), 'anyOf.0.enum');
  assert.equal(checkJsonSchema({ type: 'string', minLength: L.minimum }), undefined);
  assert.equal(checkJsonSchema({ pattern: 'a'.repeat(L.patternChars) }), undefined);
  assert.match(patternProblem('a'.repeat(L.patternChars + 1)) ?? '', /longer/);
  assert.equal(patternProblem(`^.{0,${L.repetition}}$`), undefined);
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < L.depth / 2 - 1; i++) deep = { properties: { a: deep } };
  assert.equal(checkJsonSchema(deep), undefined);
  assert.ok(checkJsonSchema({ properties: { a: deep } }));
});

// --- Hostile and unsatisfiable schemas: refused with the keyword's path -------------

const REFUSED: [string, unknown, string, RegExp][] = [
  ['minLength 1e9', { type: 'object', properties: { name: { type: 'string', minLength: 1e9 } } }, 'properties.name.minLength', /at most 1,000,000/],
  ['minItems 1e9', { type: 'array', minItems: 1e9 }, 'minItems', /at most/],
  ['minProperties 1e9', { type: 'object', minProperties: 1e9 }, 'minProperties', /at most/],
  ['pattern a{1000000}', { type: 'string', pattern: 'a{1000000}' }, 'pattern', /repetition count/],
  ['nested repetitions', { type: 'string', pattern: '(?:(?:ab){100}){100}' }, 'pattern', /multiplied out/],
  ['a pattern that is not ECMAScript', { type: 'string', pattern: '(?i)abc' }, 'pattern', /ECMAScript/],
  ['a pattern in patternProperties', { patternProperties: { '[': {} } }, 'patternProperties.[', /ECMAScript/],
  ['anyOf []', { anyOf: [] }, 'anyOf', /must not be empty/],
  ['oneOf [] deep inside', { properties: { a: { items: { oneOf: [] } } } }, 'properties.a.items.oneOf', /must not be empty/],
  ['allOf []', { allOf: [] }, 'allOf', /must not be empty/],
  ['enum []', { enum: [] }, 'enum', /must not be empty/],
  ['type []', { type: [] }, 'type', /must not be empty/],
  ['an unknown type', { type: ['string', 'text'] }, 'type', /not a JSON Schema type/],
  ['minLength above maxLength', { minLength: 5, maxLength: 4 }, 'minLength', /above maxLength/],
  ['minItems above maxItems in a tuple', { items: [{ minItems: 2, maxItems: 1 }] }, 'items.0.minItems', /above/],
  ['minimum above maximum', { minimum: 2, maximum: 1 }, 'minimum', /above maximum/],
  ['a negative count', { maxItems: -1 }, 'maxItems', /non-negative integer/],
  ['an infinite number', JSON.parse('{"properties":{"n":{"maximum":1e999}}}'), 'properties.n.maximum', /finite/],
  ['multipleOf 0', { multipleOf: 0 }, 'multipleOf', /greater than 0/],
  ['too many values', { examples: Array.from({ length: L.nodes }, () => 0) }, 'examples', /more than 100,000 values/],
  ['too long strings', { $defs: { ['x'.repeat(L.stringChars)]: {} }, const: 'y' }, 'const', /120,000 characters/],
];

test('hostile and unsatisfiable schemas are refused at the offending keyword', () => {
  for (const [name, schema, path, message] of REFUSED) {
    const problem = checkJsonSchema(schema);
    assert.ok(problem, name);
    assert.equal(problem.path.join('.'), path, name);
    assert.match(problem.message, message, name);
  }
});

test('a hostile 10 MB schema is walked without recursion and stops at the first budget', () => {
  let deep: unknown = {};
  for (let i = 0; i < 1_000_000; i++) deep = { not: deep };
  assert.equal(checkJsonSchema(deep)?.path.length, L.depth);
  let nested: unknown = 0;
  for (let i = 0; i < 1_000_000; i++) nested = [nested];
  assert.match(checkJsonSchema({ default: nested })?.message ?? '', /levels deep/);
  const wide = { enum: Array.from({ length: 2_000_000 }, () => 'x') };
  assert.match(checkJsonSchema(wide)?.message ?? '', /enum values/);
});

// --- Through the contract: 400 invalid_request with the request path in param --------

function refusal(check: () => unknown): ApiError {
  try {
    check();
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return err;
  }
  assert.fail('expected a 400');
}

test('every field that takes a JSON Schema applies the budget, with the full param path', () => {
  const chat = compileTable(createChatCompletion.body.fields, createChatCompletion.body.required);
  const base = { model: 'agent', messages: [{ role: 'user', content: 'hi' }] };
  const format = (schema: unknown) => ({ type: 'json_schema', json_schema: { name: 'x', schema } });
  const cases: [() => unknown, string][] = [
    [() => chat.check({ ...base, response_format: format({ properties: { name: { minLength: 1e9 } } }) }), 'response_format.json_schema.schema.properties.name.minLength'],
    [() => chat.check({ ...base, tools: [{ type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'g', parameters: { anyOf: [] } } }] }), 'tools[1].function.parameters.anyOf'],
    [() => chat.check({ ...base, functions: [{ name: 'f', parameters: { type: 'string', pattern: 'a{1000000}' } }] }), 'functions[0].parameters.pattern'],
    [() => compileTable(createCompletion.body.fields).check({ model: 'agent', prompt: 'hi', response_format: format({ minItems: 1e9 }) }), 'response_format.json_schema.schema.minItems'],
    [() => compileTable(createResponse.body.fields).check({ model: 'agent', text: { format: { type: 'json_schema', name: 'x', schema: { enum: [] } } } }), 'text.format.schema.enum'],
    [() => compileTable(createResponse.body.fields).check({ model: 'agent', tools: [{ type: 'function', name: 'f', parameters: { type: [] } }] }), 'tools[0].parameters.type'],
  ];
  for (const [check, param] of cases) {
    const err = refusal(check);
    assert.equal(err.status, 400);
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.param, param);
  }
  assert.doesNotThrow(() => chat.check({ ...base, response_format: zodResponseFormat(Person, 'person'), tools: [zodFunction({ name: 'save', parameters: Person })] }));
});

test('the budget is published in the notes of those fields', () => {
  assert.match(JSON_SCHEMA_BUDGET_NOTE, /5,000 properties/);
  for (const rule of [
    createChatCompletion.body.fields.response_format,
    createChatCompletion.body.fields.tools,
    createChatCompletion.body.fields.functions,
    createCompletion.body.fields.response_format,
    createResponse.body.fields.text,
    createResponse.body.fields.tools,
  ]) {
    assert.ok(rule.note?.includes(JSON_SCHEMA_BUDGET_NOTE));
  }
});
