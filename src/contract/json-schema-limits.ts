// The budget of a JSON Schema in a request (response_format, function parameters):
// fixed sizes, so that checking and generating from a schema costs bounded work
// whatever a caller sends, and schemas that cannot be satisfied at a glance are
// refused up front. Modelled on OpenAI's structured-output limits (5,000 properties,
// 1,000 enum values, 120,000 characters of names and values). Every refusal is a 400
// whose param is the path of the offending keyword.
import { z } from 'zod';

export const JSON_SCHEMA_LIMITS = {
  /** Levels of JSON objects and arrays, subschemas and values alike. */
  depth: 64,
  /** JSON values in the whole schema (subschemas, keywords, enum and const values). */
  nodes: 100_000,
  /** Names under `properties`, over the whole schema. */
  properties: 5_000,
  /** Entries of every `enum`, over the whole schema. */
  enumValues: 1_000,
  /** Characters of property and definition names and of enum and const strings. */
  stringChars: 120_000,
  /** Characters of one `pattern` (or `patternProperties` name). */
  patternChars: 1_000,
  /** The largest count of one repetition `{n,m}`, as RE2 allows. */
  repetition: 1_000,
  /** A pattern's size with its repetitions multiplied out: what RE2 compiles and runs. */
  patternSize: 5_000,
  /** minLength, minItems, minProperties, minContains: no model writes more. */
  minimum: 1_000_000,
} as const;

const L = JSON_SCHEMA_LIMITS;
const n = (v: number): string => v.toLocaleString('en-US');

/** Published with every field that takes a JSON Schema (/v1/capabilities). */
export const JSON_SCHEMA_BUDGET_NOTE =
  `JSON Schema budget: at most ${L.depth} levels deep, ${n(L.nodes)} values, ${n(L.properties)} properties, ` +
  `${n(L.enumValues)} enum values, ${n(L.stringChars)} characters of property and definition names and enum and const strings; ` +
  `a pattern is a valid ECMAScript (u) expression of at most ${n(L.patternChars)} characters, each repetition count at most ${n(L.repetition)} ` +
  `and at most ${n(L.patternSize)} with repetitions multiplied out; minLength, minItems, minProperties and minContains at most ${n(L.minimum)}; ` +
  `numbers finite; no empty anyOf, oneOf, allOf, enum or type, and no minimum above its maximum`;

/** The first budget a schema exceeds: where (relative to the schema) and why. */
export interface SchemaProblem {
  path: (string | number)[];
  message: string;
}

// Where subschemas sit: one schema, a list of schemas, or a map of them.
const ONE_SCHEMA = new Set([
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
]);
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
const NON_EMPTY = new Set(['allOf', 'anyOf', 'oneOf']);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const COUNTS: readonly [string, string][] = [
  ['minLength', 'maxLength'],
  ['minItems', 'maxItems'],
  ['minProperties', 'maxProperties'],
  ['minContains', 'maxContains'],
];
const NUMBERS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];

const SCHEMA = 0; // a subschema
const DATA = 1; // annotations, defaults, examples: counted, not read
const LITERAL = 2; // enum and const values: their strings count toward stringChars

/** A value still to visit; its path is built from the parents only when it is refused. */
interface Item {
  value: unknown;
  parent: Item | undefined;
  key: string | number | undefined;
  depth: number;
  role: number;
}

function pathOf(item: Item | undefined, ...rest: (string | number)[]): (string | number)[] {
  const path = rest;
  for (let at = item; at?.key !== undefined; at = at.parent) path.unshift(at.key);
  return path;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Walks a schema once, iteratively: a hostile schema cannot overflow the stack, and the
 * walk stops at the first budget exceeded, so it costs time linear in what it visits.
 */
export function checkJsonSchema(schema: unknown): SchemaProblem | undefined {
  const stack: Item[] = [{ value: schema, parent: undefined, key: undefined, depth: 0, role: SCHEMA }];
  let nodes = 0;
  let properties = 0;
  let enumValues = 0;
  let chars = 0;
  const tooMany = (item: Item): SchemaProblem => ({ path: pathOf(item), message: `the schema has more than ${n(L.nodes)} values` });
  const countChars = (s: string, item: Item, ...rest: string[]): SchemaProblem | undefined => {
    chars += s.length;
    if (chars <= L.stringChars) return undefined;
    return { path: pathOf(item, ...rest), message: `the schema's names and enum and const strings exceed ${n(L.stringChars)} characters` };
  };

  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, depth, role } = item;
    if (++nodes > L.nodes) return tooMany(item);
    if (typeof value === 'string') {
      const over = role === LITERAL ? countChars(value, item) : undefined;
      if (over) return over;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= L.depth) return { path: pathOf(item), message: `the schema is nested more than ${L.depth} levels deep` };
    // Everything pushed is counted when popped: refuse at once what cannot fit.
    const size = Array.isArray(value) ? value.length : Object.keys(value).length;
    if (nodes + stack.length + size > L.nodes) return tooMany(item);
    const push = (child: unknown, key: string | number, childRole: number, parent: Item = item, childDepth = depth + 1): void => {
      stack.push({ value: child, parent, key, depth: childDepth, role: childRole });
    };
    if (Array.isArray(value)) {
      value.forEach((child, i) => push(child, i, role === SCHEMA ? DATA : role));
      continue;
    }
    if (role !== SCHEMA) {
      for (const [key, child] of Object.entries(value)) {
        const over = role === LITERAL ? countChars(key, item, key) : undefined;
        if (over) return over;
        push(child, key, role);
      }
      continue;
    }
    const problem = checkKeywords(value as Record<string, unknown>, item);
    if (problem) return problem;
    for (const [key, child] of Object.entries(value)) {
      if (ONE_SCHEMA.has(key) || (key === 'items' && !Array.isArray(child))) {
        push(child, key, SCHEMA);
      } else if ((SCHEMA_LIST.has(key) || key === 'items') && Array.isArray(child)) {
        if (NON_EMPTY.has(key) && child.length === 0) return { path: pathOf(item, key), message: `${key} must not be empty: no value can match it` };
        const list: Item = { value: child, parent: item, key, depth: depth + 1, role: DATA };
        if (++nodes + stack.length + child.length > L.nodes) return tooMany(list);
        child.forEach((sub, i) => push(sub, i, SCHEMA, list, depth + 2));
      } else if (SCHEMA_MAP.has(key) && isObject(child)) {
        const map: Item = { value: child, parent: item, key, depth: depth + 1, role: DATA };
        const entries = Object.entries(child);
        if (++nodes + stack.length + entries.length > L.nodes) return tooMany(map);
        for (const [name, sub] of entries) {
          if (key === 'properties' && ++properties > L.properties) return { path: pathOf(map, name), message: `the schema has more than ${n(L.properties)} properties` };
          if (key === 'patternProperties') {
            const bad = patternProblem(name);
            if (bad) return { path: pathOf(map, name), message: bad };
          } else if (key === 'properties' || key === '$defs' || key === 'definitions') {
            const over = countChars(name, map, name);
            if (over) return over;
          }
          // `dependencies` maps to a schema or to a list of property names.
          push(sub, name, Array.isArray(sub) ? DATA : SCHEMA, map, depth + 2);
        }
      } else if (key === 'enum' && Array.isArray(child)) {
        enumValues += child.length;
        if (enumValues > L.enumValues) return { path: pathOf(item, key), message: `the schema has more than ${n(L.enumValues)} enum values` };
        push(child, key, LITERAL);
      } else {
        push(child, key, key === 'const' ? LITERAL : DATA);
      }
    }
  }
  return undefined;
}

/** The keywords of one subschema that are read as they are: types, patterns, numbers. */
function checkKeywords(s: Record<string, unknown>, item: Item): SchemaProblem | undefined {
  const at = (key: string): (string | number)[] => pathOf(item, key);
  if (Array.isArray(s.enum) && s.enum.length === 0) return { path: at('enum'), message: 'enum must not be empty: no value can match it' };
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.length === 0) return { path: at('type'), message: 'type must not be empty: no value can match it' };
    const unknown = types.find((t) => typeof t !== 'string' || !TYPES.has(t));
    if (unknown !== undefined) return { path: at('type'), message: `${JSON.stringify(unknown)} is not a JSON Schema type (string, number, integer, boolean, object, array or null)` };
  }
  if (s.pattern !== undefined) {
    const bad = typeof s.pattern === 'string' ? patternProblem(s.pattern) : 'pattern must be a string';
    if (bad) return { path: at('pattern'), message: bad };
  }
  for (const [minKey, maxKey] of COUNTS) {
    for (const key of [minKey, maxKey]) {
      const v = s[key];
      if (v !== undefined && !(typeof v === 'number' && Number.isInteger(v) && v >= 0)) return { path: at(key), message: `${key} must be a non-negative integer` };
    }
    const min = s[minKey] as number | undefined;
    const max = s[maxKey] as number | undefined;
    if (min !== undefined && min > L.minimum) return { path: at(minKey), message: `${minKey} is at most ${n(L.minimum)} (the JSON Schema budget)` };
    if (min !== undefined && max !== undefined && min > max) return { path: at(minKey), message: `${minKey} is above ${maxKey}: no value can match it` };
  }
  for (const key of NUMBERS) {
    const v = s[key];
    if (v === undefined || typeof v === 'boolean') continue; // draft-04 exclusiveMinimum: true
    if (typeof v !== 'number' || !Number.isFinite(v)) return { path: at(key), message: `${key} must be a finite number` };
  }
  if (typeof s.multipleOf === 'number' && s.multipleOf <= 0) return { path: at('multipleOf'), message: 'multipleOf must be greater than 0' };
  if (typeof s.minimum === 'number' && typeof s.maximum === 'number' && s.minimum > s.maximum) {
    return { path: at('minimum'), message: 'minimum is above maximum: no value can match it' };
  }
  return undefined;
}

/**
 * Why a pattern is refused, if it is: too long, not an ECMAScript expression, or
 * repetitions too large for RE2 (which checks patterns in linear time, in proportion
 * to their size multiplied out).
 */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length > L.patternChars) return `pattern is longer than ${n(L.patternChars)} characters`;
  try {
    new RegExp(pattern, 'u'); // parses only: nothing runs
  } catch {
    return 'pattern is not a valid ECMAScript regular expression (with the u flag)';
  }
  const size = multipliedSize(pattern);
  if (size.count > L.repetition) return `a repetition count in pattern exceeds ${n(L.repetition)}`;
  if (size.total > L.patternSize) return `pattern is larger than ${n(L.patternSize)} with its repetitions multiplied out`;
  return undefined;
}

/**
 * A valid pattern's size with repetitions multiplied out (one per character, class or
 * escape), and its largest repetition count. A scan, not a parser: the pattern is
 * already known to be valid.
 */
function multipliedSize(p: string): { total: number; count: number } {
  const groups: { size: number; last: number }[] = [{ size: 0, last: 0 }];
  let count = 0;
  let i = 0;
  const atom = (size: number): void => {
    const g = groups[groups.length - 1]!;
    g.size += size;
    g.last = size;
  };
  while (i < p.length) {
    const c = p[i]!;
    if (c === '\\') {
      const next = p[i + 1];
      const close = next === 'u' || next === 'p' || next === 'P' ? (p[i + 2] === '{' ? '}' : '') : next === 'k' ? '>' : '';
      i = close ? p.indexOf(close, i + 2) + 1 || p.length : i + 2;
      atom(1);
    } else if (c === '[') {
      i++;
      if (p[i] === ']') i++; // never true in u mode, but harmless
      while (i < p.length && p[i] !== ']') i += p[i] === '\\' ? 2 : 1;
      i++;
      atom(1);
    } else if (c === '(') {
      groups.push({ size: 0, last: 0 });
      i++;
      if (p[i] === '?') {
        // (?: (?= (?! (?<= (?<! (?<name>
        i += p[i + 1] === '<' && p[i + 2] !== '=' && p[i + 2] !== '!' ? p.indexOf('>', i) - i + 1 : p[i + 1] === '<' ? 3 : 2;
      }
    } else if (c === ')') {
      const inner = groups.length > 1 ? groups.pop()! : { size: 0 };
      atom(inner.size);
      i++;
    } else if (c === '|') {
      groups[groups.length - 1]!.last = 0;
      i++;
    } else if (c === '{') {
      const m = /\{(\d+)(,(\d*))?\}/y;
      m.lastIndex = i;
      const q = m.exec(p);
      if (!q) {
        atom(1);
        i++;
        continue;
      }
      const low = Number(q[1]);
      const high = q[2] === undefined ? low : q[3] === '' ? low + 1 : Number(q[3]);
      const times = Math.max(low, high);
      count = Math.max(count, times);
      const g = groups[groups.length - 1]!;
      g.size += g.last * (Math.max(times, 1) - 1);
      g.last *= Math.max(times, 1);
      i = m.lastIndex;
      if (p[i] === '?') i++;
    } else if (c === '*' || c === '+' || c === '?') {
      i++;
    } else {
      atom(1);
      i++;
    }
  }
  return { total: groups[0]!.size, count };
}

/** A JSON Schema field of a request: an object, within the budget. */
export const jsonSchemaObject = z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
  const problem = checkJsonSchema(schema);
  if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path });
});
