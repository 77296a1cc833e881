// Compiles an endpoint's field tables into a checker: classify each field (applied,
// limited, refused, accepted without effect, unknown), validate applied values, and
// name the ignored ones. Compiled once per endpoint at start-up.
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { invalidRequest, notFound, unsupportedParameter, type ApiError } from '../errors.ts';
import type { Permission } from '../keys/permissions.ts';
import type { FieldRule, FieldTable, UploadLimit } from './types.ts';

export interface Checked {
  value: Record<string, unknown>;
  ignored: string[];
}

export interface CompiledTable {
  check(input: Record<string, unknown>): Checked;
  /** Fields a key needs a switch to send, with the switch. */
  /** Fields that need a key switch: name, switch, and when only some values need it, which. */
  readonly permissions: readonly (readonly [string, Permission, ((value: unknown) => boolean)?])[];
  /** Multipart file fields and their size limits. */
  readonly uploads: ReadonlyMap<string, UploadLimit>;
  /** Fields that name a model (`modelField`): a key restricted to some models is held to them. */
  readonly modelFields: readonly string[];
}

/**
 * A file part's cap while it streams: the largest limit that can still apply given the
 * fields seen so far (a batch .jsonl whose `purpose` comes after the file gets the larger
 * one; the checker applies the exact limit once the whole form is known).
 */
export function uploadCap(limit: UploadLimit, filename: string, seen: Record<string, unknown>): number {
  return uploadLimitFor(limit, filename, seen, false);
}

/** How a file's size compares with the field's limits; `seen` holds the fields known so far. */
function uploadLimitFor(limit: UploadLimit, filename: string, seen: Record<string, unknown>, complete: boolean): number {
  const larger = limit.larger;
  if (!larger || !filename.toLowerCase().endsWith(larger.filenameSuffix)) return limit.maxBytes;
  const fits = Object.entries(larger.when).every(([field, value]) => seen[field] === value || (!complete && seen[field] === undefined));
  return fits ? larger.maxBytes : limit.maxBytes;
}

const mb = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes.toLocaleString('en-US')} bytes`);

/** The refusal of a file over its limit, the same whether found while streaming or after. */
export function uploadTooLarge(name: string, limit: UploadLimit): ApiError {
  if (limit.many) return invalidRequest(`The files in '${name}' are too large: up to ${mb(limit.maxBytes)} (${limit.maxBytes.toLocaleString('en-US')} bytes) in total.`, name);
  const larger = limit.larger;
  const also = larger
    ? `; a ${larger.filenameSuffix} file with ${Object.entries(larger.when).map(([f, v]) => `${f} ${v}`).join(', ')} up to ${mb(larger.maxBytes)}`
    : '';
  return invalidRequest(`The file in '${name}' is too large: up to ${mb(limit.maxBytes)} (${limit.maxBytes.toLocaleString('en-US')} bytes)${also}.`, name);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Lists longer than this are first checked by their head (see elementFailure). */
const HEAD_ITEMS = 256;

/**
 * zod checks every element of a list even after one has failed, so 10,000 bad items
 * cost 10,000 failures (tens of milliseconds on the event loop) before the first is
 * reported. A body with a long list is therefore checked first with each long list cut
 * to its head: a failure inside one of the head's elements is a failure of the whole
 * body too (an element's validity does not depend on the elements after it), and is
 * reported at once. Anything else (a list's own size, refinements over the whole body)
 * is left to the full check.
 */
function elementFailure(fields: FieldParser, known: Record<string, unknown>): FieldsFailure | undefined {
  let head: Record<string, unknown> | undefined;
  for (const name in known) {
    const v = known[name];
    if (!Array.isArray(v) || v.length <= HEAD_ITEMS) continue;
    head ??= { ...known };
    head[name] = v.slice(0, HEAD_ITEMS);
  }
  if (!head) return undefined;
  const parsed = fields(head);
  if (!('issue' in parsed)) return undefined;
  // The issue as reported (inside a union, the branch that fits best).
  const first = specificIssue(parsed.issue, head);
  const name = String(first.path[0]);
  const inElement = first.path.length >= 2 && head[name] !== known[name] && typeof first.path[1] === 'number';
  return inElement ? { issue: parsed.issue, root: head } : undefined;
}

type FieldsFailure = { issue: z.core.$ZodIssue; root: Record<string, unknown> };
type FieldParser = (known: Record<string, unknown>) => { data: Record<string, unknown> } | FieldsFailure;

/**
 * What `z.object(shape).safeParse` answers, for a shape of optional fields: each field
 * present is parsed by its own schema, in the shape's order, and an absent one only when
 * its schema has a default. z.object runs every field's schema, present or not: a chat
 * table's 40-odd optional fields made a two-message body's check allocate 4.7 KB. The
 * first issue is the one z.object would report first, its path starting at the field.
 */
function fieldParser(shape: Record<string, z.ZodType>): FieldParser {
  const names = Object.keys(shape);
  const defaulted = new Set(names.filter((name) => {
    const r = shape[name]!.safeParse(undefined);
    return r.success && r.data !== undefined;
  }));
  return (known) => {
    const data: Record<string, unknown> = {};
    for (const name of names) {
      const value = known[name];
      if (value === undefined && !defaulted.has(name)) continue;
      const parsed = shape[name]!.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return { issue: { ...issue, path: [name, ...issue.path] } as z.core.$ZodIssue, root: known };
      }
      data[name] = parsed.data;
    }
    return { data };
  };
}

/** `messages[0].content` from a zod issue path, as the reference API names params. */
export function paramPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

/** The value at `path` inside `root` (own members only), or undefined. */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * The most specific issue: for a union that failed every branch, zod reports only
 * "Invalid input"; the branch issue that got deepest says what is actually wrong.
 * `root`: the value that was parsed, where the issue's path points. zod can put the
 * input on each issue (`reportInput`), but asking for it doubles the cost of every
 * successful parse too (a chat body's check 2.2 -> 4.2 µs), for the rare failure.
 */
export function specificIssue(issue: z.core.$ZodIssue, root?: unknown): { path: PropertyKey[]; message: string; refused?: string } {
  // An object without the discriminator at all is wrong as a whole: name the object, not its missing key.
  const tagged = issue as { note?: string; discriminator?: string; input?: unknown };
  if (issue.code === 'invalid_union' && tagged.note === 'No matching discriminator' && tagged.discriminator !== undefined) {
    const input = 'input' in tagged ? tagged.input : valueAt(root, issue.path.slice(0, -1));
    if (input !== null && typeof input === 'object' && !Array.isArray(input) && !(tagged.discriminator in input) && issue.path.at(-1) === tagged.discriminator) {
      return { path: issue.path.slice(0, -1), message: `expected an object with '${tagged.discriminator}': ${issue.message}` };
    }
  }
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    let best: z.core.$ZodIssue | undefined;
    for (const branch of issue.errors) {
      for (const inner of branch) {
        // Prefer the branch that matched furthest (longest path), then non-type errors.
        if (!best || inner.path.length > best.path.length || (inner.path.length === best.path.length && best.code === 'invalid_type' && inner.code !== 'invalid_type')) {
          best = inner;
        }
      }
    }
    if (best && (best.path.length > 0 || best.code !== 'invalid_type')) {
      // A branch's issues are placed relative to the union's own value.
      const inner = specificIssue(best, valueAt(root, issue.path));
      return { ...inner, path: [...issue.path, ...inner.path] };
    }
  }
  const refused = refusedMember(issue);
  return { path: [...issue.path], message: issue.message, ...(refused !== undefined ? { refused } : {}) };
}

/**
 * A member the service refuses inside a list entry (a tool's field, which no table key
 * can name) is a custom issue carrying `params.refused` (see `memberSchema` in
 * fields.ts): answered like a refused field, 400 unsupported_parameter.
 */
function refusedMember(issue: z.core.$ZodIssue): string | undefined {
  const params = issue.code === 'custom' ? (issue.params as { refused?: unknown } | undefined) : undefined;
  return typeof params?.refused === 'string' ? params.refused : undefined;
}

function describe(values: readonly unknown[]): string {
  return values.map((v) => preview(v)).join(', ');
}

/**
 * A short rendering of a caller's value for an error message: bounded in depth and
 * length whatever was sent (a 5,000-level array must not overflow the stack, nor a
 * megabyte string fill the message).
 */
export function preview(value: unknown, depth = 0): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (typeof value !== 'object' || value === null) return String(value);
  if (depth >= 2) return Array.isArray(value) ? '[...]' : '{...}';
  const entries = Array.isArray(value) ? value.slice(0, 4).map((v) => preview(v, depth + 1)) : Object.entries(value).slice(0, 4).map(([k, v]) => `${JSON.stringify(k.slice(0, 40))}: ${preview(v, depth + 1)}`);
  const more = (Array.isArray(value) ? value.length : Object.keys(value).length) > 4 ? ', ...' : '';
  return Array.isArray(value) ? `[${entries.join(', ')}${more}]` : `{${entries.join(', ')}${more}}`;
}

/** Applies a non-schema rule (refused, limited) to a present value. */
function enforce(name: string, rule: FieldRule, value: unknown): void {
  // An explicit null means "not set": clients such as LangChain send nulls for defaults.
  if (value === null || value === undefined) return;
  if (rule.category === 'refused') {
    throw unsupportedParameter(name, `Unsupported parameter: '${name}' is not supported by this service (${rule.note}).`);
  }
  if (rule.category === 'limited' && rule.each) {
    if (!Array.isArray(value)) throw invalidRequest(`Invalid value for '${name}': expected a list.`, name);
    const bad = value.find((entry) => !rule.values.some((v) => isDeepStrictEqual(v, entry)));
    if (bad !== undefined) {
      throw unsupportedParameter(
        name,
        `Unsupported value: '${name}' does not support ${preview(bad)} with this service. Supported values: ${describe(rule.values)}.`,
      );
    }
    return;
  }
  if (rule.category === 'limited' && !rule.values.some((v) => isDeepStrictEqual(v, value))) {
    throw unsupportedParameter(
      name,
      `Unsupported value: '${name}' does not support ${preview(value)} with this service. Supported values: ${describe(rule.values)}.`,
    );
  }
}

export function compileTable(fields: FieldTable, required: readonly string[] = [], strict = false): CompiledTable {
  const topLevel = new Map<string, FieldRule>();
  const nested: [string, string, FieldRule][] = [];
  const shape: Record<string, z.ZodType> = {};
  const models = new Map<string, readonly string[]>();
  const permissions: [string, Permission, ((value: unknown) => boolean)?][] = [];
  const uploads = new Map<string, UploadLimit>();
  for (const [name, rule] of Object.entries(fields)) {
    // A table that cannot work stops start-up instead of misjudging requests.
    if (rule.category === 'limited' && rule.values.length === 0) throw new Error(`limited field '${name}' lists no values`);
    if ((rule.category === 'applied' || rule.category === 'no_effect') && rule.schema !== undefined && typeof rule.schema.safeParse !== 'function') {
      throw new Error(`field '${name}' has no schema`);
    }
    const dot = name.indexOf('.');
    if (dot > 0 && !Object.hasOwn(fields, name.slice(0, dot))) throw new Error(`'${name}' classifies a member of '${name.slice(0, dot)}', which the table lacks`);
    if (dot > 0) {
      nested.push([name.slice(0, dot), name.slice(dot + 1), rule]);
      continue;
    }
    topLevel.set(name, rule);
    if ((rule.category === 'applied' || rule.category === 'no_effect') && rule.schema) shape[name] = rule.schema.optional();
    if (rule.category === 'applied' && rule.models) models.set(name, rule.models);
    if (rule.category === 'applied' && rule.permission) permissions.push(rule.permissionWhen ? [name, rule.permission, rule.permissionWhen] : [name, rule.permission]);
    if (rule.category === 'applied' && rule.upload) uploads.set(name, rule.upload);
  }
  for (const name of required) if (!topLevel.has(name)) throw new Error(`required field '${name}' is not in the table`);
  const parseFields = fieldParser(shape);

  return {
    permissions,
    uploads,
    modelFields: [...models.keys()],
    check(input) {
      const ignored: string[] = [];
      const known: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(input)) {
        const rule = topLevel.get(name);
        if (!rule) {
          if (strict) throw invalidRequest(`Unrecognized parameter: '${name}'.`, name);
          ignored.push(name);
          continue;
        }
        enforce(name, rule, value);
        if (rule.category === 'refused') continue;
        if (rule.category === 'limited' && value === null) continue;
        known[name] = value;
      }
      for (const [parent, child, rule] of nested) {
        const holder = input[parent];
        if (isObject(holder)) enforce(`${parent}.${child}`, rule, holder[child]);
      }
      for (const name of required) {
        // A null limited value means "not set" (above), so a required one is missing.
        if (input[name] === undefined || (input[name] === null && topLevel.get(name)?.category === 'limited')) {
          throw invalidRequest(`Missing required parameter: '${name}'.`, name);
        }
      }
      const parsed = elementFailure(parseFields, known) ?? parseFields(known);
      if ('issue' in parsed) {
        const issue = specificIssue(parsed.issue, parsed.root);
        const param = paramPath(issue.path);
        if (issue.refused !== undefined) throw unsupportedParameter(param, `Unsupported parameter: '${param}' is not supported by this service (${issue.refused}).`);
        throw invalidRequest(`Invalid value for '${param}': ${issue.message}`, param || null);
      }
      // A limited field has no schema, so the parse dropped it; its checked value is what the handler reads.
      for (const [name, value] of Object.entries(known)) {
        if (topLevel.get(name)?.category === 'limited') (parsed.data as Record<string, unknown>)[name] = value;
      }
      for (const [name, limit] of uploads) {
        const value = parsed.data[name] as { filename: string; bytes: number } | { filename: string; bytes: number }[] | undefined;
        if (Array.isArray(value)) {
          // Several parts: the limit counts them all.
          if (value.reduce((sum, f) => sum + f.bytes, 0) > limit.maxBytes) throw uploadTooLarge(name, limit);
        } else if (value && value.bytes > uploadLimitFor(limit, value.filename, parsed.data, true)) throw uploadTooLarge(name, limit);
      }
      for (const [name, ids] of models) {
        const value = parsed.data[name];
        if (typeof value === 'string' && !ids.includes(value)) {
          throw notFound(`The model '${value}' does not exist or you do not have access to it.`, name);
        }
      }
      return { value: parsed.data, ignored };
    },
  };
}

/** Names that would reach an object's prototype if used as keys: never a parameter of ours. */
const RESERVED_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Query strings and multipart forms arrive flat; `metadata[key]=value` (deepObject
 * style, as the openai SDKs send objects in forms too) is regrouped into
 * `{metadata: {key: value}}` before classification. The groups are prototype-less
 * objects, and a reserved name anywhere is refused, so no query or form can write to a
 * prototype.
 */
export function groupQuery(query: Record<string, unknown>, what = 'query parameter'): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(query)) {
    const m = /^([^[\]]+)\[([^[\]]*)\]$/.exec(key);
    for (const name of m ? [m[1]!, m[2]!] : [key]) {
      if (RESERVED_NAMES.has(name)) throw invalidRequest(`Invalid ${what} '${key}': '${name}' is not a parameter name.`, key);
    }
    if (m && m[2] === '') {
      // `include[]=a&include[]=b`, as the openai SDKs send lists
      out[m[1]!] = Array.isArray(value) ? value : [value];
    } else if (m) {
      const holder = (isObject(out[m[1]!]) ? out[m[1]!] : (out[m[1]!] = Object.create(null))) as Record<string, unknown>;
      holder[m[2]!] = value;
    } else out[key] = value;
  }
  return out;
}
