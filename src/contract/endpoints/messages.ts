// The messages-style surface (SPEC "Sibling surfaces", the messages-style table): the
// vendor's request fields for POST /v1/messages and /v1/messages/count_tokens, classified
// like /v1's, and its models endpoints. Every field either SDK generation's
// MessageCreateParams (0.x and 1.x, the beta variant included) defines is in the table;
// a test fails when an installed SDK grows one that is not.
import { z } from 'zod';
import { applied, needs, noEffect, refused } from '../fields.ts';
import { jsonSchemaObject } from '../json-schema-limits.ts';
import { betaQuery, idPageQuery } from './messages-query.ts';
import type { FieldTable } from '../types.ts';
import { messagesFilesEndpoints } from './messages-files.ts';
import { defineEndpoint } from '../types.ts';
import { messagesBatchesEndpoints } from './messages-batches.ts';

/** The vendor's own bound on tools in one request. */
const MAX_TOOLS = 128;
/** Stop sequences per request (the vendor names no number; a bound so a body cannot make the scan quadratic). */
const MAX_STOP_SEQUENCES = 64;
/** cache_control breakpoints per request (the vendor's limit). */
export const MAX_CACHE_BREAKPOINTS = 4;

export const cacheControlSchema = z
  .looseObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
  .nullable()
  .meta({ id: 'CacheControlEphemeral' });

const cacheable = { cache_control: cacheControlSchema.optional() };

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string(), ...cacheable });
const base64Image = z.looseObject({
  type: z.literal('base64'),
  media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
  data: z.string().min(1),
});
const urlSource = z.looseObject({ type: z.literal('url'), url: z.string().url().max(8_192) });
const fileSource = z.looseObject({ type: z.literal('file'), file_id: z.string().min(1).max(256) });
const imageBlock = z.looseObject({ type: z.literal('image'), source: z.discriminatedUnion('type', [base64Image, urlSource, fileSource]), ...cacheable });
const documentBlock = z.looseObject({
  type: z.literal('document'),
  source: z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('base64'), media_type: z.literal('application/pdf'), data: z.string().min(1) }),
    z.looseObject({ type: z.literal('text'), media_type: z.literal('text/plain'), data: z.string() }),
    z.looseObject({ type: z.literal('content'), content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]) }),
    urlSource,
    fileSource,
  ]),
  title: z.string().nullable().optional(),
  context: z.string().nullable().optional(),
  ...cacheable,
});
const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1).max(256),
  name: z.string().min(1).max(256),
  input: z.record(z.string(), z.unknown()),
  ...cacheable,
});
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1).max(256),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, z.looseObject({ type: z.literal('search_result') })]))]).optional(),
  is_error: z.boolean().optional(),
  ...cacheable,
});
const thinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });
/** Blocks of a server tool's earlier turn, sent back as the SDKs keep them: read as text. */
const serverToolBlock = z.looseObject({
  type: z.enum([
    'server_tool_use',
    'web_search_tool_result',
    'web_fetch_tool_result',
    'code_execution_tool_result',
    'bash_code_execution_tool_result',
    'text_editor_code_execution_tool_result',
    'mcp_tool_use',
    'mcp_tool_result',
    'search_result',
    'container_upload',
  ]),
});

export const contentBlockParamSchema = z
  .discriminatedUnion('type', [textBlock, imageBlock, documentBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock, serverToolBlock])
  .meta({ id: 'ContentBlockParam' });

export const messageParamSchema = z
  .looseObject({
    // `system` turns inside the conversation: Claude Code sends them (its environment and deferred tools).
    role: z.enum(['user', 'assistant', 'system']),
    content: z.union([z.string(), z.array(contentBlockParamSchema).max(10_000)]),
  })
  .meta({ id: 'MessageParam' });

const systemSchema = z.union([z.string(), z.array(textBlock).max(1_000)]);

/** A custom (client) tool; `type` is absent or `custom`. */
const customToolSchema = z.looseObject({
  type: z.literal('custom').optional(),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/, 'tool names are 1 to 128 letters, digits, _ or -'),
  description: z.string().max(100_000).optional(),
  input_schema: jsonSchemaObject,
  defer_loading: z.boolean().optional(),
  strict: z.boolean().optional(),
  eager_input_streaming: z.boolean().nullable().optional(),
  input_examples: z.array(z.record(z.string(), z.unknown())).optional(),
  allowed_callers: z.array(z.string()).optional(),
  ...cacheable,
});

/** What the vendor's dated tool types name, and whether this service runs them. */
export const SERVER_TOOL_KINDS = ['web_search', 'web_fetch', 'code_execution'] as const;
/** Vendor toolsets SPEC refuses, by type prefix. */
export const REFUSED_TOOL_PREFIXES: readonly { prefix: string; why: string }[] = [
  { prefix: 'computer_', why: 'the computer-use toolset is not offered' },
  { prefix: 'browser', why: 'browser toolsets are not offered' },
  { prefix: 'tool_search_tool', why: 'the tool search server tool is not offered (a custom tool with defer_loading is)' },
  { prefix: 'bash_', why: "the vendor's bash tool is not offered: declare a custom tool" },
  { prefix: 'text_editor_', why: "the vendor's text editor tool is not offered: declare a custom tool" },
  { prefix: 'memory_', why: "the vendor's memory tool is not offered" },
  { prefix: 'mcp_toolset', why: 'MCP toolsets are not offered' },
];

/** Any tool: custom, or a typed (dated) vendor tool, which the call sorts into server tools and refusals. */
const toolSchema = z.union([customToolSchema, z.looseObject({ type: z.string().min(1).max(128), name: z.string().max(128).optional() })]);

const toolChoiceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1).max(128), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('none') }),
]);

/** `omitted` sends thinking blocks without their text; any other display (`summarized`, Claude Code's `updates`) shows it. */
const thinkingDisplay = z.string().max(64).nullable().optional();

const thinkingSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024, 'budget_tokens must be at least 1024'), display: thinkingDisplay }),
  z.looseObject({ type: z.literal('adaptive'), display: thinkingDisplay }),
  z.looseObject({ type: z.literal('disabled') }),
]);

const jsonFormatSchema = z.looseObject({ type: z.literal('json_schema'), schema: jsonSchemaObject });

const outputConfigSchema = z.looseObject({
  effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).nullable().optional(),
  format: jsonFormatSchema.nullable().optional(),
});


/** The request fields both endpoints share (count_tokens takes the same body less the sampling fields). */
const conversationFields = {
  model: applied(z.string().min(1).max(256), '`agent` and `agent-think` run as named; any other (vendor) model name runs on the model configured for this surface (MESSAGES_MODEL) and is echoed as sent. The key\'s allowed models apply to the model that runs.'),
  messages: applied(z.array(messageParamSchema).min(1, 'messages must hold at least one message').max(100_000)),
  system: applied(systemSchema),
  tools: needs(
    'function_calling',
    applied(z.array(toolSchema).max(MAX_TOOLS, `tools holds at most ${MAX_TOOLS} tools`), 'custom tools (client tools, defer_loading accepted and loaded at once), which need the key\'s Function calling switch as on /v1; web_search and web_fetch (no switch, as on /v1/responses) and code_execution (20250522: Python; 20250825, 20260120, 20260521: bash and a text editor; the Code interpreter switch) are server tools; the computer, browser, bash, text editor, memory and tool search toolsets are refused'),
    // Only a list holding a custom (client) tool needs the switch; server tools alone do not.
    (tools) => Array.isArray(tools) && tools.some((t) => typeof t === 'object' && t !== null && ((t as { type?: unknown }).type === undefined || (t as { type?: unknown }).type === 'custom')),
  ),
  tool_choice: applied(toolChoiceSchema),
  thinking: applied(thinkingSchema, '`enabled` (budget_tokens from 1024, below max_tokens) and `adaptive` think on agent-think; `disabled` answers without thinking'),
  output_config: applied(outputConfigSchema, '`effort` sets the reasoning effort; `format` with a JSON schema makes the text validate against it'),
  output_format: applied(jsonFormatSchema.nullable(), 'the beta spelling of output_config.format'),
  cache_control: applied(cacheControlSchema, 'automatic caching: a breakpoint after the last cacheable block'),
  context_management: noEffect(
    'earlier turns\' thinking is never sent to the model, so clearing it changes nothing; the edits are accepted',
    z.looseObject({ edits: z.array(z.looseObject({ type: z.string() })).max(16).optional() }).nullable(),
  ),
  mcp_servers: needs(
    'mcp',
    applied(
      z
        .array(
          z.looseObject({
            type: z.literal('url'),
            url: z.string().url().max(2_048),
            name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'server names are 1 to 64 letters, digits, _ or -'),
            authorization_token: z.string().max(8_192).nullable().optional(),
            tool_configuration: z
              .looseObject({ enabled: z.boolean().nullable().optional(), allowed_tools: z.array(z.string().min(1).max(128)).max(256).nullable().optional() })
              .nullable()
              .optional(),
          }),
        )
        .max(20, 'at most 20 MCP servers'),
      'remote MCP servers over Streamable HTTP through the outbound guard (needs the MCP switch); their tools run without approval; authorization_token is sent as a bearer token to that server only, never stored or logged',
    ),
  ),
  container: applied(
    z.union([z.string().min(1).max(256), z.looseObject({ id: z.string().min(1).max(256).nullable().optional() })]).nullable(),
    'the container the code_execution tool runs in (an id from POST /v1/containers or an earlier answer\'s `container.id`); without it one is made at the first run',
  ),
  speed: noEffect('one speed', z.enum(['standard', 'fast']).nullable()),
  inference_geo: noEffect('one location', z.string().max(64).nullable()),
  diagnostics: noEffect(undefined, z.unknown()),
  user_profile_id: noEffect(undefined, z.string().max(256)),
  workspace_id: noEffect(undefined, z.string().max(256)),
  betas: noEffect('beta flags are accepted (in the anthropic-beta header or here)', z.array(z.string().max(256)).max(64)),
  compaction: refused('server-side compaction is not offered on this surface'),
  fallback_credit_token: refused('fallback credits are not offered'),
  fallbacks: refused('fallback models are not offered'),
  billing_policy: noEffect('the calling key\'s account is billed; `bill_to: "self"` is that', z.looseObject({ type: z.literal('billing_policy'), bill_to: z.literal('self').optional() }).nullable()),
  thread: refused('server-held conversation state is not offered on this surface: send the whole conversation'),
} satisfies FieldTable;

export const createMessageFields = {
  ...conversationFields,
  max_tokens: applied(z.number().int().min(1, 'max_tokens must be at least 1'), "capped by the key's output cap"),
  stop_sequences: applied(z.array(z.string().min(1)).max(MAX_STOP_SEQUENCES, `stop_sequences holds at most ${MAX_STOP_SEQUENCES} sequences`)),
  stream: applied(z.boolean()),
  temperature: applied(z.number().min(0).max(1)),
  top_p: applied(z.number().min(0).max(1)),
  top_k: applied(z.number().int().min(0)),
  metadata: noEffect('user_id is accepted and not stored', z.looseObject({ user_id: z.string().max(4_096).nullable().optional() })),
  service_tier: noEffect('one tier', z.enum(['auto', 'standard_only'])),
} satisfies FieldTable;

// --- Responses -------------------------------------------------------------

const usageSchema = z
  .looseObject({
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cache_creation_input_tokens: z.number().int().nullable(),
    cache_read_input_tokens: z.number().int().nullable(),
  })
  .meta({ id: 'MessagesUsage' });

export const messageObjectSchema = z
  .looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(z.looseObject({ type: z.string() })),
    stop_reason: z.enum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal']).nullable(),
    stop_sequence: z.string().nullable(),
    usage: usageSchema,
  })
  .meta({ id: 'Message' });

export const createMessage = defineEndpoint({
  operationId: 'messages_post',
  method: 'POST',
  path: '/messages',
  family: 'messages',
  summary: 'Creates a message: the assistant\'s next turn of a conversation, whole or streamed as server-sent events.',
  query: betaQuery,
  body: { type: 'json', fields: createMessageFields, required: ['model', 'messages', 'max_tokens'] },
  response: {
    schema: messageObjectSchema,
    alternate: 'sse',
    stream:
      'With `stream: true`: `message_start`, then per content block `content_block_start`, `content_block_delta` events and `content_block_stop`, then `message_delta` (stop reason, cumulative usage) and `message_stop`; `ping` events keep an idle stream open; a failure after the start is an `error` event.',
  },
  billable: true,
});

export const countMessageTokens = defineEndpoint({
  operationId: 'messages_count_tokens_post',
  method: 'POST',
  path: '/messages/count_tokens',
  family: 'messages',
  summary: 'Counts the input tokens of a message request: free, and equal to the input tokens the same request is charged for on the offline engine.',
  query: betaQuery,
  body: { type: 'json', fields: conversationFields, required: ['model', 'messages'] },
  response: { schema: z.looseObject({ input_tokens: z.number().int() }) },
});

export const messagesModelSchema = z
  .looseObject({ type: z.literal('model'), id: z.string(), display_name: z.string(), created_at: z.string() })
  .meta({ id: 'ModelInfo' });


export const listMessagesModels = defineEndpoint({
  operationId: 'models_list',
  method: 'GET',
  path: '/models',
  family: 'models',
  summary: 'Lists the models the calling key may use on this surface, newest first, in pages.',
  query: idPageQuery,
  response: {
    schema: z.looseObject({ data: z.array(messagesModelSchema), has_more: z.boolean(), first_id: z.string().nullable(), last_id: z.string().nullable() }),
  },
});

export const retrieveMessagesModel = defineEndpoint({
  operationId: 'models_get',
  method: 'GET',
  path: '/models/{model_id}',
  family: 'models',
  summary: 'Retrieves one model by id.',
  query: betaQuery,
  params: { model_id: z.string().min(1).max(256) },
  response: { schema: messagesModelSchema },
});

export const getMessagesOpenApi = defineEndpoint({
  operationId: 'messagesGetOpenApi',
  method: 'GET',
  path: '/openapi.json',
  family: 'meta',
  summary: 'The OpenAPI 3.1 description of the messages-style surface.',
  response: { schema: z.looseObject({ openapi: z.string() }) },
});

export const messagesEndpoints = [createMessage, countMessageTokens, listMessagesModels, retrieveMessagesModel, ...messagesFilesEndpoints, ...messagesBatchesEndpoints, getMessagesOpenApi] as const;
