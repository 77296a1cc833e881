// One generated request and what its answer must satisfy beyond the invariants every
// answer has (no 5xx, a 4xx in the error shape with X-Request-Id).
import type { Operation } from './operations.ts';
import type { RawRequest } from './raw-http.ts';
import type { SchemaSet } from './json-schema.ts';
import type { Who, World } from './world.ts';

export const CATEGORIES = [
  'valid',
  'wrong-type',
  'wrong-type-nested',
  'missing-required',
  'unknown-field',
  'out-of-range',
  'limited-value',
  'refused-field',
  'huge-string',
  'huge-array',
  'deep-nesting',
  'invalid-utf8',
  'duplicate-keys',
  'proto-body',
  'proto-query',
  'query-hostile',
  'truncated-json',
  'content-type',
  'broken-multipart',
  'multipart-fields',
  'proto-form',
  'bad-headers',
  'bad-path',
  'oversized-body',
  'other-account',
  'limited-key',
  'bad-auth',
  /** the messages root: x-api-key and Authorization naming different keys */
  'key-headers',
  'wrong-method',
  'pathological-schema',
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface Expect {
  /** must be refused: a 4xx */
  refuse?: boolean;
  /** exactly this status */
  status?: number;
  /** and this error code */
  code?: string;
  /** the one field at fault: `param` must name it (exactly, or a member of it) */
  param?: { field: string; exact: boolean };
  /** malformed at the HTTP level: a close without an answer is tolerated (counted apart) */
  parserLevel?: boolean;
}

export interface Case {
  category: Category;
  op: Operation;
  who: Who | 'none';
  /** one line: what is hostile about it */
  note: string;
  expect: Expect;
  /** Builds the bytes only when sent: a case can hold a megabyte. */
  build(): RawRequest;
}

/** What the contract says about a value in body field `field` (or a member of it). */
export function fieldExpect(world: World, set: SchemaSet, op: Operation, field: string, value: unknown, exact: boolean): Expect {
  // A null means "not set" to limited and refused fields; nothing to expect of it.
  if (value === null || value === undefined || !world.baseOk.get(op.id)) return {};
  if (op.refused.includes(field)) return { refuse: true, code: 'unsupported_parameter', param: { field, exact: true } };
  const schema = op.body ? set.objectShape(op.body.schema).properties[field] : undefined;
  if (!schema) return {};
  if (set.valid(schema, value)) return {};
  const limitedScalar = op.limited.includes(field) && Array.isArray(set.resolve(schema).enum);
  return { refuse: true, param: { field, exact }, ...(limitedScalar ? { code: 'unsupported_parameter' } : {}) };
}
