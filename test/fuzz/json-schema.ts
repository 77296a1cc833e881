// Reading the published JSON Schemas: resolve refs, list the JSON types a schema admits,
// build a minimal valid instance, and judge a value with ajv (the oracle that says
// whether a generated value is outside the published contract).
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';

export type JsonSchema = Record<string, unknown>;
export type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';
export const ALL_TYPES: readonly JsonType[] = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'];

const isObj = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

export function jsonTypeOf(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v as JsonType;
}

/** Schemas with `#/components/schemas/X` refs, resolved against one document. */
export class SchemaSet {
  private readonly ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  private readonly cache = new WeakMap<object, ValidateFunction>();

  constructor(readonly components: Record<string, JsonSchema> = {}) {
    this.ajv.addSchema({ $id: 'fuzz:doc', components: { schemas: components } });
  }

  resolve(schema: unknown, seen = 0): JsonSchema {
    if (!isObj(schema)) return schema === false ? { not: {} } : {};
    const ref = schema.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/') && seen < 32) {
      const { $ref: _, ...rest } = schema;
      return { ...this.resolve(this.components[ref.slice('#/components/schemas/'.length)], seen + 1), ...rest };
    }
    return schema;
  }

  /** Does `value` satisfy `schema`? (ajv, draft 2020-12, refs into the document.) */
  valid(schema: JsonSchema, value: unknown): boolean {
    let fn = this.cache.get(schema);
    if (!fn) {
      fn = this.ajv.compile(rewriteRefs(schema) as JsonSchema);
      this.cache.set(schema, fn);
    }
    try {
      return fn(value);
    } catch {
      // ajv recursing through a value nested thousands deep: whatever it is, it is not
      // something we can call valid.
      return false;
    }
  }

  /** The JSON types some value of `schema` may have (an over-approximation). */
  types(schema: unknown, depth = 0): Set<JsonType> {
    const s = this.resolve(schema);
    if (depth > 16) return new Set(ALL_TYPES);
    if ('const' in s) return new Set([jsonTypeOf(s.const)]);
    if (Array.isArray(s.enum)) return new Set(s.enum.map(jsonTypeOf).flatMap((t) => (t === 'integer' ? ['integer', 'number'] as JsonType[] : [t])));
    const branches = (Array.isArray(s.anyOf) ? s.anyOf : []).concat(Array.isArray(s.oneOf) ? s.oneOf : []);
    if (branches.length) {
      const out = new Set<JsonType>();
      for (const b of branches) for (const t of this.types(b, depth + 1)) out.add(t);
      return out;
    }
    const t = s.type;
    if (typeof t === 'string') return new Set(t === 'number' ? ['number', 'integer'] : [t as JsonType]);
    if (Array.isArray(t)) return new Set((t as JsonType[]).flatMap((x) => (x === 'number' ? ['number', 'integer'] as JsonType[] : [x])));
    if (isObj(s.properties) || 'additionalProperties' in s) return new Set(['object']);
    if ('items' in s) return new Set(['array']);
    return new Set(ALL_TYPES);
  }

  /** Object properties of a schema (through a ref), with its required list. */
  objectShape(schema: unknown): { properties: Record<string, JsonSchema>; required: string[] } {
    const s = this.resolve(schema);
    return {
      properties: isObj(s.properties) ? (s.properties as Record<string, JsonSchema>) : {},
      required: Array.isArray(s.required) ? (s.required as string[]) : [],
    };
  }
}

function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (!isObj(node)) return node;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') ? `fuzz:doc${v}` : rewriteRefs(v);
  }
  return out;
}

/**
 * Chooses values for named fields the schema alone cannot make valid: a `model` must be
 * one the key may use, an `account_id` must exist, a `name` must be unique.
 */
export type Picker = (name: string, schema: JsonSchema) => unknown;

/** A small value that satisfies `schema` (best effort; the setup checks it against the server). */
export function minimalInstance(set: SchemaSet, schema: unknown, pick: Picker, name = '', depth = 0): unknown {
  const s = set.resolve(schema);
  const picked = name ? pick(name, s) : undefined;
  if (picked !== undefined) return picked;
  if (depth > 12) return null;
  if ('const' in s) return s.const;
  if ('default' in s && s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const branches = (Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : []) as unknown[];
  if (branches.length) {
    // Prefer a branch that is not just null: a null often means "not set".
    const nonNull = branches.find((b) => !(set.types(b).size === 1 && set.types(b).has('null')));
    return minimalInstance(set, nonNull ?? branches[0], pick, name, depth + 1);
  }
  const types = set.types(s);
  const type = (['object', 'string', 'array', 'integer', 'number', 'boolean', 'null'] as const).find((t) => types.has(t)) ?? 'null';
  switch (type) {
    case 'object': {
      const { properties, required } = set.objectShape(s);
      return Object.fromEntries(required.map((p) => [p, minimalInstance(set, properties[p] ?? {}, pick, p, depth + 1)]));
    }
    case 'array': {
      const n = typeof s.minItems === 'number' ? s.minItems : 0;
      return Array.from({ length: n }, () => minimalInstance(set, s.items ?? {}, pick, '', depth + 1));
    }
    case 'string': {
      const min = typeof s.minLength === 'number' ? s.minLength : 1;
      const candidates = ['x'.repeat(Math.max(1, min)), '1', 'a', 'x'];
      if (typeof s.pattern === 'string') {
        const re = new RegExp(s.pattern, 'u');
        return candidates.find((c) => re.test(c)) ?? candidates[0];
      }
      return candidates[0];
    }
    case 'integer':
    case 'number': {
      const lo = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : undefined;
      const hi = typeof s.maximum === 'number' ? s.maximum : undefined;
      // 1 where the range allows it: the minimum may be a refusal (a credit amount of -1e9).
      let v = lo !== undefined && lo > 1 ? lo : 1;
      if (hi !== undefined && v > hi) v = hi;
      return type === 'integer' ? Math.ceil(v) : v;
    }
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/** One step on the way from a body field to a nested place: a property, an array item, or a union branch. */
export type Step = { prop: string } | { item: true } | { branch: number };

/**
 * Places inside `schema` (a body field's schema) that take a JSON Schema of the
 * caller's: free-form objects under a property named `schema` or `parameters`, the
 * reference API's names for them (response_format.json_schema.schema,
 * tools[].function.parameters, functions[].parameters).
 */
export function schemaSlots(set: SchemaSet, schema: unknown, depth = 0, seen = new Set<unknown>()): Step[][] {
  const s = set.resolve(schema);
  if (depth > 8 || seen.has(s)) return [];
  seen = new Set(seen).add(s);
  const out: Step[][] = [];
  const branches = (Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : []) as unknown[];
  branches.forEach((b, i) => {
    for (const rest of schemaSlots(set, b, depth + 1, seen)) out.push([{ branch: i }, ...rest]);
  });
  if ('items' in s) for (const rest of schemaSlots(set, s.items, depth + 1, seen)) out.push([{ item: true }, ...rest]);
  for (const [prop, sub] of Object.entries(set.objectShape(s).properties)) {
    const r = set.resolve(sub);
    if ((prop === 'schema' || prop === 'parameters') && set.types(r).has('object') && !isObj(r.properties)) out.push([{ prop }]);
    for (const rest of schemaSlots(set, sub, depth + 1, seen)) out.push([{ prop }, ...rest]);
  }
  return out;
}

/** A minimal valid instance of `schema` with `leaf` placed at `steps`. */
export function instanceAt(set: SchemaSet, schema: unknown, steps: readonly Step[], leaf: unknown, pick: Picker, name = ''): unknown {
  if (steps.length === 0) return leaf;
  const s = set.resolve(schema);
  const [step, ...rest] = steps as [Step, ...Step[]];
  if ('branch' in step) {
    const branches = (Array.isArray(s.oneOf) ? s.oneOf : s.anyOf) as unknown[];
    return instanceAt(set, branches[step.branch], rest, leaf, pick, name);
  }
  if ('item' in step) return [instanceAt(set, s.items, rest, leaf, pick)];
  const base = minimalInstance(set, s, pick, name);
  const obj = (isObj(base) ? { ...base } : {}) as Record<string, unknown>;
  obj[step.prop] = instanceAt(set, set.objectShape(s).properties[step.prop], rest, leaf, pick, step.prop);
  return obj;
}

export function describeSteps(field: string, steps: readonly Step[]): string {
  let out = field;
  for (const s of steps) {
    if ('prop' in s) out += `.${s.prop}`;
    else if ('item' in s) out += '[0]';
  }
  return out;
}
