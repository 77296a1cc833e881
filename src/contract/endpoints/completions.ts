// Legacy text completions (SPEC "Text completions").
import { z } from 'zod';
import {
  streamFields,
  applied,
  completionUsageSchema,
  effortOnlyReasoningSchema,
  limited,
  logitBiasSchema,
  maxTokensSchema,
  modelField,
  penaltySchema,
  reasoningEffortSchema,
  responseFormatSchema,
  samplingExtensionFields,
  seedSchema,
  stopSchema,
  svcSchema,
  temperatureSchema,
  topPSchema,
  userSchema,
} from '../fields.ts';
import { JSON_SCHEMA_BUDGET_NOTE } from '../json-schema-limits.ts';
import { CHAT_MODELS } from '../models.ts';
import { defineEndpoint } from '../types.ts';

/** SPEC: a string or a one-item list (token-id prompts are not offered). */
const promptSchema = z.union([z.string(), z.array(z.string()).length(1, 'prompt takes a string or a one-item list')]);

/** One text completion; streamed chunks have the same shape (the last usage chunk carries usage.svc). */
export const textCompletionSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('text_completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int(),
        text: z.string(),
        // null on streamed chunks before the last one.
        finish_reason: z.enum(['stop', 'length', 'content_filter']).nullable(),
        logprobs: z.looseObject({}).nullable(),
      }),
    ),
    usage: completionUsageSchema.nullable().optional(),
    system_fingerprint: z.string().nullable().optional(),
    svc: svcSchema.optional(),
  })
  .meta({ id: 'TextCompletion' });

export const createCompletion = defineEndpoint({
  operationId: 'createCompletion',
  method: 'POST',
  path: '/completions',
  family: 'completions',
  summary: 'Creates a completion for the provided prompt.',
  billable: true,
  body: {
    type: 'json',
    required: ['model', 'prompt'],
    fields: {
      model: modelField(CHAT_MODELS),
      prompt: applied(promptSchema, 'a string or a one-item list'),
      max_tokens: applied(maxTokensSchema, "output cap, also capped by the key's max_output_tokens when it has one"),
      max_completion_tokens: applied(maxTokensSchema, 'alias of max_tokens (extension)'),
      temperature: applied(temperatureSchema, '0 to 2, default 0.7'),
      top_p: applied(topPSchema, 'nucleus sampling'),
      ...samplingExtensionFields,
      stop: applied(stopSchema, 'up to 4 sequences'),
      ...streamFields,
      presence_penalty: applied(penaltySchema, '-2 to 2'),
      frequency_penalty: applied(penaltySchema, '-2 to 2'),
      logit_bias: applied(logitBiasSchema, 'token biases'),
      seed: applied(seedSchema, 'best-effort determinism'),
      response_format: applied(responseFormatSchema, `text, json_object or json_schema (extension). json_schema.schema: ${JSON_SCHEMA_BUDGET_NOTE}`),
      reasoning_effort: applied(reasoningEffortSchema, 'none to xhigh, on models that reason (extension)'),
      reasoning: applied(effortOnlyReasoningSchema, 'takes only effort (extension)'),
      user: applied(userSchema, 'kept in the activity log'),
      n: limited([1]),
      best_of: limited([1]),
      echo: limited([false]),
      logprobs: limited([false], 'log probabilities are not offered on text completions'),
      suffix: limited([''], 'insertion (suffix) is not offered'),
    },
  },
  response: {
    schema: textCompletionSchema,
    description: 'A text completion; with stream: true a text/event-stream of text_completion chunks ending with data: [DONE].',
    alternate: 'sse',
    stream: 'server-sent events of text_completion chunks, ending with data: [DONE]',
  },
  notes: ['The credits used are in svc (usage.svc on the final streaming usage chunk).'],
});

export const completionsEndpoints = [createCompletion];
