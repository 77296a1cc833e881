// Chat completions and stored chat completions (SPEC "Chat completions", "Stored chat completion").
import { z } from 'zod';
import {
  streamFields,
  applied,
  deletionSchema,
  effortOnlyReasoningSchema,
  limited,
  listQueryFields,
  listSchema,
  logitBiasSchema,
  maxTokensSchema,
  metadataSchema,
  modelField,
  needs,
  penaltySchema,
  promptCacheFields,
  reasoningEffortSchema,
  refused,
  responseFormatSchema,
  safetyIdentifierSchema,
  samplingExtensionFields,
  seedSchema,
  stopSchema,
  temperatureSchema,
  topLogprobsSchema,
  topPSchema,
  userSchema,
  verbositySchema,
} from '../fields.ts';
import { JSON_SCHEMA_BUDGET_NOTE } from '../json-schema-limits.ts';
import { CHAT_MODELS } from '../models.ts';
import { defineEndpoint } from '../types.ts';
import {
  chatCompletionSchema,
  chatFunctionCallSchema,
  chatFunctionsSchema,
  chatMessagesSchema,
  chatStoreMessageSchema,
  chatToolChoiceSchema,
  chatToolsSchema,
} from './chat-schemas.ts';

export { chatCompletionChunkSchema, chatCompletionSchema } from './chat-schemas.ts';

const completionIdParam = { completion_id: z.string().meta({ description: 'a stored chat completion id (chatcmpl-...)' }) };

export const createChatCompletion = defineEndpoint({
  operationId: 'createChatCompletion',
  method: 'POST',
  path: '/chat/completions',
  family: 'chat',
  summary: 'Creates a model response for the given conversation.',
  billable: true,
  body: {
    type: 'json',
    required: ['model', 'messages'],
    fields: {
      model: modelField(CHAT_MODELS),
      messages: applied(chatMessagesSchema, 'the whole conversation: text, images (https or data URL), files (file_id), audio, tool calls and results'),
      tools: needs('function_calling', applied(chatToolsSchema, `function tools only. Parameters: ${JSON_SCHEMA_BUDGET_NOTE}`)),
      tool_choice: applied(chatToolChoiceSchema, 'auto, none, required or a function'),
      functions: needs('function_calling', applied(chatFunctionsSchema, `legacy form of tools. Parameters: ${JSON_SCHEMA_BUDGET_NOTE}`)),
      function_call: applied(chatFunctionCallSchema, 'legacy form of tool_choice'),
      parallel_tool_calls: applied(z.boolean().nullable(), 'sent to the model'),
      max_tokens: applied(maxTokensSchema, "output cap, also capped by the key's max_output_tokens when it has one"),
      max_completion_tokens: applied(maxTokensSchema, 'alias of max_tokens'),
      temperature: applied(temperatureSchema, '0 to 2, default 0.7'),
      top_p: applied(topPSchema, 'nucleus sampling'),
      ...samplingExtensionFields,
      presence_penalty: applied(penaltySchema, '-2 to 2'),
      frequency_penalty: applied(penaltySchema, '-2 to 2'),
      logit_bias: applied(logitBiasSchema, 'token biases'),
      logprobs: applied(z.boolean().nullable(), 'token log probabilities'),
      top_logprobs: applied(topLogprobsSchema, '0 to 20'),
      seed: applied(seedSchema, 'best-effort determinism'),
      stop: applied(stopSchema, 'up to 4 sequences'),
      ...streamFields,
      response_format: applied(responseFormatSchema, `text, json_object or json_schema. json_schema.schema: ${JSON_SCHEMA_BUDGET_NOTE}`),
      reasoning_effort: applied(reasoningEffortSchema, 'none to xhigh, on models that reason'),
      reasoning: applied(effortOnlyReasoningSchema, 'takes only effort (extension)'),
      verbosity: applied(verbositySchema, 'added to the instructions as how long the answer should be'),
      user: applied(userSchema, 'kept in the activity log'),
      safety_identifier: applied(safetyIdentifierSchema, 'kept in the activity log'),
      store: applied(z.boolean().nullable(), 'keep the completion 30 days'),
      metadata: applied(metadataSchema, 'up to 16 entries; keys up to 64 characters, values up to 512'),
      n: limited([1]),
      service_tier: limited(['auto', 'default'], 'flex, priority, scale and fast are not offered'),
      modalities: limited([['text']], 'text output only'),
      audio: refused('audio output is not offered: use /audio/speech'),
      prediction: refused('predicted outputs are not offered'),
      web_search_options: refused("search runs through the assistant's own tools: send the request with tools empty"),
      moderation: refused('moderation is set per key by its Moderate requests switch'),
      ...promptCacheFields,
    },
  },
  response: {
    schema: chatCompletionSchema,
    description: 'A chat completion; with stream: true a text/event-stream of chat.completion.chunk objects ending with data: [DONE].',
    alternate: 'sse',
    stream: 'server-sent events of chat.completion.chunk objects, ending with data: [DONE]',
  },
  notes: [
    'With tools, response_format or logprobs (or when the key has agent tools off) the model answers directly, streamed token by token; otherwise the assistant may use its own tools first.',
    'Stream order: a role chunk, content chunks (also reasoning_content and tool_calls fragments), a finish chunk, an optional usage chunk (stream_options.include_usage), then data: [DONE].',
    'The credits used are in svc (usage.svc on the final streaming usage chunk).',
    'store: true keeps the completion 30 days.',
  ],
});

export const listChatCompletions = defineEndpoint({
  operationId: 'listChatCompletions',
  method: 'GET',
  path: '/chat/completions',
  family: 'chat',
  summary: 'Lists stored chat completions (created with store: true).',
  query: {
    model: applied(z.string(), 'only completions made with this model'),
    metadata: applied(metadataSchema, 'filter: metadata[<key>]=<value>'),
    ...listQueryFields('asc'),
  },
  response: { schema: listSchema(chatCompletionSchema) },
});

export const getChatCompletion = defineEndpoint({
  operationId: 'getChatCompletion',
  method: 'GET',
  path: '/chat/completions/{completion_id}',
  family: 'chat',
  summary: 'Retrieves a stored chat completion.',
  params: completionIdParam,
  response: { schema: chatCompletionSchema },
});

export const updateChatCompletion = defineEndpoint({
  operationId: 'updateChatCompletion',
  method: 'POST',
  path: '/chat/completions/{completion_id}',
  family: 'chat',
  summary: "Replaces a stored chat completion's metadata.",
  params: completionIdParam,
  body: {
    type: 'json',
    required: ['metadata'],
    fields: { metadata: applied(metadataSchema, 'replaces the stored metadata') },
  },
  response: { schema: chatCompletionSchema },
});

export const deleteChatCompletion = defineEndpoint({
  operationId: 'deleteChatCompletion',
  method: 'DELETE',
  path: '/chat/completions/{completion_id}',
  family: 'chat',
  summary: 'Deletes a stored chat completion.',
  params: completionIdParam,
  response: { schema: deletionSchema('chat.completion.deleted') },
});

export const getChatCompletionMessages = defineEndpoint({
  operationId: 'getChatCompletionMessages',
  method: 'GET',
  path: '/chat/completions/{completion_id}/messages',
  family: 'chat',
  summary: 'Lists the messages of a stored chat completion.',
  params: completionIdParam,
  query: { ...listQueryFields('asc') },
  response: { schema: listSchema(chatStoreMessageSchema) },
});

export const chatEndpoints = [
  createChatCompletion,
  listChatCompletions,
  getChatCompletion,
  updateChatCompletion,
  deleteChatCompletion,
  getChatCompletionMessages,
];
