// Tools, tool choice, text format, reasoning and include of the Responses family
// (SPEC "Responses", "Hosted tools in /responses").
import { z } from 'zod';
import { applied, attributeFilterSchema, memberSchema, noEffect, objectId, reasoningEffortSchema, refused, verbositySchema } from '../fields.ts';
import { jsonSchemaObject } from '../json-schema-limits.ts';
import type { FieldTable } from '../types.ts';
import type { Permission } from '../../keys/permissions.ts';

const allowedCallers = z.array(z.enum(['direct', 'programmatic'])).max(2).nullable().optional();

const location = z
  .looseObject({
    type: z.literal('approximate').optional(),
    country: z.string().nullable().optional(),
    region: z.string().nullable().optional(),
    city: z.string().nullable().optional(),
    timezone: z.string().nullable().optional(),
  })
  .nullable()
  .optional();

const containerNetworkPolicy = z.looseObject({ type: z.enum(['disabled', 'allowlist']) });
const skillReference = z.looseObject({
  type: z.literal('skill_reference'),
  skill_id: objectId().pipe(z.string().max(64)),
  version: z.string().regex(/^([1-9]\d{0,15}|latest)$/, 'version is a version number or latest').optional(),
});

/** Skills one container mounts (each is written out once per version, up to 25 MB). */
export const MAX_SKILLS = 20;

/** SPEC Limits: a container takes up to 50 file_ids. */
const containerFileIds = z.array(objectId()).max(50, 'a container takes at most 50 file_ids').optional();

const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  parameters: jsonSchemaObject.nullable().optional(),
  strict: z.boolean().nullable().optional(),
  defer_loading: z.boolean().optional(),
  allowed_callers: allowedCallers,
});

/**
 * A freeform tool: the model answers with raw text (`custom_tool_call.input`). SPEC
 * does not list it; the reference defines it and Codex CLI sends it (apply_patch).
 */
const customTool = z.looseObject({
  type: z.literal('custom'),
  name: z.string().min(1).max(128),
  description: z.string().nullable().optional(),
  format: z
    .discriminatedUnion('type', [
      z.looseObject({ type: z.literal('text') }),
      z.looseObject({ type: z.literal('grammar'), syntax: z.enum(['lark', 'regex']), definition: z.string().max(100_000) }),
    ])
    .optional(),
  defer_loading: z.boolean().optional(),
  allowed_callers: allowedCallers,
});

/** A named group of function and custom tools (reference `NamespaceToolParam`; Codex CLI sends one). */
const namespaceTool = z.looseObject({
  type: z.literal('namespace'),
  name: z.string().min(1).max(64),
  description: z.string().nullable().optional(),
  tools: z.array(z.discriminatedUnion('type', [functionTool, customTool])).min(1).max(128),
});

/**
 * The members of a web_search tool (reference WebSearchTool), classified like body fields;
 * /capabilities publishes them under `tools[web_search].<member>`; reference-coverage.test.ts
 * proves the table whole.
 */
export const WEB_SEARCH_TOOL_FIELDS = {
  filters: applied(z.looseObject({ allowed_domains: z.array(z.string().max(253)).max(1_000).nullable().optional() }).nullable(), 'allowed_domains'),
  'filters.allowed_domains': applied(z.array(z.string().max(253)).max(1_000).nullable(), 'results and pages only on these domains and their subdomains'),
  user_location: applied(location, 'passed to the search backend where it takes one (Brave: country)'),
  search_context_size: applied(z.enum(['low', 'medium', 'high']), 'how many results (3, 5, 10) and how much of a page (4k, 10k, 20k characters) the model reads; default medium'),
  external_web_access: applied(z.boolean(), 'false: no outgoing request at all, the model is told it cannot search'),
} as const satisfies FieldTable;

/** The members of a web_search_preview tool (reference WebSearchPreviewTool). */
export const WEB_SEARCH_PREVIEW_TOOL_FIELDS = {
  user_location: WEB_SEARCH_TOOL_FIELDS.user_location,
  search_context_size: WEB_SEARCH_TOOL_FIELDS.search_context_size,
  search_content_types: noEffect('results are text', z.array(z.enum(['text', 'image'])).max(2)),
} as const satisfies FieldTable;

const webSearchTool = memberSchema(['web_search', 'web_search_2025_08_26'], WEB_SEARCH_TOOL_FIELDS);
const webSearchPreviewTool = memberSchema(['web_search_preview', 'web_search_preview_2025_03_11'], WEB_SEARCH_PREVIEW_TOOL_FIELDS);

const codeInterpreterTool = z.looseObject({
  type: z.literal('code_interpreter'),
  // A container id, or `{type: auto}` for a new container.
  container: z.union([
    objectId(),
    z.looseObject({
      type: z.literal('auto'),
      file_ids: containerFileIds,
      memory_limit: z.enum(['1g', '4g', '16g', '64g']).nullable().optional(),
      network_policy: containerNetworkPolicy.optional(),
    }),
  ]),
  allowed_callers: allowedCallers,
});

const shellTool = z.looseObject({
  type: z.literal('shell'),
  environment: z
    .discriminatedUnion('type', [
      z.looseObject({
        type: z.literal('container_auto'),
        file_ids: containerFileIds,
        memory_limit: z.enum(['1g', '4g', '16g', '64g']).nullable().optional(),
        network_policy: containerNetworkPolicy.optional(),
        skills: z.array(z.union([skillReference, z.looseObject({ type: z.literal('inline') })])).max(MAX_SKILLS, `at most ${MAX_SKILLS} skills`).optional(),
      }),
      // The caller's app runs the commands (a shell_call round trip).
      z.looseObject({ type: z.literal('local'), skills: z.array(z.looseObject({ name: z.string(), path: z.string() })).max(200).optional() }),
      z.looseObject({ type: z.literal('container_reference'), container_id: objectId() }),
    ])
    .nullable()
    .optional(),
  allowed_callers: allowedCallers,
});

/** The reference's RankerVersionType. */
const FILE_SEARCH_RANKERS = ['auto', 'default-2024-11-15'] as const;

/**
 * The members of a file_search tool (reference FileSearchTool and its RankingOptions),
 * classified like body fields, the same rules as POST /vector_stores/{id}/search. The
 * tool's schema is built from this table; /capabilities publishes it under
 * `tools[file_search].<member>`; reference-coverage.test.ts proves it whole.
 */
export const FILE_SEARCH_TOOL_FIELDS = {
  vector_store_ids: applied(
    z.array(objectId()).min(1, 'name at least one vector store').max(100, 'at most 100 vector stores'),
    "the vector stores to search, the key's account's: another account's or an unknown id is 404, an expired store 400, before any model runs",
  ),
  // SPEC Limits: search results 1 to 50 (default 10).
  max_num_results: applied(z.number().int().min(1).max(50), '1 to 50 (default 10) passages per search'),
  filters: applied(attributeFilterSchema.nullable(), 'attribute filters: eq, ne, gt, gte, lt, lte, in, nin, combined with and / or'),
  ranking_options: applied(
    z.looseObject({ ranker: z.enum(FILE_SEARCH_RANKERS).optional(), score_threshold: z.number().min(0).max(1).optional() }),
    'ranker and score_threshold',
  ),
  'ranking_options.score_threshold': applied(z.number().min(0).max(1), '0 to 1: passages scoring below it are dropped'),
  'ranking_options.ranker': noEffect('passages are ranked by the service', z.enum(FILE_SEARCH_RANKERS)),
  'ranking_options.hybrid_search': refused('hybrid search weights are not offered'),
} as const satisfies FieldTable;

const fileSearchTool = memberSchema('file_search', FILE_SEARCH_TOOL_FIELDS, ['vector_store_ids']);

/**
 * The members of an image_generation tool (reference ImageGenTool), classified like body
 * fields, as the image endpoints classify them: `background`, `moderation` and
 * `partial_images` take one value each (`auto`, `auto`, 0; another is refused naming the
 * member, tool-mapping.ts), `action` `generate` or `auto` (an input image is not edited).
 */
export const IMAGE_GENERATION_TOOL_FIELDS = {
  model: noEffect('image generation names no selectable model', z.string()),
  quality: applied(z.enum(['low', 'medium', 'high', 'auto']), 'low, medium and auto draw at standard quality, high at high'),
  size: applied(z.string().max(16), 'as the image endpoints: WIDTHxHEIGHT (each side 16 to 3840, at most 3840x2160\'s pixels) or auto (1024x1024)'),
  output_format: refused('the format is the model\'s own (PNG, JPEG or WebP)'),
  output_compression: refused('the format is the model\'s own; compression cannot be chosen'),
  moderation: applied(z.enum(['auto', 'low']), 'limited to auto'),
  background: applied(z.enum(['transparent', 'opaque', 'auto']), 'limited to auto'),
  input_fidelity: refused('input fidelity cannot be chosen'),
  input_image_mask: refused('masks are not offered'),
  partial_images: applied(z.number().int().min(0).max(3), 'limited to 0: no partial images'),
  action: applied(z.enum(['generate', 'edit', 'auto']), 'generate or auto; edit is refused (an image in the input is not edited)'),
} as const satisfies FieldTable;

const imageGenerationTool = memberSchema('image_generation', IMAGE_GENERATION_TOOL_FIELDS);

const mcpToolFilter = z.looseObject({ tool_names: z.array(z.string().max(256)).max(1_000).optional(), read_only: z.boolean().optional() });

/**
 * The members of an mcp tool (reference MCPTool), classified like body fields; published
 * under `tools[mcp].<member>`; reference-coverage.test.ts proves the table whole.
 */
export const MCP_TOOL_FIELDS = {
  server_label: applied(z.string().min(1).max(64), 'names the server in items and messages; one tool per label'),
  // SPEC: tools on a public https:// server (the outbound guard refuses anything else before
  // any model runs; plain http only for hosts its test-only exemption names).
  server_url: applied(z.url({ protocol: /^https?$/, error: 'server_url must be an https:// URL' }).max(2_048), 'a public https:// streamable HTTP endpoint, checked by the outbound guard before any model runs'),
  server_description: applied(z.string().max(4_000), 'told to the model beside each tool'),
  authorization: applied(z.string().max(8_192), 'sent as a bearer token to that server only; never stored, echoed or logged'),
  headers: applied(z.record(z.string().max(256), z.string().max(8_192)).nullable(), 'sent to that server only (not across a redirect to another origin); never stored, echoed or logged'),
  allowed_tools: applied(z.union([z.array(z.string().max(256)).max(1_000), mcpToolFilter]).nullable(), 'tool names, or a filter of tool_names and read_only'),
  require_approval: applied(
    z.union([z.enum(['always', 'never']), z.looseObject({ always: mcpToolFilter.optional(), never: mcpToolFilter.optional() })]).nullable(),
    'always (default), never, or per-tool filters: a call that needs approval ends the response with an mcp_approval_request',
  ),
  defer_loading: noEffect('every allowed tool is listed up front', z.boolean()),
  allowed_callers: noEffect('the model calls the tools', z.array(z.enum(['direct', 'programmatic'])).max(2).nullable()),
  connector_id: refused('hosted connectors are not offered: name the server with server_url'),
  tunnel_id: refused('tunnels are not offered: name a public server with server_url'),
} as const satisfies FieldTable;

const mcpTool = memberSchema('mcp', MCP_TOOL_FIELDS, ['server_label', 'server_url']);

/** Member tables of the tools that have one, by tool type (published by /capabilities). */
export const RESPONSE_TOOL_FIELDS: Readonly<Record<string, FieldTable>> = {
  file_search: FILE_SEARCH_TOOL_FIELDS,
  web_search: WEB_SEARCH_TOOL_FIELDS,
  web_search_2025_08_26: WEB_SEARCH_TOOL_FIELDS,
  web_search_preview: WEB_SEARCH_PREVIEW_TOOL_FIELDS,
  web_search_preview_2025_03_11: WEB_SEARCH_PREVIEW_TOOL_FIELDS,
  mcp: MCP_TOOL_FIELDS,
  image_generation: IMAGE_GENERATION_TOOL_FIELDS,
};


const computerTool = z.looseObject({ type: z.literal('computer') });
const computerUsePreviewTool = z.looseObject({
  type: z.literal('computer_use_preview'),
  environment: z.enum(['windows', 'mac', 'linux', 'ubuntu', 'browser']),
  display_width: z.number().int(),
  display_height: z.number().int(),
});
const applyPatchTool = z.looseObject({ type: z.literal('apply_patch'), allowed_callers: allowedCallers });

const TOOL_TYPES_ERROR =
  'tool type must be one of function, custom, namespace, web_search, web_search_preview, web_search_2025_08_26, web_search_preview_2025_03_11, code_interpreter, shell, file_search, image_generation, mcp, computer, computer_use_preview, apply_patch';

/** A tool of POST /responses (SPEC "Responses" `tools`). Each hosted tool needs its key switch. */
export const responseToolSchema = z
  .discriminatedUnion(
    'type',
    [
      functionTool,
      customTool,
      namespaceTool,
      webSearchTool,
      webSearchPreviewTool,
      codeInterpreterTool,
      shellTool,
      fileSearchTool,
      imageGenerationTool,
      mcpTool,
      computerTool,
      computerUsePreviewTool,
      applyPatchTool,
    ],
    { error: TOOL_TYPES_ERROR },
  )
  .meta({ id: 'ResponseTool' });

/** OpenAI's own limit on tools. */
const MAX_TOOLS = 128;

export const responseToolsSchema = z.array(responseToolSchema).max(MAX_TOOLS, `tools holds at most ${MAX_TOOLS} tools`);

/** POST /responses/input_tokens: the same tools without computer, computer_use_preview and apply_patch. */
export const inputTokensToolsSchema = z.array(
  z.discriminatedUnion(
    'type',
    [functionTool, customTool, namespaceTool, webSearchTool, webSearchPreviewTool, codeInterpreterTool, shellTool, fileSearchTool, imageGenerationTool, mcpTool],
    { error: 'tool type must be one of function, custom, namespace, web_search, web_search_preview, web_search_2025_08_26, web_search_preview_2025_03_11, code_interpreter, shell, file_search, image_generation, mcp' },
  ),
).max(MAX_TOOLS, `tools holds at most ${MAX_TOOLS} tools`);

const HOSTED_CHOICE_TYPES = [
  'web_search',
  'web_search_preview',
  'web_search_2025_08_26',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
  'computer',
  'computer_use',
  'computer_use_preview',
  'shell',
  'apply_patch',
] as const;

/** `auto`, `none`, `required`, a function, web search, or a hosted tool (treated as auto). */
export const responseToolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('function'), name: z.string() }),
    z.looseObject({ type: z.literal('custom'), name: z.string() }),
    z.looseObject({ type: z.literal('mcp'), server_label: z.string(), name: z.string().nullable().optional() }),
    z.looseObject({ type: z.literal(HOSTED_CHOICE_TYPES) }),
  ]),
]);

/** `text`: format text, json_object or json_schema; verbosity low, medium or high. */
export const responseTextSchema = z
  .looseObject({
    format: z
      .discriminatedUnion('type', [
        z.looseObject({ type: z.literal('text') }),
        z.looseObject({ type: z.literal('json_object') }),
        z.looseObject({
          type: z.literal('json_schema'),
          name: z.string(),
          schema: jsonSchemaObject,
          description: z.string().optional(),
          strict: z.boolean().nullable().optional(),
        }),
      ])
      .optional(),
    verbosity: verbositySchema.optional(),
  })
  .meta({ id: 'ResponseTextConfig' });

/** `reasoning`: only `effort` applies (summary and generate_summary are accepted without effect). */
export const responseReasoningSchema = z
  .looseObject({
    effort: reasoningEffortSchema.optional(),
    summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
    generate_summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
  })
  .nullable();

/** SPEC: the `include` values of POST /responses. */
export const RESPONSE_INCLUDE_VALUES = [
  'message.output_text.logprobs',
  'message.input_image.image_url',
  'reasoning.encrypted_content',
  'code_interpreter_call.outputs',
  'file_search_call.results',
] as const;

/** SPEC: the `include` values of the conversation item endpoints. */
export const CONVERSATION_INCLUDE_VALUES = ['message.output_text.logprobs', 'message.input_image.image_url'] as const;

/** `conversation`: an id or `{id}`. */
export const conversationParamSchema = z.union([objectId(), z.looseObject({ id: objectId() })]).nullable();

/**
 * The key switch each tool type needs (SPEC "Hosted tools in /responses"), and whether
 * the service runs it yet: a tool that is not offered yet is refused naming it (so is
 * file_search where no vector search is configured). Web search needs no switch (SPEC):
 * with no search backend the model is told it cannot search.
 */
export const RESPONSE_TOOL_SWITCHES: Record<string, { permission: Permission | null; offered: boolean }> = {
  function: { permission: 'function_calling', offered: true },
  custom: { permission: 'function_calling', offered: true },
  namespace: { permission: 'function_calling', offered: true },
  web_search: { permission: null, offered: true },
  web_search_2025_08_26: { permission: null, offered: true },
  web_search_preview: { permission: null, offered: true },
  web_search_preview_2025_03_11: { permission: null, offered: true },
  'shell/local': { permission: 'function_calling', offered: true },
  shell: { permission: 'code_interpreter', offered: true },
  computer: { permission: 'function_calling', offered: true },
  computer_use_preview: { permission: 'function_calling', offered: true },
  apply_patch: { permission: 'function_calling', offered: true },
  code_interpreter: { permission: 'code_interpreter', offered: true },
  file_search: { permission: 'file_search', offered: true },
  image_generation: { permission: 'image_generation', offered: true },
  mcp: { permission: 'remote_mcp', offered: true },
};
