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

const tokenArray = z
  .array(z.number().int().min(0))
  .min(1, 'a token array cannot be empty')
  .max(MAX_INPUT_TOKENS, `an input takes at most ${MAX_INPUT_TOKENS} tokens`);

// Counted before the union: a list over its bound would otherwise be reported by the
// branch that got deepest (a list of 3,000 token arrays as "input[0]: expected number").
const embeddingInputSchema = z.preprocess(
  (value, ctx) => {
    if (Array.isArray(value)) {
      const tokens = typeof value[0] === 'number';
      const max = tokens ? MAX_INPUT_TOKENS : MAX_INPUTS;
      if (value.length > max) ctx.addIssue({ code: 'custom', input: value, message: tokens ? `an input takes at most ${MAX_INPUT_TOKENS} tokens` : `input takes at most ${MAX_INPUTS} items` });
    }
    return value;
  },
  z.union([
    z.string().min(1, 'input cannot be an empty string'),
    z.array(z.string().min(1, 'input cannot contain an empty string')).min(1).max(MAX_INPUTS, `input takes at most ${MAX_INPUTS} items`),
    tokenArray,
    z.array(tokenArray).min(1).max(MAX_INPUTS, `input takes at most ${MAX_INPUTS} items`),
  ]),
);

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
