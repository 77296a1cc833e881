// One message, whoever asked for it (an HTTP request, streamed or not; a batch line):
// the model that runs is chosen (`agent` and `agent-think` as named, any other name on
// the surface's configured model), the body becomes the ChatRequest chat uses, the Run
// reserves credits before any model runs, and the same chat provider answers. Its parts
// are encoded by message-events.ts.
import type { ChatModel } from '../../contract/models.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import { invalidRequest, modelNotAllowed, unsupportedParameter } from '../../errors.ts';
import { OutboundRefused, OutboundTooLarge } from '../../outbound/guard.ts';
import type { ResolvedFile } from '../files/resolve-parts.ts';
import { McpFailed, type McpServer } from '../../tools/mcp/mcp-client.ts';
import type { ContainerRuntime } from '../containers/container-runtime.ts';
import { resolveContainers } from '../responses/container-tools.ts';
import type { ContainerLease } from '../../tools/containers/container-tool.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { outputCap } from '../../keys/key-limits.ts';
import { callSignal, type Call } from '../../pipeline/call.ts';
import { countInputTokens } from '../../providers/inline/offline/plan.ts';
import type { StreamPart, ToolCall } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { newId } from '../../ids.ts';
import { addPdfText, resolveFiles } from '../files/resolve-parts.ts';
import { messageInput, moderateInput } from '../moderations/moderate-input.ts';
import { consume } from '../stream-answer.ts';
import { MessageEncoder, type MessageContext } from './message-events.ts';
import { cachePrefix, MIN_CACHEABLE_TOKENS, type PrefixCache } from './prefix-cache.ts';
import type { ThinkingSignatures } from './thinking-signature.ts';
import { runAgent } from '../../agent/agent-loop.ts';
import type { ToolRegistry, ToolSet } from '../../tools/registry.ts';
import type { AgentTool } from '../../tools/types.ts';
import { OPEN_PAGE_FUNCTION_NAME, WEB_SEARCH_FUNCTION_NAME } from '../../tools/web-search/web-tools.ts';

/** What the surface keeps between requests: the key that signs thinking, the offline prefix cache, the tool registry. */
export interface MessagesDeps {
  signatures: ThinkingSignatures;
  prefixCache: PrefixCache;
  tools: ToolRegistry;
  containers: ContainerRuntime;
}

/**
 * The server tools a request offers, from the one registry: web_search (with a search
 * backend; without one the model is told it cannot search), web_fetch (the registry's
 * page reader through the outbound guard, under the vendor's name) and code execution
 * (the code interpreter under the vendor's name for 20250522; bash and the text editor
 * for the later versions, in one container). Each keeps its `max_uses`, else the
 * registry's cap.
 */
async function serverToolSet(deps: MessagesDeps, entries: readonly ServerToolEntry[], body: MessageBody, key: KeyRecord, messageId: string, log: Call['log']): Promise<ToolSet> {
  const { tools } = deps;
  if (entries.length === 0) return { tools: [], notes: [] };
  const web = tools.web({ allowedDomains: [], contextSize: 'medium', externalWebAccess: true }, log);
  const out: AgentTool[] = [];
  const notes: string[] = [];
  for (const entry of entries) {
    const cap = entry.maxUses !== undefined ? { maxUses: entry.maxUses } : {};
    if (entry.kind === 'code_execution') {
      const lease = await containerFor(deps.containers, body, key, messageId, entries.findIndex((e) => e === entry));
      if (entry.type === PYTHON_CODE_EXECUTION_TYPE) {
        const code = tools.codeInterpreter(lease, log);
        out.push({ ...code, definition: { ...code.definition, name: CODE_EXECUTION_NAME } });
      } else out.push(...tools.codeExecution(lease, log)); // bash_code_execution and text_editor_code_execution
    } else if (entry.kind === 'web_search') {
      const search = web.tools.find((t) => t.definition.name === WEB_SEARCH_FUNCTION_NAME);
      if (search) out.push({ ...search, ...cap });
      else notes.push(...web.notes);
    } else {
      const open = web.tools.find((t) => t.definition.name === OPEN_PAGE_FUNCTION_NAME)!;
      out.push({ ...open, ...cap, definition: { ...open.definition, name: WEB_FETCH_NAME, description: 'Fetches a web page (an https URL from the user or from search results) and returns its text.' } });
    }
  }
  return { tools: out, notes };
}

/**
 * The tools of the request's MCP servers (the MCP switch is the contract's): each
 * address checked by the outbound guard (400 naming `mcp_servers[i].url`), its tools
 * listed, kept by `tool_configuration`; a server that cannot be listed leaves the model
 * without its tools. The token goes with that server's calls only and is kept nowhere.
 */
async function mcpToolSet(tools: ToolRegistry, servers: readonly Record<string, any>[], signal: AbortSignal): Promise<{ tools: AgentTool[]; names: Map<string, { server: string; tool: string }> }> {
  const out: AgentTool[] = [];
  const names = new Map<string, { server: string; tool: string }>();
  const seen = new Set<string>();
  for (const [i, entry] of servers.entries()) {
    if (seen.has(entry.name)) throw invalidRequest(`Two MCP servers are named '${entry.name}'.`, `mcp_servers[${i}].name`);
    seen.add(entry.name);
    try {
      await tools.checkMcpServer(entry.url);
    } catch (err) {
      if (err instanceof OutboundRefused) throw invalidRequest(`The MCP server url cannot be used: ${err.message}`, `mcp_servers[${i}].url`);
      throw err;
    }
    const config = entry.tool_configuration as { enabled?: boolean | null; allowed_tools?: string[] | null } | null | undefined;
    if (config?.enabled === false) continue;
    const server: McpServer = { label: entry.name, url: entry.url, ...(entry.authorization_token ? { authorization: entry.authorization_token } : {}) };
    let listed;
    try {
      listed = await tools.listMcp(server, signal);
    } catch (err) {
      if (err instanceof McpFailed) continue;
      throw err;
    }
    for (const info of listed) {
      if (config?.allowed_tools && !config.allowed_tools.includes(info.name)) continue;
      const tool = tools.mcp(server, info);
      if (names.has(tool.definition.name)) continue;
      names.set(tool.definition.name, { server: entry.name, tool: info.name });
      out.push(tool);
    }
  }
  return { tools: out, names };
}

/** The vendor's name for the page reader. */
export const WEB_FETCH_NAME = 'web_fetch';
/** The vendor's name for the code interpreter. */
export const CODE_EXECUTION_NAME = 'code_execution';

/**
 * The container code_execution runs in: the one `container` names (the account's and
 * running, else 404 / 400 naming it), or one made at its first run. The Code interpreter
 * switch is needed, as for /v1's code_interpreter; nothing runs without a sandbox (503).
 */
async function containerFor(runtime: ContainerRuntime, body: MessageBody, key: KeyRecord, messageId: string, toolIndex: number): Promise<ContainerLease> {
  if (!key.permissions.code_interpreter) throw modelNotAllowed("This API key does not have the 'code_interpreter' permission, which the code_execution tool needs.", `tools[${toolIndex}].type`);
  const container = body.container as string | { id?: string | null; skills?: unknown } | null | undefined;
  if (container && typeof container === 'object' && container.skills !== undefined && container.skills !== null) {
    throw unsupportedParameter('container.skills', "The vendor's skills are not offered: upload a skill with POST /v1/skills and use it from /v1/responses.");
  }
  const id = typeof container === 'string' ? container : (container?.id ?? null);
  if (id) {
    await runtime.sandbox();
    const param = typeof container === 'string' ? 'container' : 'container.id';
    const row = await runtime.usable(key.accountId, id, param);
    return { id: row.id, get: () => runtime.usable(key.accountId, row.id, param) };
  }
  const resolved = await resolveContainers(runtime, key, { codeInterpreter: { tool: { container: {} }, at: 'container' } }, [], messageId);
  return resolved.codeInterpreter!;
}
import { fileSourceIds, PYTHON_CODE_EXECUTION_TYPE, toChatRequest, type CountBody, type MessageBody, type MappedMessage, type PendingServerCall, type ServerToolEntry } from './to-chat-request.ts';

export interface StartedMessage {
  readonly run: Run;
  readonly events: AsyncIterable<StreamPart>;
  readonly encoder: MessageEncoder;
}

/** The chat model a request's `model` runs on: ours by name, a vendor name on the configured one (with thinking: the thinking one). */
export function modelFor(services: Services, body: CountBody): ChatModel {
  if (body.model === 'agent' || body.model === 'agent-think') return body.model;
  const thinking = (body.thinking as { type?: string } | undefined)?.type;
  return thinking === 'enabled' || thinking === 'adaptive' ? services.config.messagesThinkingModel : services.config.messagesModel;
}

/** Maps a body for the model that runs, after checking the key may use it (a restricted key's list names our models). */
async function mapFor(services: Services, deps: MessagesDeps, body: CountBody, key: KeyRecord, maxTokens: number): Promise<MappedMessage & { cached: { tokens: number; body: Record<string, unknown>; ttlMs: number } | null }> {
  const model = modelFor(services, body);
  if (key.models && !key.models.includes(model)) {
    const why = model === body.model ? '' : ` (the model '${body.model}' runs on '${model}' here)`;
    throw modelNotAllowed(`This API key is not allowed to use the model '${model}'${why}.`, 'model');
  }
  const prefix = cachePrefix(body as Record<string, unknown>);
  const files = await resolveFiles(fileSourceIds(body), key.accountId, services.files, services.config.bodyLimitBytes);
  for (const [url, fetched] of await fetchDocuments(services, body)) files.set(url, fetched);
  // Base64 PDFs too, under their place in the body, so the offline engine reads their text.
  (body.messages as { content: unknown }[]).forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    (m.content as Record<string, any>[]).forEach((b, j) => {
      if (b.type === 'document' && b.source?.type === 'base64') files.set(`inline:messages[${i}].content[${j}]`, { filename: typeof b.title === 'string' && b.title ? b.title : 'document.pdf', dataUrl: `data:application/pdf;base64,${b.source.data}` });
    });
  });
  // The offline engine reads a PDF document's text, as it reads a text file's.
  if (files.size > 0 && services.engines.for('chat', model).name === 'offline') await addPdfText(files);
  const mapped = toChatRequest(body, model, maxTokens, files, deps.signatures, key.accountId);
  // The prefix's tokens, counted as the whole request's are (so a read never exceeds the input).
  let cached = null;
  if (prefix) {
    const tokens = await countInputTokens(toChatRequest(prefix.body as CountBody, model, maxTokens, files, deps.signatures, key.accountId).request);
    if (tokens >= MIN_CACHEABLE_TOKENS) cached = { tokens, body: prefix.body, ttlMs: prefix.ttlMs };
  }
  return { ...mapped, cached };
}

/**
 * PDFs the request names by URL, fetched through the outbound guard (an address it
 * refuses, an answer that is not a PDF, or one over the body limit is a 400 naming the
 * source), keyed `url:<url>` beside the stored files.
 */
async function fetchDocuments(services: Services, body: CountBody): Promise<Map<string, ResolvedFile>> {
  const out = new Map<string, ResolvedFile>();
  let total = 0;
  const sources: { url: string; param: string }[] = [];
  (body.messages as { content: unknown }[]).forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    (m.content as Record<string, any>[]).forEach((b, j) => {
      if (b.type === 'document' && b.source?.type === 'url') sources.push({ url: b.source.url, param: `messages[${i}].content[${j}].source.url` });
    });
  });
  for (const { url, param } of sources) {
    if (out.has(`url:${url}`)) continue;
    let res;
    try {
      res = await services.outbound.fetch(url, { maxBytes: Math.max(1, services.config.bodyLimitBytes - total), timeoutMs: 15_000 });
    } catch (err) {
      const why = err instanceof OutboundRefused || err instanceof OutboundTooLarge ? err.message : 'it could not be fetched';
      throw invalidRequest(`The document at ${url} cannot be used: ${why}`, param);
    }
    if (res.status !== 200) throw invalidRequest(`The document at ${url} cannot be used: it answered with HTTP status ${res.status}.`, param);
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/pdf' && !(res.body.subarray(0, 5).toString('latin1') === '%PDF-')) throw invalidRequest(`The document at ${url} is not a PDF.`, param);
    total += res.body.length;
    const filename = decodeURIComponent(new URL(res.url).pathname.split('/').pop() || 'document.pdf');
    out.set(`url:${url}`, { filename, dataUrl: `data:application/pdf;base64,${res.body.toString('base64')}` });
  }
  return out;
}

/** The input tokens the same request is charged for on the offline engine (free: nothing is reserved, nothing cached). */
export async function countMessageTokens(services: Services, deps: MessagesDeps, body: CountBody, key: KeyRecord): Promise<number> {
  const mapped = await mapFor(services, deps, body, key, services.config.defaultMaxOutputTokens);
  return countInputTokens(mapped.request);
}

export async function startMessage(services: Services, deps: MessagesDeps, call: Call, body: MessageBody, key: KeyRecord): Promise<StartedMessage> {
  const { signatures } = deps;
  const maxTokens = outputCap(body.max_tokens, key.maxOutputTokens, services.config.defaultMaxOutputTokens);
  const mapped = await mapFor(services, deps, body, key, maxTokens);
  const { request } = mapped;
  request.requestId = call.id; // the upstream's failure warning names it
  call.model = body.model ?? call.model;
  // The Moderate requests switch: every user turn's text (and images) moderated before anything runs.
  if (key.permissions.moderate) {
    const inputs = (body.messages as { role: string; content: unknown }[]).map((m, i) => messageInput(asChatContent(m.content), `messages[${i}].content`, new Map()));
    await moderateInput(services, key, inputs, callSignal(call), call);
  }
  // message_start reports the input before the provider's usage comes: counted for streams only.
  const inputTokens = body.stream ? await countInputTokens(request) : 0;
  const messageId = newId('msg_');
  const server = await serverToolSet(deps, mapped.serverTools, body, key, messageId, call.log);
  if (server.notes.length > 0) request.messages.unshift(...server.notes.map((content) => ({ role: 'system' as const, content })));
  const mcp = body.mcp_servers?.length ? await mcpToolSet(deps.tools, body.mcp_servers as Record<string, any>[], callSignal(call)) : null;
  if (mcp) server.tools.push(...mcp.tools);
  const pending = pendingCalls(mapped.pending, server.tools, mcp?.names);
  const run = await Run.open(services, call, {
    key,
    model: request.model,
    input: estimateInputTokens([request.messages, request.tools, request.responseFormat, server.tools.map((t) => t.definition)], mapped.attachments),
    maxOutputTokens: maxTokens,
  });
  const provider = services.engines.for('chat', request.model);
  // The offline engine's prefix cache (an upstream reports its own cached tokens).
  const cache = mapped.cached && provider.name === 'offline' ? { tokens: mapped.cached.tokens, use: deps.prefixCache.use(key.accountId, request.model, mapped.cached.body, mapped.cached.ttlMs) } : null;
  const ctx: MessageContext = {
    id: messageId,
    model: body.model ?? request.model,
    accountId: key.accountId,
    signatures,
    thinking: mapped.thinking,
    inputTokens,
    stopSequences: (body.stop_sequences as string[] | undefined) ?? [],
    cache,
    serverTools: mapped.serverTools.length > 0,
    mcpNames: mcp?.names ?? new Map(),
  };
  // Server tools run in the one agent loop, each fee a run of its own; without them the provider answers directly.
  const source =
    server.tools.length === 0
      ? provider.chat(request, run.signal)
      : runAgent(provider, request, server.tools, run.signal, run.agentHooks(mapped.attachments, maxTokens), services.config.agentLimits, { pauseAtLimit: true, pending });
  return { run, events: run.meter(source), encoder: new MessageEncoder(ctx) };
}

/**
 * The calls a paused turn left for this request (the last assistant turn's server calls
 * without a result), each a tool this request offers under the name the loop runs it by
 * (an MCP call's found by its server and tool); one it does not offer is a 400 naming
 * the block.
 */
function pendingCalls(pending: readonly PendingServerCall[], tools: readonly AgentTool[], mcpNames: ReadonlyMap<string, { server: string; tool: string }> | undefined): ToolCall[] {
  const offered = new Set(tools.map((t) => t.definition.name));
  return pending.map(({ call, serverName, at }) => {
    // An MCP call is found by its server and tool; the mapped conversation's call then names it as the loop does.
    const name = serverName === undefined ? call.name : [...(mcpNames ?? [])].find(([, m]) => m.server === serverName && m.tool === call.name)?.[0];
    if (name === undefined || !offered.has(name)) {
      throw invalidRequest('This call has no result and its tool is not offered by this request: send the same tools (and MCP servers) to continue a paused turn.', at);
    }
    call.name = name;
    return call;
  });
}

/** The vendor's blocks as chat content parts, for moderation: its text and images. */
function asChatContent(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return (content as Record<string, any>[]).flatMap((b): Record<string, unknown>[] => {
    if (b.type === 'text') return [{ type: 'text', text: b.text }];
    if (b.type === 'image' && b.source?.type === 'base64') return [{ type: 'image_url', image_url: { url: `data:${b.source.media_type};base64,${b.source.data}` } }];
    if (b.type === 'tool_result' && typeof b.content === 'string') return [{ type: 'text', text: b.content }];
    return [];
  });
}

/** The whole answer as one Message, with the credits it cost; null when the caller went away first. */
export async function messageOnce(started: StartedMessage): Promise<{ message: Record<string, unknown>; credits: number } | null> {
  const { encoder } = started;
  const ran = await consume(started.run, started.run.signal, async () => {
    for await (const part of started.events) encoder.collect(part);
  });
  if (!ran) return null;
  return { message: encoder.message(ran.usage), credits: ran.credits };
}
