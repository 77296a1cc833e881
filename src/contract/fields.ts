// Builders for field rules and the schemas that several endpoints share
// (SPEC "Conventions" and "Limits"). A range lives here once.
import { z } from 'zod';
import type { Permission } from '../keys/permissions.ts';
import { jsonSchemaObject } from './json-schema-limits.ts';
import { UploadedFile } from './form.ts';
import type { AppliedField, FieldTable, LimitedField, NoEffectField, RefusedField, UploadLimit } from './types.ts';

export const applied = <S extends z.ZodType>(schema: S, note?: string): AppliedField<S> => ({
  category: 'applied',
  schema,
  ...(note ? { note } : {}),
});
/** An applied field only keys with `permission` may send (e.g. tools need function_calling). */
/** The field needs a key switch; with `when`, only for the values it accepts. */
export const needs = <S extends z.ZodType>(permission: Permission, rule: AppliedField<S>, when?: (value: unknown) => boolean): AppliedField<S> => ({
  ...rule,
  permission,
  ...(when ? { permissionWhen: when } : {}),
});
export const limited = (values: readonly unknown[], note?: string): LimitedField => ({ category: 'limited', values, ...(note ? { note } : {}) });
/** A list field whose every entry must be one of `values`. */
export const limitedEach = (values: readonly unknown[], note?: string): LimitedField => ({
  category: 'limited',
  values,
  each: true,
  ...(note ? { note } : {}),
});
export const refused = (note: string): RefusedField => ({ category: 'refused', note });
export const noEffect = <S extends z.ZodType = z.ZodType>(note?: string, schema?: S): NoEffectField<S> => ({
  category: 'no_effect',
  ...(schema ? { schema } : {}),
  ...(note ? { note } : {}),
});
/** A `model` field: values outside `ids` answer 404 model_not_found. */
export const modelField = (ids: readonly string[], note?: string): AppliedField<z.ZodString> => ({
  category: 'applied',
  schema: z.string(),
  models: ids,
  ...(note ? { note } : {}),
});

// --- Shared value schemas -------------------------------------------------

/**
 * A string kept as it is in a text column: PostgreSQL cannot store U+0000, so a NUL is
 * refused here rather than failing the write (prompts are stored JSON-encoded: free).
 */
export const storedText = (max: number) => z.string().max(max).refine((s) => !s.includes('\u0000'), 'must not contain NUL (U+0000) characters');

/** An object id a request names (looked up in the database): bounded, never NUL. */
export const objectId = () => storedText(256).pipe(z.string().min(1, 'must not be empty'));

/**
 * An object of at most `max` entries, counted before its entries are validated: a
 * 100,000-key object is refused at once instead of producing 100,000 issues.
 */
export const atMostEntries = <S extends z.ZodType>(max: number, what: string, schema: S) =>
  z
    .custom<unknown>((v) => typeof v !== 'object' || v === null || Array.isArray(v) || Object.keys(v).length <= max, `${what} has at most ${max} entries`)
    .pipe(schema);


/** SPEC Conventions: up to 16 entries, keys up to 64 characters, values strings up to 512. */
export const metadataSchema = atMostEntries(
  16,
  'metadata',
  z.record(
    storedText(Infinity).pipe(z.string().max(64, 'metadata keys are at most 64 characters')),
    storedText(Infinity).pipe(z.string().max(512, 'metadata values are at most 512 characters')),
  ),
).nullable();

export const temperatureSchema = z.number().min(0).max(2).nullable();
export const topPSchema = z.number().min(0).max(1).nullable();
export const penaltySchema = z.number().min(-2).max(2).nullable();
export const topLogprobsSchema = z.number().int().min(0).max(20).nullable();
export const seedSchema = z.number().int().nullable();
export const maxTokensSchema = z.number().int().min(1).nullable();
export const stopSchema = z
  .union([z.string(), z.array(z.string()).max(4, 'stop takes at most 4 sequences')])
  .nullable();
export const userSchema = storedText(256);
export const logitBiasSchema = atMostEntries(
  1_024,
  'logit_bias',
  z.record(z.string().regex(/^\d+$/, 'logit_bias keys are token ids'), z.number().min(-100).max(100)),
).nullable();
export const streamOptionsSchema = z
  .looseObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() })
  .nullable();
export const reasoningEffortSchema = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullable();
export const verbositySchema = z.enum(['low', 'medium', 'high']).nullable();

/** Sampling extensions beyond the reference API (applied; forwarded to upstreams). */
export const samplingExtensionFields = {
  top_k: applied(z.number().int().min(0).nullable(), 'top-K sampling (extension)'),
  min_p: applied(z.number().min(0).max(1).nullable(), 'minimum probability relative to the top token (extension)'),
  top_a: applied(z.number().min(0).max(1).nullable(), 'top-A sampling (extension)'),
  repetition_penalty: applied(z.number().min(0).max(2).nullable(), 'repeated-token penalty (extension)'),
} as const satisfies FieldTable;

/** Query fields of a cursor-paginated list (`limit` 1 to 100, `after`, `order`). */
export const listQueryFields = (defaultOrder: 'asc' | 'desc' = 'desc') => ({
  limit: applied(z.coerce.number().int().min(1).max(100).default(20), 'page size, 1 to 100 (default 20)'),
  after: applied(z.string().min(1), 'cursor: the last id of the previous page'),
  order: applied(z.enum(['asc', 'desc']).default(defaultOrder), `asc or desc (default ${defaultOrder})`),
}) satisfies FieldTable;

export const deletionSchema = (object: string) =>
  z.object({ id: z.string(), object: z.literal(object), deleted: z.boolean() });

export const listSchema = (item: z.ZodType) =>
  z.object({
    object: z.literal('list'),
    data: z.array(item),
    first_id: z.string().nullable().optional(),
    last_id: z.string().nullable().optional(),
    has_more: z.boolean(),
  });

// --- Shared by the file, media and store endpoints ------------------------

/** The same table without the named fields (e.g. a list the reference gives no `order`). */
export const withoutFields = (table: FieldTable, ...names: readonly string[]): FieldTable =>
  Object.fromEntries(Object.entries(table).filter(([name]) => !names.includes(name)));

export const MB = 1024 * 1024;

/**
 * A multipart file part: one part with a filename, stored by the transport as a blob
 * (contract/form.ts). The name is kept in a text column: 1 to 255 characters, no NUL.
 */
export const uploadSchema = z
  .custom<UploadedFile>((v) => v instanceof UploadedFile, 'must be one file: a multipart part with a filename')
  .refine((f) => f.filename.length > 0 && f.filename.length <= 255 && !f.filename.includes('\u0000'), 'the file name must be 1 to 255 characters, without NUL');

/** A multipart file field and its size limit (enforced while the part streams). */
export const fileUpload = (note: string, upload: UploadLimit): AppliedField<typeof uploadSchema> => ({ ...applied(uploadSchema, `multipart file part: ${note}`), upload });

/**
 * Several multipart file parts in one field (a directory upload: each filename a relative
 * path, unchecked here), or one; up to `maxFiles` parts and `maxBytes` in total.
 */
export const fileUploads = (note: string, maxFiles: number, maxBytes: number) => {
  const one = z
    .custom<UploadedFile>((v) => v instanceof UploadedFile, 'must be files: multipart parts with a filename')
    .refine((f) => f.filename.length > 0 && f.filename.length <= 1024 && !f.filename.includes('\u0000'), 'each file name must be 1 to 1,024 characters, without NUL');
  const schema = z.union([one, z.array(one).min(1).max(maxFiles, `at most ${maxFiles} files`)]);
  return { ...applied(schema, `multipart file parts: ${note}`), upload: { maxBytes, many: { maxFiles } } } satisfies AppliedField<typeof schema>;
};

/** A boolean sent as a multipart form value (`true` / `false`) or as JSON. */
export const formBooleanSchema = z.union([
  z.boolean(),
  // The trailing pipe keeps the output side describable in JSON Schema.
  z.enum(['true', 'false']).pipe(z.transform((v) => v === 'true')).pipe(z.boolean()),
]);

/** A body that is not JSON (audio, file content, a zip). */
export const binaryContentSchema = z.string().meta({ format: 'binary' });

/** Vector store file `attributes` (SPEC: up to 16 keys; keys 64 characters, string values 512). */
export const attributesSchema = z
  .record(
    z.string().max(64, 'attribute keys are at most 64 characters'),
    z.union([z.string().max(512, 'attribute string values are at most 512 characters'), z.number(), z.boolean()]),
  )
  .refine((m) => Object.keys(m).length <= 16, { message: 'attributes has at most 16 keys' })
  .nullable();

/** Bounds of an attribute filter: each is evaluated against every file searched. */
const FILTER_MAX_LIST = 64;
const FILTER_MAX_NODES = 256;
const FILTER_MAX_DEPTH = 8;

const comparisonFilterSchema = z.object({
  type: z.enum(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin']),
  key: z.string().max(64, 'attribute keys are at most 64 characters'),
  value: z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()])).max(FILTER_MAX_LIST, `a list value holds at most ${FILTER_MAX_LIST} entries`)]),
});
type AttributeFilter =
  | z.infer<typeof comparisonFilterSchema>
  | { type: 'and' | 'or'; filters: AttributeFilter[] };
const filterNodeSchema: z.ZodType<AttributeFilter> = z.lazy(() =>
  z.union([
    comparisonFilterSchema,
    z.object({ type: z.enum(['and', 'or']), filters: z.array(filterNodeSchema).max(FILTER_MAX_LIST, `a compound filter holds at most ${FILTER_MAX_LIST} filters`) }),
  ]),
);
/** Attribute filters of vector store search (and of the file_search tool): comparisons combined with and / or, at most 256 in all, 8 deep. */
export const attributeFilterSchema: z.ZodType<AttributeFilter> = filterNodeSchema
  .superRefine((filter, ctx) => {
    let nodes = 0;
    let deepest = 0;
    const walk = (f: AttributeFilter, depth: number) => {
      nodes++;
      deepest = Math.max(deepest, depth);
      if ('filters' in f && nodes <= FILTER_MAX_NODES && depth <= FILTER_MAX_DEPTH) for (const g of f.filters) walk(g, depth + 1);
    };
    walk(filter, 1);
    if (nodes > FILTER_MAX_NODES) ctx.addIssue({ code: 'custom', message: `a filter holds at most ${FILTER_MAX_NODES} comparisons and compounds in all` });
    else if (deepest > FILTER_MAX_DEPTH) ctx.addIssue({ code: 'custom', message: `filters nest at most ${FILTER_MAX_DEPTH} deep` });
  })
  .meta({ id: 'AttributeFilter' });

// --- Members of list entries ---------------------------------------------

type MemberSchemas<T extends FieldTable, R extends string> = {
  -readonly [K in keyof T as K extends `${string}.${string}` ? never : T[K] extends AppliedField | NoEffectField ? K : never]: T[K] extends
    | AppliedField<infer S>
    | NoEffectField<infer S>
    ? K extends R
      ? S
      : z.ZodOptional<S>
    : never;
};

/**
 * The schema of a list entry whose members a table classifies like a body's fields (a
 * hosted tool in `tools`, which no body key can name): tagged by `type`; applied and
 * no-effect members validated; a refused member, top-level or dotted, present and not
 * null, is a custom issue carrying `params.refused`, which the checker answers 400
 * unsupported_parameter naming it (`tools[0].ranking_options.hybrid_search`).
 */
export function memberSchema<Tag extends string, T extends FieldTable, R extends string = never>(tag: Tag | readonly Tag[], table: T, required: readonly R[] = []) {
  // One type name or several (a tool offered under dated names too).
  const shape: Record<string, z.ZodType> = { type: typeof tag === 'string' ? z.literal(tag) : z.literal([...tag]) };
  const refusedMembers: { path: string[]; note: string }[] = [];
  for (const [name, rule] of Object.entries(table)) {
    if (rule.category === 'refused') refusedMembers.push({ path: name.split('.'), note: rule.note });
    else if (rule.category === 'limited') throw new Error(`member '${name}' of ${tag}: limited members are not supported, give an applied schema`);
    else if (!name.includes('.')) {
      const schema = rule.schema ?? z.unknown();
      shape[name] = (required as readonly string[]).includes(name) ? schema : schema.optional();
    }
  }
  return z.looseObject(shape as { type: z.ZodLiteral<Tag> } & MemberSchemas<T, R>).superRefine((value, ctx) => {
    for (const { path, note } of refusedMembers) {
      let v: unknown = value;
      for (const k of path) v = v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, k) ? (v as Record<string, unknown>)[k] : undefined;
      if (v !== undefined && v !== null) ctx.addIssue({ code: 'custom', path, message: `not supported by this service (${note})`, params: { refused: note } });
    }
  });
}

// --- Shared by chat, text completions and responses ------------------------

/** Credits a request used (SPEC "What the service does" item 4). */
/** The header that carries `svc` on an answer whose body is not JSON (audio, text formats). */
export const SVC_HEADER_NAME = 'X-Service-Svc';
export const SVC_HEADER = 'x-service-svc';

export const svcSchema = z.number().min(0).meta({ description: 'credits this request used' });

export const safetyIdentifierSchema = storedText(64).nullable();

/** `response_format` of chat and text completions. */
export const responseFormatSchema = z
  .discriminatedUnion('type', [
    z.looseObject({ type: z.literal('text') }),
    z.looseObject({ type: z.literal('json_object') }),
    z.looseObject({
      type: z.literal('json_schema'),
      json_schema: z.looseObject({
        name: z.string(),
        description: z.string().optional(),
        schema: jsonSchemaObject.optional(),
        strict: z.boolean().nullable().optional(),
      }),
    }),
  ])
  .meta({ id: 'ResponseFormat' });

/** `reasoning` on chat and text completions: only `effort` is read. */
export const effortOnlyReasoningSchema = z.looseObject({ effort: reasoningEffortSchema.optional() }).nullable();

/** Token usage of chat and text completions; `svc` rides on the final streaming usage chunk. */
export const completionUsageSchema = z
  .looseObject({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    prompt_tokens_details: z
      .looseObject({ cached_tokens: z.number().int().optional(), audio_tokens: z.number().int().optional() })
      .optional(),
    completion_tokens_details: z
      .looseObject({
        reasoning_tokens: z.number().int().optional(),
        audio_tokens: z.number().int().optional(),
        accepted_prediction_tokens: z.number().int().optional(),
        rejected_prediction_tokens: z.number().int().optional(),
      })
      .optional(),
    svc: svcSchema.optional(),
  })
  .meta({ id: 'CompletionUsage' });

/** The three prompt-cache fields: accepted without effect wherever the reference defines them. */
export const promptCacheFields = {
  prompt_cache_key: noEffect('accepted without effect', z.string().nullable()),
  prompt_cache_options: noEffect(
    'accepted without effect',
    z.looseObject({ ttl: z.string().optional(), mode: z.string().optional() }).nullable(),
  ),
  prompt_cache_retention: noEffect('accepted without effect', z.enum(['in_memory', '24h']).nullable()),
} as const satisfies FieldTable;

/** Streaming rows shared by chat and text completions (SPEC: usage chunk with usage.svc; obfuscation without effect). */
export const streamFields = {
  stream: applied(z.boolean().nullable(), 'server-sent events'),
  stream_options: applied(streamOptionsSchema, 'include_usage adds a final usage chunk'),
  'stream_options.include_usage': applied(z.boolean(), 'adds a final usage chunk carrying usage.svc'),
  'stream_options.include_obfuscation': noEffect('accepted without effect', z.boolean()),
} as const;
