// The Responses API (SPEC "Responses", "Background response", "Hosted tools in /responses").
import { z } from 'zod';
import {
  applied,
  deletionSchema,
  limited,
  limitedEach,
  listQueryFields,
  listSchema,
  maxTokensSchema,
  metadataSchema,
  modelField,
  objectId,
  noEffect,
  promptCacheFields,
  refused,
  safetyIdentifierSchema,
  svcSchema,
  temperatureSchema,
  topLogprobsSchema,
  topPSchema,
  userSchema,
} from '../fields.ts';
import { JSON_SCHEMA_BUDGET_NOTE } from '../json-schema-limits.ts';
import { CHAT_MODELS } from '../models.ts';
import type { FieldTable } from '../types.ts';
import { defineEndpoint } from '../types.ts';
import { responseInputSchema, responseItemSchema } from './responses-items.ts';
import {
  RESPONSE_INCLUDE_VALUES,
  conversationParamSchema,
  inputTokensToolsSchema,
  responseReasoningSchema,
  responseTextSchema,
  responseToolChoiceSchema,
  responseToolsSchema,
} from './responses-tools.ts';

// --- Objects --------------------------------------------------------------

export const responseUsageSchema = z
  .looseObject({
    input_tokens: z.number().int(),
    input_tokens_details: z.looseObject({ cached_tokens: z.number().int() }).optional(),
    output_tokens: z.number().int(),
    output_tokens_details: z.looseObject({ reasoning_tokens: z.number().int() }).optional(),
    total_tokens: z.number().int(),
  })
  .meta({ id: 'ResponseUsage' });

export const RESPONSE_STATUSES = ['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete'] as const;

/** The response object; it echoes what ran. */
export const responseSchema = z
  .looseObject({
    id: z.string().meta({ description: 'starts resp_' }),
    object: z.literal('response'),
    created_at: z.number(),
    completed_at: z.number().nullable().optional(),
    status: z.enum(RESPONSE_STATUSES),
    background: z.boolean().nullable().optional(),
    error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.looseObject({ reason: z.enum(['max_output_tokens', 'content_filter']).optional() }).nullable(),
    instructions: z.union([z.string(), z.array(z.unknown())]).nullable(),
    model: z.string(),
    output: z.array(responseItemSchema),
    output_text: z.string().optional().meta({ description: 'SDK convenience: the concatenated output text' }),
    parallel_tool_calls: z.boolean(),
    previous_response_id: z.string().nullable().optional(),
    conversation: z.looseObject({ id: z.string() }).nullable().optional(),
    store: z.boolean().optional(),
    max_output_tokens: z.number().int().nullable().optional(),
    metadata: metadataSchema,
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    top_logprobs: z.number().int().nullable().optional(),
    text: z.looseObject({}).optional(),
    reasoning: z.looseObject({ effort: z.string().nullable().optional(), summary: z.string().nullable().optional() }).nullable().optional(),
    tool_choice: z.union([z.string(), z.looseObject({ type: z.string() })]),
    tools: z.array(z.looseObject({ type: z.string() })),
    truncation: z.enum(['auto', 'disabled']).nullable().optional(),
    service_tier: z.string().nullable().optional(),
    user: z.string().nullable().optional(),
    safety_identifier: z.string().nullable().optional(),
    usage: responseUsageSchema.nullable().optional(),
    svc: svcSchema.optional(),
  })
  .meta({ id: 'Response' });

/** One Responses streaming event (`response.created`, `response.output_text.delta`, ..., `response.completed`). */
export const responseStreamEventSchema = z
  .looseObject({ type: z.string(), sequence_number: z.number().int() })
  .meta({ id: 'ResponseStreamEvent' });

export const responseInputTokensSchema = z
  .looseObject({ object: z.literal('response.input_tokens'), input_tokens: z.number().int() })
  .meta({ id: 'ResponseInputTokens' });

export const responseCompactionSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('response.compaction'),
    created_at: z.number().int(),
    output: z.array(responseItemSchema).meta({ description: 'the user messages plus one sealed compaction item' }),
    usage: responseUsageSchema,
    svc: svcSchema,
  })
  .meta({ id: 'ResponseCompaction' });

// --- Shared field rules ---------------------------------------------------

const reasoningFields = {
  reasoning: applied(responseReasoningSchema, 'effort (none to xhigh, on models that reason) applies'),
  'reasoning.summary': noEffect('accepted without effect; reasoning is returned as summary text whenever the model gives some'),
  'reasoning.generate_summary': noEffect('accepted without effect'),
  'reasoning.mode': refused('reasoning modes are not offered: choose agent or agent-think'),
  'reasoning.context': refused('reasoning context selection is not offered'),
} as const satisfies FieldTable;

const includeRule = limitedEach(RESPONSE_INCLUDE_VALUES, 'each entry one of these; reasoning.encrypted_content is accepted and adds nothing');

const responseIdParam = { response_id: z.string().meta({ description: 'a response id (resp_...)' }) };

// --- Endpoints ------------------------------------------------------------

export const createResponse = defineEndpoint({
  operationId: 'createResponse',
  method: 'POST',
  path: '/responses',
  family: 'responses',
  summary: 'Creates a model response from text or items, with tools and optional storage.',
  billable: true,
  body: {
    type: 'json',
    required: ['model'],
    fields: {
      model: modelField(CHAT_MODELS),
      input: applied(responseInputSchema, 'text, or items: messages, function calls and outputs, images, files, compaction items, hosted tool items, mcp_approval_response'),
      instructions: applied(z.string().nullable(), 'system message for this response only'),
      previous_response_id: applied(objectId().nullable(), 'continue from a stored response'),
      conversation: applied(conversationParamSchema, "continue a conversation; the response's input and output are appended to it"),
      store: applied(z.boolean().nullable(), 'default true: stored 30 days'),
      stream: applied(z.boolean().nullable(), 'Responses streaming events'),
      background: applied(z.boolean().nullable(), 'run in background; not combinable with stream'),
      metadata: applied(metadataSchema, 'up to 16 entries; keys up to 64 characters, values up to 512'),
      max_output_tokens: applied(maxTokensSchema, "output cap, also capped by the key's max_output_tokens when it has one"),
      temperature: applied(temperatureSchema, '0 to 2, default 0.7'),
      top_p: applied(topPSchema, 'nucleus sampling'),
      top_logprobs: applied(topLogprobsSchema, '0 to 20, with include of message.output_text.logprobs'),
      parallel_tool_calls: applied(z.boolean().nullable(), 'sent to the model'),
      tools: applied(responseToolsSchema, `function, custom (freeform text input), namespace (a group of function and custom tools), web_search (and its variants), code_interpreter, shell, file_search, image_generation, mcp, computer, computer_use_preview, apply_patch; each hosted tool needs its key switch. Function parameters: ${JSON_SCHEMA_BUDGET_NOTE}`),
      tool_choice: applied(responseToolChoiceSchema, 'auto, none, required, a function, web search, or a hosted tool (treated as auto)'),
      text: applied(responseTextSchema, `format text, json_object or json_schema; verbosity low, medium or high. format.schema: ${JSON_SCHEMA_BUDGET_NOTE}`),
      ...reasoningFields,
      include: includeRule,
      service_tier: limited(['auto', 'default'], 'flex, priority, scale, fast and ultrafast are not offered'),
      truncation: limited(['disabled'], 'input is never truncated; a request over the context window fails'),
      user: applied(userSchema, 'kept in the activity log'),
      safety_identifier: applied(safetyIdentifierSchema, 'kept in the activity log'),
      stream_options: applied(z.looseObject({ include_obfuscation: z.boolean().optional() }).nullable(), 'accepted'),
      'stream_options.include_obfuscation': noEffect('accepted without effect', z.boolean()),
      ...promptCacheFields,
      prompt: refused('stored prompt templates are not offered'),
      context_management: refused('automatic compaction is not offered: use POST /responses/compact'),
      max_tool_calls: refused('a tool-call limit is not offered'),
      moderation: refused('moderation is set per key by its Moderate requests switch'),
      access_programs: refused('access programs are not offered'),
      // Defined by the reference's multi-agent beta (OpenAI-Beta: responses_multi_agent=v1).
      multi_agent: refused('server-hosted multi-agent execution is not offered'),
    },
  },
  response: {
    schema: responseSchema,
    description: 'The response object; with stream: true a text/event-stream of Responses streaming events.',
    alternate: 'sse',
    stream: 'server-sent events named by their type (event: lines), ending with the last response event: response.completed, response.incomplete, or response.failed (after an error event); no data: [DONE]',
  },
  notes: [
    'Stored 30 days unless store is false.',
    'background: true runs the response in the background (poll GET /responses/{response_id}, cancel with POST /responses/{response_id}/cancel); background cannot be combined with stream.',
    'Client-run tools (function, shell with environment local or none, computer, apply_patch) end the response with call items; continue with the matching *_output items and previous_response_id, a conversation or the full input.',
    'A remote MCP call waits for approval unless require_approval says never: answer the mcp_approval_request with an mcp_approval_response input item plus previous_response_id.',
    'Each hosted tool needs its key switch: code_interpreter and container shells need Code interpreter; shell with environment local, computer, computer_use_preview and apply_patch need Function calling; file_search needs File search; image_generation needs Image generation; mcp needs Remote MCP servers.',
    "file_search searches the key's account's vector stores (a vector_store_ids entry of another account or unknown is 404, expired 400, before any model runs): each search is a file_search_call item whose results show only with include file_search_call.results; the answer cites passages with [n] markers, each annotated as a file_citation (index: the marker's offset in the text, in Unicode code points).",
    "code_interpreter runs Python 3 (standard library, no network) in a container: an id of the key's account's running containers, or {type: auto, file_ids} (a container made at the first run, or the one an earlier item of the conversation used while it still runs). Each run is a code_interpreter_call item (events: in_progress, code delta and done, interpreting, completed) whose logs show only with include code_interpreter_call.outputs; files a program writes in /mnt/data become container files, and an answer that links one (sandbox:/mnt/data/<name>) cites it with a container_file_citation (start_index and end_index in Unicode code points, end exclusive).",
    'shell with environment container_auto (file_ids, skills) or container_reference runs each command with bash in a container (the same auto container as code_interpreter): a shell_call item (environment container_reference) then a shell_call_output item with per command stdout, stderr and outcome (exit with exit_code, or timeout); timeout_ms from the model is capped by the service time limit.',
    'web_search (and its variants) runs the service\'s web tools: searches through the configured backend, pages opened through the outbound guard (https, public addresses only); each call is a web_search_call item (action search with query, open_page with url, or find_in_page; events in_progress, searching, completed) and the answer cites sources as url_citation annotations spanning its Markdown links (start_index and end_index in Unicode code points, end exclusive). filters.allowed_domains (subdomains included) holds for results and pages; user_location goes to the backend; search_context_size sets how many results and how much of a page the model reads; external_web_access false makes no outgoing request. With no backend configured the model is told it cannot search. Each search is charged as a run of its own.',
    'Without tools, text.format or logprobs, and with the key\'s agent tools switch on, the assistant may search the web and open pages on its own before answering, shown as web_search_call items.',
    'The same session is offered over a WebSocket: GET /responses with Upgrade: websocket.',
  ],
});

export const getResponse = defineEndpoint({
  operationId: 'getResponse',
  method: 'GET',
  path: '/responses/{response_id}',
  family: 'responses',
  summary: 'Retrieves a stored response (also how a background response is polled).',
  params: responseIdParam,
  query: {
    include: includeRule,
    stream: applied(z.stringbool(), "true: the response's events as a stream (a background response's once it has finished)"),
    starting_after: applied(z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER), 'with stream: only the events after this sequence number'),
    include_obfuscation: noEffect('accepted without effect', z.stringbool()),
  },
  response: { schema: responseSchema },
});

export const deleteResponse = defineEndpoint({
  operationId: 'deleteResponse',
  method: 'DELETE',
  path: '/responses/{response_id}',
  family: 'responses',
  summary: 'Deletes a stored response.',
  params: responseIdParam,
  response: { schema: deletionSchema('response') },
});

export const cancelResponse = defineEndpoint({
  operationId: 'cancelResponse',
  method: 'POST',
  path: '/responses/{response_id}/cancel',
  family: 'responses',
  summary: 'Cancels a background response.',
  params: responseIdParam,
  response: { schema: responseSchema, description: 'The response, status cancelled.' },
  notes: [
    'Only a queued or running background response can be cancelled; nothing more runs and only work already done is charged. Cancelling a cancelled response returns it unchanged.',
    'A foreground or finished response answers 400 response_not_cancellable.',
  ],
});

export const listInputItems = defineEndpoint({
  operationId: 'listInputItems',
  method: 'GET',
  path: '/responses/{response_id}/input_items',
  family: 'responses',
  summary: 'Lists the input items of a stored response.',
  params: responseIdParam,
  query: { ...listQueryFields('desc'), include: includeRule },
  response: { schema: listSchema(responseItemSchema) },
});

export const getInputTokenCounts = defineEndpoint({
  operationId: 'Getinputtokencounts',
  method: 'POST',
  path: '/responses/input_tokens',
  family: 'responses',
  summary: 'Estimates the input tokens a response request would use; free, no model runs.',
  body: {
    type: 'json',
    fields: {
      model: modelField(CHAT_MODELS),
      input: applied(responseInputSchema.nullable(), 'text or items'),
      instructions: applied(z.string().nullable(), 'counted as the system message'),
      previous_response_id: applied(objectId().nullable(), 'counts the stored response chain'),
      conversation: applied(conversationParamSchema, 'counts the conversation items'),
      tools: applied(inputTokensToolsSchema.nullable(), 'the tools of POST /responses without computer, computer_use_preview and apply_patch'),
      tool_choice: applied(responseToolChoiceSchema.nullable(), 'as on POST /responses'),
      parallel_tool_calls: applied(z.boolean().nullable(), 'as on POST /responses'),
      text: applied(responseTextSchema.nullable(), 'as on POST /responses'),
      ...reasoningFields,
      truncation: limited(['disabled'], 'input is never truncated'),
      personality: refused('personalities are not offered'),
    },
  },
  response: { schema: responseInputTokensSchema },
  notes: [
    "Estimated as about four bytes of text per token, plus a fixed amount per image and per message, plus the agent's own instructions.",
  ],
});

export const compactConversation = defineEndpoint({
  operationId: 'Compactconversation',
  method: 'POST',
  path: '/responses/compact',
  family: 'responses',
  summary: 'Compacts a conversation into the user messages plus one sealed compaction item.',
  billable: true,
  body: {
    type: 'json',
    required: ['model'],
    fields: {
      model: modelField(CHAT_MODELS),
      input: applied(responseInputSchema.nullable(), 'text or items to compact'),
      instructions: applied(z.string().nullable(), 'kept as context'),
      previous_response_id: applied(objectId().nullable(), 'compact a stored response chain'),
      service_tier: limited(['auto', 'default'], 'flex, priority and fast are not offered'),
      ...promptCacheFields,
    },
  },
  response: { schema: responseCompactionSchema },
  notes: [
    'Billed like a short response. Send the output as the next request\'s input; only this API, for the same account, can read a compaction item.',
  ],
});

export const responsesEndpoints = [
  createResponse,
  getResponse,
  deleteResponse,
  cancelResponse,
  listInputItems,
  getInputTokenCounts,
  compactConversation,
];
