// POST /embeddings (SPEC "Embeddings, moderations, decisions"; Limits: input 2048 items, dimensions 1 to 3072).
// A token array is one input, bounded like any input by the models' 8,192 tokens; a
// string's tokens are counted by the handler (src/api/embeddings/), which needs the tokenizer.
import { z } from 'zod';
import { applied, modelField, svcSchema, userSchema } from '../fields.ts';
import { EMBEDDING_MODELS } from '../models.ts';
import { defineEndpoint } from '../types.ts';

const MAX_INPUTS = 2048;
/** Tokens one input may hold (every embedding model's context). */
export const MAX_INPUT_TOKENS = 8192;

const isTokenId = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/**
 * A token array, checked in one plain loop: zod's per-item parse takes some 100 ms for a
 * body of half a million ids, all of it holding the event loop. Published as the array
 * schema it is; the first id at fault is named (input[3], input[2][5]).
 */
const tokenArray = z
  .custom<number[]>()
  .superRefine((value, ctx) => {
    if (!Array.isArray(value)) return void ctx.addIssue({ code: 'custom', input: value, message: 'expected a token array (a list of integers from 0)' });
    if (value.length === 0) return void ctx.addIssue({ code: 'custom', input: value, message: 'a token array cannot be empty' });
    if (value.length > MAX_INPUT_TOKENS) return void ctx.addIssue({ code: 'custom', input: value, message: `an input takes at most ${MAX_INPUT_TOKENS} tokens` });
    for (let i = 0; i < value.length; i++) {
      if (!isTokenId(value[i])) return void ctx.addIssue({ code: 'custom', input: value[i], path: [i], message: 'expected a token id (an integer from 0)' });
    }
  })
  .meta({ type: 'array', minItems: 1, maxItems: MAX_INPUT_TOKENS, items: { type: 'integer', minimum: 0 } });

const stringInput = z.string().min(1, 'input cannot be an empty string');
const stringList = z.array(z.string().min(1, 'input cannot contain an empty string')).min(1, 'input cannot be an empty list').max(MAX_INPUTS, `input takes at most ${MAX_INPUTS} items`);
const tokenLists = z.array(tokenArray).min(1).max(MAX_INPUTS, `input takes at most ${MAX_INPUTS} items`);
const inputShapes = [stringInput, stringList, tokenArray, tokenLists] as const;

/**
 * `input` is checked as the shape it has (its first item tells a token array from a list
 * of strings or of token arrays), not as a union: a union tries every shape and reports
 * whichever issue got deepest, often the wrong one (a list of 3,000 token arrays as
 * "input[0]: expected number"). A list is counted before its items are read.
 */
const embeddingInputSchema = z
  .custom<z.output<(typeof inputShapes)[number]>>()
  .superRefine((value, ctx) => {
    if (typeof value !== 'string' && !Array.isArray(value)) {
      return void ctx.addIssue({ code: 'custom', input: value, message: 'expected a string, a list of strings, a token array or a list of token arrays' });
    }
    const first: unknown = Array.isArray(value) ? value[0] : undefined;
    const shape = typeof value === 'string' ? stringInput : typeof first === 'number' ? tokenArray : Array.isArray(first) ? tokenLists : stringList;
    const max = shape === tokenArray ? MAX_INPUT_TOKENS : MAX_INPUTS;
    if (Array.isArray(value) && value.length > max) {
      return void ctx.addIssue({ code: 'custom', input: value, message: shape === tokenArray ? `an input takes at most ${MAX_INPUT_TOKENS} tokens` : `input takes at most ${MAX_INPUTS} items` });
    }
    const parsed = shape.safeParse(value);
    const issue = parsed.error?.issues[0];
    if (issue) ctx.addIssue({ code: 'custom', input: value, path: issue.path, message: issue.message });
  })
  // Published as the four shapes it takes.
  .meta(withoutDialect(z.toJSONSchema(z.union(inputShapes), { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' })));

function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

export const embeddingSchema = z
  .looseObject({
    object: z.literal('embedding'),
    index: z.number().int(),
    // A list of floats, or a base64 string of little-endian float32 with encoding_format base64.
    embedding: z.union([z.array(z.number()), z.string()]),
  })
  .meta({ id: 'Embedding' });

export const createEmbeddingResponseSchema = z
  .looseObject({
    object: z.literal('list'),
    data: z.array(embeddingSchema),
    model: z.string(),
    usage: z.looseObject({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
    svc: svcSchema,
  })
  .meta({ id: 'CreateEmbeddingResponse' });

export const createEmbedding = defineEndpoint({
  operationId: 'createEmbedding',
  method: 'POST',
  path: '/embeddings',
  family: 'embeddings',
  summary: 'Creates embedding vectors for a string or a list of inputs.',
  permission: 'embeddings',
  body: {
    type: 'json',
    required: ['model', 'input'],
    fields: {
      model: modelField(EMBEDDING_MODELS, 'agent-embed and agent-embed-large are aliases of text-embedding-3-small and text-embedding-3-large'),
      input: applied(embeddingInputSchema, `a string, or a list of up to ${MAX_INPUTS} strings or token arrays (o200k token ids); each input at most ${MAX_INPUT_TOKENS} tokens`),
      dimensions: applied(z.number().int().min(1).max(3072), '1 to 3072; text-embedding-3 models only'),
      encoding_format: applied(z.enum(['float', 'base64']).default('float'), 'float or base64 (default float)'),
      user: applied(userSchema, 'kept in the activity log'),
    },
  },
  response: { schema: createEmbeddingResponseSchema },
  billable: true,
  notes: [
    `input takes up to ${MAX_INPUTS} items of at most ${MAX_INPUT_TOKENS} tokens each (o200k, the service's tokenizer, counts them and reads token arrays)`,
    'dimensions is 1 to 3072, up to the model\'s own size (1536 for text-embedding-3-small and agent-embed); text-embedding-ada-002 takes none',
  ],
});

export const embeddingsEndpoints = [createEmbedding];
