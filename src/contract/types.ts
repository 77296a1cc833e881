// The shape of a contract table. One table per endpoint classifies every field the
// reference API defines for it; the same tables drive validation, /capabilities and
// /openapi.json, so a rule is written here once and nowhere else.
import type { z } from 'zod';
import type { Permission } from '../keys/permissions.ts';

/** A field the service applies, with its type and range. */
export interface AppliedField<S extends z.ZodType = z.ZodType> {
  readonly category: 'applied';
  readonly schema: S;
  readonly note?: string;
  /** Set on `model` fields: a value outside this list is 404 model_not_found, not 400. */
  readonly models?: readonly string[];
  /** The key switch a request needs to send this field at all (403 model_not_allowed without it). */
  readonly permission?: Permission;
  /** With `permission`: the switch is needed only for a value this accepts (e.g. a tools list holding a client tool). */
  readonly permissionWhen?: (value: unknown) => boolean;
  /** Set on multipart file fields: how large the file may be. */
  readonly upload?: UploadLimit;
}

/**
 * Size limits of a multipart file field. The transport enforces the largest limit that
 * can still apply while the part streams (the form's later fields are unknown yet); the
 * checker applies the exact one once every field is known.
 */
export interface UploadLimit {
  readonly maxBytes: number;
  /** A larger limit for a file whose name ends with `filenameSuffix`, sent with these field values (a batch .jsonl). */
  readonly larger?: {
    readonly maxBytes: number;
    readonly filenameSuffix: string;
    readonly when: Readonly<Record<string, string>>;
  };
  /**
   * The field takes several file parts (sent as `name` or `name[]`, as the openai SDKs send
   * lists), up to `maxFiles`, with `maxBytes` counted over all of them; each part keeps the
   * path its filename gives (a directory upload), so the handler must check those paths.
   */
  readonly many?: { readonly maxFiles: number };
}

/** A field that accepts only the listed values; anything else is refused like an unsupported field. */
export interface LimitedField {
  readonly category: 'limited';
  readonly values: readonly unknown[];
  /** The value is a list, and each of its entries must be one of `values` (e.g. `include`). */
  readonly each?: boolean;
  readonly note?: string;
}

/** A field the reference API defines and the service cannot honour: 400 unsupported_parameter. */
export interface RefusedField {
  readonly category: 'refused';
  readonly note: string;
}

/** Accepted and validated for shape, changes nothing. */
export interface NoEffectField<S extends z.ZodType = z.ZodType> {
  readonly category: 'no_effect';
  readonly schema?: S;
  readonly note?: string;
}

export type FieldRule = AppliedField | LimitedField | RefusedField | NoEffectField;

/**
 * Fields of a body or query. Keys are top-level names; a dotted key
 * (`stream_options.include_obfuscation`) classifies a member of an object field.
 */
export type FieldTable = Readonly<Record<string, FieldRule>>;

export type HttpMethod = 'GET' | 'POST' | 'DELETE' | 'PATCH';

export interface EndpointContract {
  /** Stable id, the reference API's operationId where it has one (e.g. `createChatCompletion`). */
  readonly operationId: string;
  readonly method: HttpMethod;
  /** OpenAPI-style path relative to the root, e.g. `/chat/completions/{completion_id}`. */
  readonly path: string;
  /** API family (one folder under src/api). */
  readonly family: string;
  readonly summary: string;
  /** The key switch this endpoint needs, if any. */
  readonly permission?: Permission;
  /** Request body: JSON or multipart form fields. */
  readonly body?: {
    readonly type: 'json' | 'multipart';
    readonly fields: FieldTable;
    readonly required?: readonly string[];
    /** A multipart endpoint that also takes a JSON object of the same fields (its files cannot be sent that way). */
    readonly alsoJson?: boolean;
    /** A field outside the table is refused (400 naming it) instead of ignored and named in a header. */
    readonly strict?: boolean;
  };
  /** Query string fields (values arrive as strings: schemas should coerce). */
  readonly query?: FieldTable;
  /** Path parameters and their schemas. */
  readonly params?: Readonly<Record<string, z.ZodType>>;
  /** Successful response: a JSON schema, and whether `stream: true` turns it into SSE. */
  readonly response: {
    readonly schema: z.ZodType;
    readonly description?: string;
    /** `sse`: `stream: true` answers text/event-stream; `binary`: the body is not JSON (audio, file content). */
    readonly alternate?: 'sse' | 'binary';
    /** With `sse`: what the stream is and how it ends, for the OpenAPI document (required there: surfaces end differently). */
    readonly stream?: string;
    readonly contentType?: string;
  };
  /** Forwarded unchanged to an upstream (the gateway): its body is not classified, and its OpenAPI entry says so. */
  readonly passthrough?: boolean;
  /** The endpoint runs a model and spends credits (a reservation is taken before the handler). */
  readonly billable?: boolean;
  /** Free-form notes published in /capabilities. */
  readonly notes?: readonly string[];
}

type ValueOf<R> = R extends AppliedField<infer S>
  ? z.output<S>
  : R extends NoEffectField<infer S>
    ? z.output<S>
    : R extends LimitedField
      ? unknown
      : never;

/** The validated body (or query) a handler receives for a field table: refused fields never arrive. */
export type ValuesOf<T> = {
  -readonly [K in keyof T as K extends `${string}.${string}` ? never : T[K] extends RefusedField ? never : K]?: ValueOf<T[K]>;
};

/** The checked body a handler receives for an endpoint contract. */
export type BodyOf<C> = C extends { body: { fields: infer F } } ? ValuesOf<F> : Record<string, never>;
/** The checked query a handler receives for an endpoint contract. */
export type QueryOf<C> = C extends { query: infer Q } ? ValuesOf<Q> : Record<string, never>;

/** Identity helper that keeps literal types. */
export function defineEndpoint<const T extends EndpointContract>(contract: T): T {
  return contract;
}
