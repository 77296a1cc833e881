// A small JSON Schema checker (the keywords the generator produces values
// for). The generator uses it to pick, among candidate values, one that
// really fits: a hint from the message, then safe defaults. Schemas come from
// callers, so its work is metered and user patterns never run on V8's
// backtracking RegExp engine.
import { RE2JS } from 're2js';

export type JsonSchema = Record<string, unknown>;

/** Counts work against a budget; `spend` is false once it is gone, and checking then stops (accepts). */
export interface Meter {
  spend(units: number): boolean;
}

export function isSchemaObject(s: unknown): s is JsonSchema {
  return typeof s === 'object' && s !== null && !Array.isArray(s);
}

/** Resolves a local reference such as `#/$defs/Item` or `#/definitions/Item`. */
export function resolveRef(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as JsonSchema)[k], (b as JsonSchema)[k]));
}

const FORMATS: Record<string, (s: string) => boolean> = {
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && validDate(s),
  'date-time': (s) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && validDate(s.slice(0, 10)),
  time: (s) => /^\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s),
  email: (s) => /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/.test(s),
  uri: (s) => /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#]+[^\s]*$/.test(s),
  'uri-reference': (s) => !/\s/.test(s),
  iri: (s) => /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/.test(s),
  uuid: (s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s),
  hostname: (s) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(s),
  ipv4: (s) => /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$/.test(s),
  ipv6: (s) => /^[0-9a-f:]+$/i.test(s) && s.includes('::'),
  duration: (s) => /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/.test(s),
};

/**
 * Longer strings fail every format: the format expressions above are ours, but some
 * backtrack quadratically, and no real date, address or URL needs more.
 */
const FORMAT_MAX_CHARS = 512;

function validDate(s: string): boolean {
  const [y, m, d] = s.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/**
 * A `pattern` compiled for RE2 (linear time: a pattern such as `^(a+)+$` cannot make a
 * check backtrack forever), or null when RE2 cannot read it (lookarounds,
 * backreferences, some Unicode property names): such a pattern is not checked.
 */
export interface CheckedPattern {
  test(s: string): boolean;
  /** RE2's program size: a test costs about size x input length. */
  size: number;
}

/** Compiled patterns, shared by requests; bounded so varied patterns cannot grow it forever. */
const patternCache = new Map<string, CheckedPattern | null>();
const PATTERN_CACHE_SIZE = 256;

/** Work units per RE2 instruction of a compilation (a few microseconds each). */
const COMPILE_COST = 3;

export function compilePattern(pattern: string, meter?: Meter): CheckedPattern | null {
  let compiled = patternCache.get(pattern);
  if (compiled === undefined) {
    compiled = compileForRe2(pattern);
    meter?.spend(COMPILE_COST * (compiled?.size ?? pattern.length));
    if (patternCache.size >= PATTERN_CACHE_SIZE) patternCache.delete(patternCache.keys().next().value as string);
    patternCache.set(pattern, compiled);
  }
  return compiled;
}

function compileForRe2(pattern: string): CheckedPattern | null {
  // translateRegExp turns a named backreference into literal text: never check those.
  if (pattern.includes('\\k<')) return null;
  try {
    const re = RE2JS.compile(RE2JS.translateRegExp(pattern));
    return { test: (s) => re.test(s), size: re.programSize() };
  } catch {
    return null;
  }
}

/** Work units of one pattern test (a unit is roughly a microsecond). */
export function patternCost(p: CheckedPattern, input: string): number {
  return 1 + Math.ceil((p.size * input.length) / 256);
}

const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/**
 * True when `value` satisfies `schema` (within the keywords listed here). With a
 * meter, every step is counted, and once the budget is gone the answer is true
 * (not checked): the caller stops generating then anyway.
 */
export function matches(schema: unknown, value: unknown, root: unknown = schema, depth = 0, meter?: Meter): boolean {
  if (schema === true || schema === undefined) return true;
  if (schema === false) return false;
  if (!isSchemaObject(schema) || depth > 64) return true;
  if (meter && !meter.spend(1)) return true;
  const s = schema;
  const sub = (child: unknown, v: unknown): boolean => matches(child, v, root, depth + 1, meter);
  const equal = (a: unknown, b: unknown): boolean => (!meter || meter.spend(1)) && deepEqual(a, b);

  if (typeof s.$ref === 'string' && !sub(resolveRef(root, s.$ref), value)) return false;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const t = jsonType(value);
    if (!types.some((want) => want === t || (want === 'number' && t === 'integer'))) return false;
  }
  if ('const' in s && !deepEqual(s.const, value)) return false;
  if (Array.isArray(s.enum) && !s.enum.some((e) => equal(e, value)) && !exhausted(meter)) return false;
  if (Array.isArray(s.allOf) && !s.allOf.every((x) => sub(x, value))) return false;
  if (Array.isArray(s.anyOf) && !s.anyOf.some((x) => sub(x, value))) return false;
  if (Array.isArray(s.oneOf) && s.oneOf.filter((x) => sub(x, value)).length !== 1) return false;
  if (s.not !== undefined && sub(s.not, value)) return false;
  if (s.if !== undefined) {
    const branch = sub(s.if, value) ? s.then : s.else;
    if (branch !== undefined && !sub(branch, value)) return false;
  }

  if (typeof value === 'string') return checkString(s, value, meter);
  if (typeof value === 'number') return checkNumber(s, value);
  if (Array.isArray(value)) return checkArray(s, value, sub, meter);
  if (isSchemaObject(value)) return checkObject(s, value, sub, meter);
  return true;
}

/** True once the meter's budget is gone (a failed check then counts as not made). */
function exhausted(meter: Meter | undefined): boolean {
  return meter !== undefined && !meter.spend(0);
}

/** Runs a pattern on RE2, metered; an unreadable pattern or a spent budget accepts. */
function patternAccepts(pattern: string, v: string, meter: Meter | undefined): boolean {
  const re = compilePattern(pattern, meter);
  if (!re) return true;
  if (meter && !meter.spend(patternCost(re, v))) return true;
  return re.test(v);
}

function checkString(s: JsonSchema, v: string, meter: Meter | undefined): boolean {
  const len = typeof s.minLength === 'number' || typeof s.maxLength === 'number' ? codePoints(v) : 0;
  if (typeof s.minLength === 'number' && len < s.minLength) return false;
  if (typeof s.maxLength === 'number' && len > s.maxLength) return false;
  if (typeof s.pattern === 'string' && !patternAccepts(s.pattern, v, meter)) return false;
  if (typeof s.format === 'string') {
    const check = FORMATS[s.format];
    if (check && (v.length > FORMAT_MAX_CHARS || !check(v))) return false;
  }
  return true;
}

function checkNumber(s: JsonSchema, v: number): boolean {
  if (!Number.isFinite(v)) return false;
  if (typeof s.minimum === 'number' && (s.exclusiveMinimum === true ? v <= s.minimum : v < s.minimum)) return false;
  if (typeof s.maximum === 'number' && (s.exclusiveMaximum === true ? v >= s.maximum : v > s.maximum)) return false;
  if (typeof s.exclusiveMinimum === 'number' && v <= s.exclusiveMinimum) return false;
  if (typeof s.exclusiveMaximum === 'number' && v >= s.exclusiveMaximum) return false;
  if (typeof s.multipleOf === 'number' && s.multipleOf > 0) {
    const q = v / s.multipleOf; // the same test as ajv's default
    if (q !== Number.parseInt(String(q), 10)) return false;
  }
  return true;
}

function checkArray(s: JsonSchema, v: unknown[], sub: (c: unknown, x: unknown) => boolean, meter: Meter | undefined): boolean {
  if (typeof s.minItems === 'number' && v.length < s.minItems) return false;
  if (typeof s.maxItems === 'number' && v.length > s.maxItems) return false;
  if (s.uniqueItems === true) {
    for (let i = 0; i < v.length; i++) {
      for (let j = i + 1; j < v.length; j++) {
        if (meter && !meter.spend(1)) return true; // quadratic in the items: metered per pair
        if (deepEqual(v[i], v[j])) return false;
      }
    }
  }
  const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
  const rest = Array.isArray(s.prefixItems) ? s.items : Array.isArray(s.items) ? s.additionalItems : s.items;
  for (let i = 0; i < v.length; i++) {
    if (exhausted(meter)) return true;
    const itemSchema = i < tuple.length ? tuple[i] : rest;
    if (itemSchema !== undefined && !sub(itemSchema, v[i])) return false;
  }
  if (s.contains !== undefined) {
    const found = v.filter((x) => sub(s.contains, x)).length;
    const min = typeof s.minContains === 'number' ? s.minContains : 1;
    if (found < min) return false;
  }
  return true;
}

function checkObject(s: JsonSchema, v: JsonSchema, sub: (c: unknown, x: unknown) => boolean, meter: Meter | undefined): boolean {
  const keys = Object.keys(v);
  if (typeof s.minProperties === 'number' && keys.length < s.minProperties) return false;
  if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties) return false;
  if (Array.isArray(s.required) && !s.required.every((k) => typeof k === 'string' && Object.hasOwn(v, k))) return false;
  const props = isSchemaObject(s.properties) ? s.properties : {};
  const patterns = isSchemaObject(s.patternProperties) ? Object.entries(s.patternProperties) : [];
  for (const key of keys) {
    if (exhausted(meter)) return true;
    let known = false;
    if (Object.hasOwn(props, key)) {
      known = true;
      if (!sub(props[key], v[key])) return false;
    }
    for (const [p, ps] of patterns) {
      const re = compilePattern(p, meter);
      if (re && (!meter || meter.spend(patternCost(re, key))) && re.test(key)) {
        known = true;
        if (!sub(ps, v[key])) return false;
      }
    }
    if (!known && s.additionalProperties !== undefined && !sub(s.additionalProperties, v[key])) return false;
  }
  return true;
}
