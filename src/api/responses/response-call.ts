// One response, whoever asked for it: an HTTP request (streamed or not), a batch line, a
// background job or a WebSocket turn. startResponse gathers the conversation (the stored
// chain or a conversation's items, then the input), maps the tools, opens the Run
// (credits reserved before any model runs) and starts the model; `finish` builds the
// final object from the OutputBuilder, keeps it (store) and appends to the conversation
// before the caller sees it, so a continuation works at once on any instance.
import { asksForPicture, IMAGE_GENERATION_FUNCTION_NAME, type ImageToolConfig } from '../../tools/images/image-generation-tool.ts';
import { parseSize } from '../../providers/inline/images/sizes.ts';
import type { ImageQuality } from '../../providers/types.ts';
import { fromMicro } from '../../accounts/money.ts';
import type { createResponse } from '../../contract/endpoints/responses.ts';
import type { ChatModel } from '../../contract/models.ts';
import type { BodyOf } from '../../contract/types.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { outputCap } from '../../keys/key-limits.ts';
import { callSignal, type Call } from '../../pipeline/call.ts';
import type { ChatMessage, ChatRequest, StreamPart, Usage } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { runAgent } from '../../agent/agent-loop.ts';
import { mentionsUrl, type ToolRegistry, type ToolSet, type WebSearchEntry } from '../../tools/registry.ts';
import type { AgentTool } from '../../tools/types.ts';
import { WEB_FUNCTION_NAMES } from '../../tools/web-search/web-tools.ts';
import type { VectorSearch } from '../../retrieval/search-types.ts';
import { addPdfText, resolveFiles } from '../files/resolve-parts.ts';
import { generationOptions } from '../generation-options.ts';
import type { ContainerRuntime } from '../containers/container-runtime.ts';
import { CODE_INTERPRETER_FUNCTION_NAME, SHELL_FUNCTION_NAME } from '../../tools/containers/container-tool.ts';
import { resolveContainers, type ResolvedContainers } from './container-tools.ts';
import { checkVectorStores, fileSearchConfig } from '../../tools/file-search/file-search-tool.ts';
import { inputItems, shownResponse, type Item } from './items.ts';
import { OutputBuilder, type StreamEvent } from './output-builder.ts';
import { messageInput, moderateInput, type InputText } from '../moderations/moderate-input.ts';
import { claimApprovals, echoedTools, planMcp, runApproved, type McpPlan } from './mcp-servers.ts';
import type { StoredResponses } from './stored-responses.ts';
import { approvalOutcomes, fileIdsOf, mcpResult, toMessages } from './to-messages.ts';
import { mapTools, type ToolKind } from './tool-mapping.ts';
import { newId } from '../../ids.ts';

export type ResponseBody = BodyOf<typeof createResponse>;

/** What the Responses layer needs of conversations (api/conversations). */
export interface ConversationItems {
  allItems(accountId: string, conversationId: string): Promise<Item[] | undefined>;
  append(accountId: string, conversationId: string, items: Item[]): Promise<unknown>;
}

/** Seals and opens compaction items (api/responses/compaction.ts). */
export interface CompactionSeal {
  unseal(accountId: string, item: Item, param: string): Item[];
}

export interface ResponsesDeps {
  stored: StoredResponses;
  tools: ToolRegistry;
  conversations?: ConversationItems;
  compaction?: CompactionSeal;
  /** The vector stores' search, for the file_search tool (refused while there is none). */
  vectorSearch?: VectorSearch;
  /** Containers, for the code_interpreter and container shell tools (refused while there are none). */
  containers?: ContainerRuntime;
}

export interface StartedResponse {
  readonly run: Run;
  readonly events: AsyncIterable<StreamPart>;
  readonly id: string;
  /** The response object before it ran: status in_progress, no output. */
  readonly initial: Record<string, any>;
  readonly kinds: ReadonlyMap<string, ToolKind>;
  /** Output items made before the model ran (MCP tool listings, approved MCP calls): first in the output. */
  readonly premade: readonly Item[];
  readonly includeLogprobs: boolean;
  /** What `include` asks for: file search results and code logs show in the events and the returned object only then. */
  readonly include: readonly string[];
  readonly inputItems: Item[];
  /**
   * Builds the final object from what ran, keeps it whole and appends to the
   * conversation; returns it as shown (a file search's results only with include).
   */
  finish(builder: OutputBuilder, credits: number, usage: Usage): Promise<Record<string, any>>;
}

/** A request's web_search tool entry as the registry takes it (the preview types have no filters or live-access switch). */
function webSearchEntry(t: Record<string, any>): WebSearchEntry {
  const loc = t.user_location;
  const userLocation = loc && typeof loc === 'object' ? Object.fromEntries(['country', 'region', 'city', 'timezone'].filter((k) => typeof loc[k] === 'string').map((k) => [k, loc[k] as string])) : undefined;
  return {
    allowedDomains: ((t.filters?.allowed_domains as string[] | null | undefined) ?? []).map((d) => d.trim().toLowerCase()).filter(Boolean),
    ...(userLocation && Object.keys(userLocation).length > 0 ? { userLocation } : {}),
    contextSize: t.search_context_size ?? 'medium',
    externalWebAccess: t.external_web_access !== false,
  };
}

/** Hosted tools without a backend here (mapTools refuses them as not offered). */
function unavailableTools(deps: ResponsesDeps): ReadonlySet<string> {
  const out = new Set<string>();
  if (!deps.vectorSearch) out.add('file_search');
  if (!deps.containers) for (const t of ['code_interpreter', 'shell']) out.add(t);
  if (!deps.tools.canDrawImages) out.add('image_generation');
  return out;
}

const NO_TOOLS: ToolSet = { tools: [], notes: [] };

type ImageToolSettings = Omit<ImageToolConfig, 'feeUsd'>;

/** An image_generation tool entry's size and quality as the image endpoints take them (a size outside the limits is refused naming it). */
function imageToolSettings({ tool, at }: { tool: Record<string, any>; at: string }): ImageToolSettings {
  const size = parseSize(typeof tool.size === 'string' ? tool.size : undefined);
  if (size === null) throw invalidRequest('size is auto or WIDTHxHEIGHT with each side 16 to 3840 pixels and at most 3840x2160\'s pixels.', `${at}.size`);
  const quality: ImageQuality = tool.quality === 'high' ? 'high' : 'standard';
  const fields: Record<string, string> = {};
  if (typeof tool.size === 'string') fields.size = tool.size;
  if (typeof tool.quality === 'string') fields.quality = tool.quality;
  return { size, quality, fields };
}

/** The inputs of a request for moderation: the string, or each message item's text and images. */
function inputTexts(raw: ResponseBody['input'], items: readonly Item[], files: ReadonlyMap<string, { dataUrl: string; text?: string }>): InputText[] {
  if (typeof raw === 'string') return [{ text: raw, param: 'input' }];
  return items.flatMap((item, i) => (item.type === 'message' ? [messageInput(item.content, `input[${i}].content`, files)] : []));
}
const NO_MCP: McpPlan = { listItems: [], tools: [], functions: [], kinds: [], approved: [], answered: [] };

/** tool_choice naming an MCP server (and tool): that tool when it is one, else auto; `required` holds once MCP tools are offered. */
function mcpToolChoice(choice: unknown, mcp: McpPlan): ChatRequest['toolChoice'] | undefined {
  if (mcp.kinds.length === 0) return undefined;
  if (choice === 'required' || choice === 'none') return choice;
  const c = choice as { type?: string; server_label?: string; name?: string | null } | null | undefined;
  if (c?.type !== 'mcp') return undefined;
  const named = mcp.kinds.find(([, k]) => 'serverLabel' in k && k.serverLabel === c.server_label && (c.name == null || k.name === c.name));
  return named && c.name != null ? { name: named[0] } : 'auto';
}

export function newResponseId(): string {
  return newId('resp_');
}

export function usageObject(usage: Usage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0, cache_write_tokens: 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

const conversationIdOf = (c: ResponseBody['conversation']): string | null => (c == null ? null : typeof c === 'string' ? c : c.id);

/** The response object as it echoes the request: what ran, before any output. */
export function initialResponse(id: string, createdAt: number, body: ResponseBody, maxOutputTokens: number, conversationId: string | null): Record<string, any> {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    background: body.background ?? false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? maxOutputTokens,
    max_tool_calls: null,
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    conversation: conversationId ? { id: conversationId } : null,
    prompt_cache_key: (body as { prompt_cache_key?: string }).prompt_cache_key ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 0.7,
    text: { format: body.text?.format ?? { type: 'text' }, verbosity: body.text?.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    // An mcp tool's headers and authorization are the caller's secrets: never echoed or stored.
    tools: echoedTools(body.tools as Record<string, any>[] | null | undefined),
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    // `user` is a string or absent in the reference (not null).
    ...(body.user ? { user: body.user } : {}),
    metadata: body.metadata ?? {},
  };
}

/** Combinations the field table cannot express, checked before anything runs. */
export function checkCombinations(body: ResponseBody): void {
  if (body.background && body.stream) throw invalidRequest('background cannot be combined with stream: poll GET /responses/{response_id} instead.', 'background');
  if (body.background && body.store === false) throw invalidRequest('A background response must be stored: leave out store or set it to true.', 'store');
  if (body.previous_response_id && body.conversation) throw invalidRequest('Send previous_response_id or conversation, not both.', 'previous_response_id');
}

/** The earlier items the model sees: the stored chain or the conversation's items. */
async function earlierItems(deps: ResponsesDeps, accountId: string, body: ResponseBody): Promise<{ items: Item[]; conversationId: string | null }> {
  if (body.previous_response_id) {
    const chain = await deps.stored.chain(accountId, body.previous_response_id);
    if (!chain) throw notFound(`Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_id');
    return { items: chain.items, conversationId: null };
  }
  const conversationId = conversationIdOf(body.conversation);
  if (conversationId) {
    const items = deps.conversations ? await deps.conversations.allItems(accountId, conversationId) : undefined;
    if (!items) throw notFound(`Conversation with id '${conversationId}' not found.`, 'conversation');
    return { items, conversationId };
  }
  return { items: [], conversationId: null };
}

function chatFormat(format: unknown): unknown {
  const f = format as { type?: string; name?: string; schema?: unknown; strict?: boolean | null; description?: string } | undefined;
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_schema') return { type: 'json_schema', json_schema: { name: f.name, schema: f.schema, strict: f.strict } };
  return { type: f.type };
}

export interface StartOptions {
  id?: string;
  createdAt?: number;
}

/** Everything a response needs before its model runs; a request that would be refused is refused here. */
export interface PreparedResponse {
  maxTokens: number;
  earlierItems: Item[];
  conversationId: string | null;
  input: Item[];
  mapped: ReturnType<typeof mapTools>;
  containers: ResolvedContainers;
  /** The request's web_search tool as the registry builds it (its tools, or the note that it cannot search). */
  web: ToolSet | null;
  /** The request's remote MCP servers, settled. */
  mcp: McpPlan;
  /** The request's image_generation tool's size and quality, checked. */
  image?: ImageToolSettings;
  /** The tool message of each MCP approval request in the conversation (an approved one's filled in once its call has run). */
  approvals: Map<string, ChatMessage & { role: 'tool' }>;
  messages: ChatMessage[];
  attachments: number;
  includeLogprobs: boolean;
  request: ChatRequest;
}

export async function prepareResponse(
  services: Services,
  deps: ResponsesDeps,
  body: ResponseBody,
  key: KeyRecord,
  opts: {
    responseId?: string;
    /** Stops the work before the run opens (moderation, an MCP listing); made only when that work is there. */
    signal?: () => AbortSignal;
    /** false: MCP servers are checked but their tools not listed (a background response lists them when it runs). */
    listMcpTools?: boolean;
    /** Where the Moderate requests switch's verdict goes (the call's activity row). */
    call?: Pick<Call, 'moderation'>;
  } = {},
): Promise<PreparedResponse> {
  const { responseId = 'a response', listMcpTools = true, call } = opts;
  // Made only for the work that needs it: a signal with a timer costs every request otherwise.
  let made: AbortSignal | undefined;
  const signal = () => (made ??= opts.signal?.() ?? AbortSignal.timeout(60_000));
  checkCombinations(body);
  const accountId = key.accountId;
  const model = body.model as ChatModel;
  const maxTokens = outputCap(body.max_output_tokens, key.maxOutputTokens, services.config.defaultMaxOutputTokens);
  const earlier = await earlierItems(deps, accountId, body);
  const input = inputItems(body.input);
  if (earlier.conversationId) {
    // Checked now, not when the items are appended after the model ran.
    const known = new Set(earlier.items.map((i) => i.id));
    const at = input.findIndex((i) => known.has(i.id));
    if (at >= 0) throw invalidRequest(`The conversation already has an item with id '${input[at]!.id}'.`, `input[${at}].id`);
  }
  // Files named by id, read before the switch moderates them with the message that names them.
  const fileIds = new Map([...fileIdsOf(earlier.items, 'previous items'), ...fileIdsOf(input)]);
  const files = await resolveFiles(fileIds, accountId, services.files, services.config.bodyLimitBytes);
  // The offline engine reads a stored PDF's text, as it reads a text file's.
  if (files.size > 0 && services.engines.for('chat', model).name === 'offline') await addPdfText(files);
  // The Moderate requests switch: the instructions and this request's input moderated before anything runs (earlier items were, when they were sent).
  if (key.permissions.moderate) {
    await moderateInput(services, key, [...(body.instructions ? [{ text: body.instructions, param: 'instructions' }] : []), ...inputTexts(body.input, input, files)], signal(), call);
  }
  const mapped = mapTools(body.tools as Record<string, any>[] | null | undefined, body.tool_choice, key, unavailableTools(deps));
  // Settled before the model runs too: a store the account cannot search is refused, not searched empty.
  if (mapped.fileSearch) await checkVectorStores(deps.vectorSearch!, accountId, mapped.fileSearch);
  // Settled before the model runs: an unknown or expired container is refused now.
  const containers = deps.containers ? await resolveContainers(deps.containers, key, mapped.containerTools, [...earlier.items, ...input], responseId) : {};
  if (containers.codeInterpreter) mapped.kinds.set(CODE_INTERPRETER_FUNCTION_NAME, { kind: 'code_interpreter', containerId: containers.codeInterpreter.id });
  if (containers.shell) mapped.kinds.set(SHELL_FUNCTION_NAME, { kind: 'container_shell', containerId: containers.shell.id });

  const web = mapped.webSearch ? deps.tools.web(webSearchEntry(mapped.webSearch.tool)) : null;
  const image = mapped.imageGeneration ? imageToolSettings(mapped.imageGeneration) : undefined;
  // Remote MCP servers: checked, listed (or the chain's listing reused), approvals checked, before the model runs.
  const mcp = mapped.mcp.length > 0 || input.some((i) => i.type === 'mcp_approval_response') ? await planMcp(deps.tools, mapped.mcp, earlier.items, input, signal(), listMcpTools) : NO_MCP;
  for (const [name, kind] of mcp.kinds) mapped.kinds.set(name, kind);
  mapped.functions.push(...mcp.functions);
  const mcpChoice = mcpToolChoice(body.tool_choice, mcp);
  if (mcpChoice) mapped.toolChoice = mcpChoice;

  const counter = { attachments: 0 };
  const approvals = approvalOutcomes([...earlier.items, ...input]);
  const ctx = {
    files,
    earlier: new Map(earlier.items.map((i) => [i.id, i])),
    approvals,
    ...(deps.compaction ? { unseal: (item: Item, param: string) => deps.compaction!.unseal(accountId, item, param) } : {}),
  };
  const messages: ChatMessage[] = [
    ...(body.instructions ? [{ role: 'system' as const, content: body.instructions }] : []),
    ...(web?.notes ?? []).map((content) => ({ role: 'system' as const, content })),
    ...toMessages(earlier.items, ctx, 'previous items', counter),
    ...toMessages(input, ctx, 'input', counter),
  ];
  if (!messages.some((m) => m.role !== 'system' && m.role !== 'developer')) throw invalidRequest('The response has no input: send input, previous_response_id or a conversation with items.', 'input');

  const includeLogprobs = ((body.include ?? []) as string[]).includes('message.output_text.logprobs');
  const request: ChatRequest = generationOptions(
    {
      model,
      stream: body.stream === true,
      response_format: chatFormat(body.text?.format),
      temperature: body.temperature,
      top_p: body.top_p,
      reasoning: body.reasoning,
      verbosity: body.text?.verbosity,
      user: body.user,
    },
    maxTokens,
    {
      messages,
      tools: mapped.functions.length ? mapped.functions : undefined,
      toolChoice: mapped.toolChoice,
      parallelToolCalls: body.parallel_tool_calls ?? undefined,
      logprobs: includeLogprobs || undefined,
      topLogprobs: includeLogprobs ? (body.top_logprobs ?? 0) : undefined,
    },
  );
  return { maxTokens, earlierItems: earlier.items, conversationId: earlier.conversationId, input, mapped, containers, web, mcp, ...(image ? { image } : {}), approvals, messages, attachments: counter.attachments, includeLogprobs, request };
}

export async function startResponse(services: Services, deps: ResponsesDeps, call: Call, body: ResponseBody, key: KeyRecord, opts: StartOptions = {}): Promise<StartedResponse> {
  const accountId = key.accountId;
  const model = body.model as ChatModel;
  const id = opts.id ?? newResponseId();
  const prepared = await prepareResponse(services, deps, body, key, { responseId: id, signal: () => run0Signal(call), call });
  const { maxTokens, input, mapped, messages, includeLogprobs, request } = prepared;
  const counter = { attachments: prepared.attachments };
  const earlier = { conversationId: prepared.conversationId };
  request.requestId = call.id;

  // The request's hosted tools run in the agent loop whatever else it carries; the
  // service's own tools only when the model would not answer directly (client tools, a
  // format or logprobs, or a key without agent tools).
  const { containers, web } = prepared;
  const { tools } = deps;
  const hosted: AgentTool[] = [
    ...(mapped.fileSearch ? [tools.fileSearch(accountId, fileSearchConfig(mapped.fileSearch.tool), call.log)] : []),
    ...(containers.codeInterpreter ? [tools.codeInterpreter(containers.codeInterpreter, call.log)] : []),
    ...(containers.shell ? [tools.containerShell(containers.shell, call.log)] : []),
    ...(web?.tools ?? []),
    ...prepared.mcp.tools,
    ...(prepared.image ? [tools.imageGeneration(prepared.image)] : []),
  ];
  // The assistant's own tools only when the model would not answer directly (client tools,
  // a format or logprobs, a key without agent tools) and the request brings no web tools of its own.
  const direct = mapped.functions.length > 0 || request.responseFormat !== undefined || includeLogprobs || web !== null || mapped.mcp.length > 0;
  // Asked for a picture with no image_generation tool of its own: the assistant may draw one (SPEC item 7).
  // The message is read for it only where a picture could follow (both switches, an image engine).
  const mayDraw = !prepared.image && key.permissions.agent_tools && key.permissions.image_generation && tools.canDrawImages;
  const assistant = direct ? NO_TOOLS : tools.assistant(key, mentionsUrl(request.messages), call.log, { asksForPicture: mayDraw && asksForPicture(request.messages) });
  if (assistant.tools.some((t) => t.definition.name === IMAGE_GENERATION_FUNCTION_NAME)) mapped.kinds.set(IMAGE_GENERATION_FUNCTION_NAME, { kind: 'image_generation' });
  // The assistant's web calls are web_search_call items like a requested web_search tool's.
  if (assistant.tools.length > 0) for (const name of WEB_FUNCTION_NAMES) if (!mapped.kinds.has(name)) mapped.kinds.set(name, { kind: 'web_search' });
  const serviceTools = [...hosted, ...assistant.tools];

  const estimate = estimateInputTokens([messages, mapped.functions, serviceTools.map((t) => t.definition), body.text?.format], counter.attachments);
  const run = await Run.open(services, call, { key, model, input: estimate, maxOutputTokens: maxTokens });
  // The answers claimed once for the whole service, then the approved MCP calls run, once
  // each, with the arguments stored; the model reads their results.
  await claimApprovals(services.store.db, accountId, call.id, prepared.mcp.answered);
  const approvedCalls = await runApprovedCalls(deps.tools, prepared.mcp.approved, run);
  // Each result goes where its request's call is in the conversation the model reads.
  for (const item of approvedCalls) prepared.approvals.get(String(item.approval_request_id))!.content = mcpResult(item);
  const source = serviceTools.length === 0
    ? services.engines.for('chat', model).chat(request, run.signal)
    : runAgent(services.engines.for('chat', model), request, serviceTools, run.signal, run.agentHooks(counter.attachments, maxTokens), services.config.agentLimits);
  const include = (body.include ?? []) as string[];

  const createdAt = opts.createdAt ?? Math.floor(Date.now() / 1000);
  const initial = initialResponse(id, createdAt, body, maxTokens, earlier.conversationId);
  return {
    run,
    events: run.meter(source),
    id,
    initial,
    kinds: mapped.kinds,
    premade: [...prepared.mcp.listItems, ...approvedCalls],
    includeLogprobs,
    include,
    inputItems: input,
    async finish(builder, credits, usage) {
      const { status, incomplete_details } = builder.status;
      const response: Record<string, any> = {
        ...initial,
        status,
        completed_at: status === 'completed' ? Math.floor(Date.now() / 1000) : null,
        incomplete_details,
        output: builder.output,
        usage: usageObject(usage),
        svc: fromMicro(credits),
      };
      const background = body.background === true;
      if (background) await deps.stored.update(id, response, { onlyIf: ['queued', 'in_progress'] });
      else if (response.store) {
        await deps.stored.save({ accountId, response, inputItems: input, previousResponseId: body.previous_response_id ?? null, conversationId: earlier.conversationId });
      }
      if (earlier.conversationId) await deps.conversations!.append(accountId, earlier.conversationId, [...input, ...builder.output]);
      return shownResponse(response, include);
    },
  };
}

/** The call's signal for the work before its run opens (a caller gone stops an MCP listing). */
const run0Signal = (call: Call): AbortSignal => AbortSignal.any([callSignal(call), AbortSignal.timeout(60_000)]);

/** A response's output builder, with the items made before the model ran already in it (and their events). */
export function openBuilder(started: StartedResponse): { builder: OutputBuilder; events: StreamEvent[] } {
  const builder = new OutputBuilder(started.kinds, started.includeLogprobs, started.include);
  return { builder, events: builder.premade(started.premade) };
}

/** Runs the approved MCP calls under the run (a stopped run stops them; the call's finish settles it). */
function runApprovedCalls(tools: ToolRegistry, approved: McpPlan['approved'], run: Run): Promise<Item[]> {
  return approved.length === 0 ? Promise.resolve([]) : runApproved(tools, approved, run.signal);
}

/** Consumes the model's events into the builder; the whole response once it has run. */
export async function collectResponse(started: StartedResponse): Promise<OutputBuilder> {
  const { builder } = openBuilder(started);
  for await (const e of started.events) builder.add(e);
  builder.close();
  return builder;
}
