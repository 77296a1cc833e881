// A checked messages-style body → the provider-neutral ChatRequest chat uses: the same
// providers answer both surfaces. Content blocks become message parts, `tool_use` blocks
// tool calls, `tool_result` blocks tool messages (in the order the blocks come), and a
// thinking block sent back must carry the signature this service gave it.
import type { countMessageTokens, createMessage } from '../../contract/endpoints/messages.ts';
import { REFUSED_TOOL_PREFIXES, SERVER_TOOL_KINDS } from '../../contract/endpoints/messages.ts';
import type { ChatModel } from '../../contract/models.ts';
import type { BodyOf } from '../../contract/types.ts';
import { invalidRequest, unsupportedParameter } from '../../errors.ts';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../../providers/types.ts';
import type { ResolvedFile } from '../files/resolve-parts.ts';
import type { ThinkingSignatures } from './thinking-signature.ts';

export type MessageBody = BodyOf<typeof createMessage>;
export type CountBody = BodyOf<typeof countMessageTokens>;
type AnyBody = MessageBody | CountBody;

/** A server tool the request offers (web_search, web_fetch): run by the service through the agent loop. */
export interface ServerToolEntry {
  kind: 'web_search' | 'web_fetch' | 'code_execution';
  /** The tool's dated type, as sent. */
  type: string;
  maxUses?: number;
}

/**
 * A server call the conversation's last (assistant) turn holds without its result: a
 * paused turn's, which this request runs first. `call` is the tool call of the mapped
 * assistant message (an MCP call's name is resolved once its server is listed).
 */
export interface PendingServerCall {
  call: ToolCall;
  /** An MCP call's server (`mcp_tool_use.server_name`). */
  serverName?: string;
  /** `messages[i].content[j]`, for a 400 naming the block. */
  at: string;
}

export interface MappedMessage {
  request: ChatRequest;
  serverTools: ServerToolEntry[];
  pending: PendingServerCall[];
  /** Images and documents in the conversation (each adds a fixed amount to the reservation's estimate). */
  attachments: number;
  /** The thinking the answer shows: none, its text, or empty blocks that keep their signatures. */
  thinking: 'off' | 'shown' | 'omitted';
}

type Block = Record<string, any>;
type ReasoningEffort = NonNullable<ChatRequest['reasoningEffort']>;

/** `messages[i].content[j].source.file_id` of every image or document naming a stored file, by id. */
export function fileSourceIds(body: AnyBody): Map<string, string> {
  const ids = new Map<string, string>();
  (body.messages as Block[]).forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    (m.content as Block[]).forEach((b, j) => {
      const id = b.source?.type === 'file' ? b.source.file_id : undefined;
      if (typeof id === 'string' && !ids.has(id)) ids.set(id, `messages[${i}].content[${j}].source.file_id`);
    });
  });
  return ids;
}

const textOfBlocks = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Block[])
    .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : b.type === 'document' ? documentText(b) ?? '' : ''))
    .filter((t) => t !== '')
    .join('\n');
};

/** A document block whose text is in the request (a text or content source). */
function documentText(b: Block): string | null {
  const s = b.source;
  if (s?.type === 'text') return String(s.data);
  if (s?.type === 'content') return textOfBlocks(s.content);
  return null;
}

interface Ctx {
  files: ReadonlyMap<string, ResolvedFile>;
  signatures: ThinkingSignatures;
  accountId: string;
  attachments: number;
  pending: PendingServerCall[];
}

function userPart(b: Block, at: string, ctx: Ctx): ContentPart | null {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'image': {
      ctx.attachments++;
      const s = b.source;
      if (s.type === 'base64') return { type: 'image_url', url: `data:${s.media_type};base64,${s.data}` };
      if (s.type === 'url') return { type: 'image_url', url: s.url };
      const stored = ctx.files.get(s.file_id)!;
      if (!stored.dataUrl.startsWith('data:image/')) throw invalidRequest(`The file '${s.file_id}' is not an image.`, `${at}.source.file_id`);
      return { type: 'image_url', url: stored.dataUrl };
    }
    case 'document': {
      const text = documentText(b);
      if (text !== null) return { type: 'text', text: b.title ? `${b.title}\n\n${text}` : text };
      ctx.attachments++;
      const s = b.source;
      const filename = typeof b.title === 'string' && b.title ? b.title : 'document.pdf';
      if (s.type === 'base64') {
        const read = ctx.files.get(`inline:${at}`);
        return { type: 'file', filename, data_url: `data:${s.media_type};base64,${s.data}`, ...(read?.text !== undefined ? { text: read.text } : {}) };
      }
      if (s.type === 'file') {
        const stored = ctx.files.get(s.file_id)!;
        return { type: 'file', filename: stored.filename, data_url: stored.dataUrl, ...(stored.text !== undefined ? { text: stored.text } : {}) };
      }
      // Fetched beforehand through the outbound guard (message-call.ts fetchDocuments).
      const fetched = ctx.files.get(`url:${s.url}`)!;
      return { type: 'file', filename: fetched.filename, data_url: fetched.dataUrl, ...(fetched.text !== undefined ? { text: fetched.text } : {}) };
    }
    case 'redacted_thinking':
      throw invalidRequest('A redacted_thinking block was not made by this service and cannot be read back.', at);
    default:
      // A server tool's earlier blocks are read as what they said.
      return b.type === 'search_result' || b.type.endsWith('_tool_result') ? { type: 'text', text: JSON.stringify(b.content ?? '') } : null;
  }
}

/** The last block that carries cache_control. */
function lastMarked(blocks: Block[]): Block | undefined {
  for (let i = blocks.length - 1; i >= 0; i--) if (blocks[i]!.cache_control) return blocks[i];
  return undefined;
}

/** A block's cache_control as the breakpoint of the message it lands in (an upstream that takes it gets it back). */
const breakpointOf = (cc: unknown): ChatMessage['cacheBreakpoint'] =>
  cc && typeof cc === 'object' ? ((cc as { ttl?: string }).ttl === '1h' ? { ttl: '1h' } : {}) : undefined;

/** A thinking block's text, once its signature is checked. */
function verifiedThinking(b: Block, where: string, ctx: Ctx): string {
  if (!ctx.signatures.verify(ctx.accountId, b.thinking, b.signature)) {
    throw invalidRequest('This thinking block\'s signature does not match its text: send thinking blocks back exactly as they were received.', `${where}.signature`);
  }
  return b.thinking;
}

/**
 * The last assistant turn, when it holds server calls (a turn continued after
 * `pause_turn`): its steps as the agent loop keeps them (each step's text beside its
 * calls, then their results as tool messages), so the model goes on from there. Calls
 * at its end without a result are pending (ctx.pending): the loop runs them first.
 */
function openTurn(blocks: Block[], at: string, ctx: Ctx): ChatMessage[] {
  const out: ChatMessage[] = [];
  let step = { text: '', reasoning: '', calls: [] as { call: ToolCall; serverName?: string; at: string }[] };
  let results: ChatMessage[] = [];
  const flush = (final: boolean) => {
    const answered = new Set(results.map((r) => (r as { tool_call_id: string }).tool_call_id));
    // A call left without a result before the turn went on is dropped, as an earlier turn's is.
    const calls = final ? step.calls : step.calls.filter((c) => answered.has(c.call.id));
    if (step.text !== '' || step.reasoning !== '' || calls.length > 0) {
      out.push({
        role: 'assistant',
        content: step.text === '' && calls.length > 0 ? null : step.text,
        ...(calls.length ? { tool_calls: calls.map((c) => c.call) } : {}),
        ...(step.reasoning ? { reasoning: step.reasoning } : {}),
      });
    }
    out.push(...results);
    if (final) ctx.pending.push(...calls.filter((c) => !answered.has(c.call.id)).map((c) => ({ call: c.call, at: c.at, ...(c.serverName ? { serverName: c.serverName } : {}) })));
    step = { text: '', reasoning: '', calls: [] };
    results = [];
  };
  blocks.forEach((b, j) => {
    const where = `${at}.content[${j}]`;
    const isResult = b.type.endsWith('_tool_result') || b.type === 'mcp_tool_result';
    // What follows a step's results belongs to the next step.
    if (!isResult && results.length > 0) flush(false);
    if (b.type === 'text') step.text += b.text;
    else if (b.type === 'thinking') step.reasoning += verifiedThinking(b, where, ctx);
    else if (b.type === 'server_tool_use' || b.type === 'mcp_tool_use') {
      const call = { id: String(b.id ?? ''), name: String(b.name ?? ''), arguments: JSON.stringify(b.input ?? {}) };
      if (call.id === '' || call.name === '') throw invalidRequest(`A ${b.type} block needs its id and name.`, where);
      step.calls.push({ call, at: where, ...(b.type === 'mcp_tool_use' ? { serverName: String(b.server_name ?? '') } : {}) });
    } else if (isResult) {
      const content = JSON.stringify(b.content ?? '');
      if (step.calls.some((c) => c.call.id === b.tool_use_id)) results.push({ role: 'tool', tool_call_id: b.tool_use_id, content });
      else step.text += content;
    } else if (b.type === 'redacted_thinking') throw invalidRequest('A redacted_thinking block was not made by this service and cannot be read back.', where);
    else if (b.type === 'tool_use') throw invalidRequest('A tool_use block must be answered by a tool_result in the next user message.', where);
    else throw invalidRequest(`An assistant message cannot hold a '${b.type}' block.`, `${where}.type`);
  });
  flush(true);
  const cacheBreakpoint = breakpointOf(lastMarked(blocks)?.cache_control);
  if (cacheBreakpoint && out.length > 0) out[out.length - 1]!.cacheBreakpoint = cacheBreakpoint;
  return out;
}

function mapMessages(body: AnyBody, ctx: Ctx): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (body.system !== undefined) {
    const system = textOfBlocks(body.system);
    const marked = Array.isArray(body.system) ? lastMarked(body.system as Block[]) : undefined;
    const cacheBreakpoint = breakpointOf(marked?.cache_control);
    if (system !== '') out.push({ role: 'system', content: system, ...(cacheBreakpoint ? { cacheBreakpoint } : {}) });
  }
  (body.messages as Block[]).forEach((m, i, all) => {
    const at = `messages[${i}]`;
    if (m.role === 'system') {
      out.push({ role: 'system', content: textOfBlocks(m.content) });
      return;
    }
    if (typeof m.content === 'string') {
      out.push(m.role === 'user' ? { role: 'user', content: m.content } : { role: 'assistant', content: m.content });
      return;
    }
    const blocks = m.content as Block[];
    if (m.role === 'assistant' && i === all.length - 1 && blocks.some((b) => b.type === 'server_tool_use' || b.type === 'mcp_tool_use')) {
      out.push(...openTurn(blocks, at, ctx));
      return;
    }
    if (m.role === 'assistant') {
      let text = '';
      let reasoning = '';
      const calls: ToolCall[] = [];
      blocks.forEach((b, j) => {
        const where = `${at}.content[${j}]`;
        if (b.type === 'text') text += b.text;
        else if (b.type === 'tool_use') calls.push({ id: b.id, name: b.name, arguments: JSON.stringify(b.input) });
        else if (b.type === 'thinking') reasoning += verifiedThinking(b, where, ctx);
        else if (b.type === 'redacted_thinking') throw invalidRequest('A redacted_thinking block was not made by this service and cannot be read back.', where);
        else if (b.type === 'server_tool_use' || b.type === 'mcp_tool_use') text += '';
        else if (b.type.endsWith('_tool_result') || b.type === 'mcp_tool_result') text += JSON.stringify(b.content ?? '');
        else throw invalidRequest(`An assistant message cannot hold a '${b.type}' block.`, `${where}.type`);
      });
      const cacheBreakpoint = breakpointOf(lastMarked(blocks)?.cache_control);
      out.push({
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : text,
        ...(calls.length ? { tool_calls: calls } : {}),
        ...(reasoning ? { reasoning } : {}),
        ...(cacheBreakpoint ? { cacheBreakpoint } : {}),
      });
      return;
    }
    // A user turn: its tool results first (they answer the previous turn's calls), then what it says.
    const parts: ContentPart[] = [];
    let partsBreakpoint: ChatMessage['cacheBreakpoint'];
    blocks.forEach((b, j) => {
      const where = `${at}.content[${j}]`;
      if (b.type === 'tool_result') {
        const result = textOfBlocks(b.content ?? '');
        const cacheBreakpoint = breakpointOf(b.cache_control);
        out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error ? `Error: ${result}` : result, ...(cacheBreakpoint ? { cacheBreakpoint } : {}) });
        if (Array.isArray(b.content)) (b.content as Block[]).forEach((c, k) => c.type === 'image' && parts.push(userPart(c, `${where}.content[${k}]`, ctx)!));
        return;
      }
      if (b.type === 'tool_use' || b.type === 'thinking') throw invalidRequest(`A user message cannot hold a '${b.type}' block.`, `${where}.type`);
      const part = userPart(b, where, ctx);
      if (part) parts.push(part);
      partsBreakpoint = breakpointOf(b.cache_control) ?? partsBreakpoint;
    });
    if (parts.length > 0) {
      out.push({
        role: 'user',
        content: parts.every((p) => p.type === 'text') ? parts.map((p) => (p as { text: string }).text).join('\n') : parts,
        ...(partsBreakpoint ? { cacheBreakpoint: partsBreakpoint } : {}),
      });
    }
  });
  // Automatic caching: the breakpoint after the last block.
  const automatic = breakpointOf(body.cache_control);
  if (automatic && out.length > 0) out[out.length - 1]!.cacheBreakpoint = automatic;
  return out;
}

/** Members of a server tool SPEC refuses ("domain limits on search and fetch"), by kind. */
const REFUSED_MEMBERS: Record<ServerToolEntry['kind'], readonly string[]> = {
  web_search: ['allowed_domains', 'blocked_domains'],
  web_fetch: ['allowed_domains', 'blocked_domains'],
  code_execution: [],
};

/** The first code execution version: Python programs. */
export const PYTHON_CODE_EXECUTION_TYPE = 'code_execution_20250522';
/**
 * The later versions the SDKs type: bash commands and a text editor. 20260120 and after
 * add the interpreter state that programmatic tool calling keeps, which this service does
 * not offer, so they run as 20250825 does.
 */
const BASH_CODE_EXECUTION_TYPES: readonly string[] = ['code_execution_20250825', 'code_execution_20260120', 'code_execution_20260521'];

/** Custom tools become function tools; typed vendor tools are sorted into server tools and refusals. */
function mapTools(body: AnyBody, server: ServerToolEntry[]): FunctionTool[] {
  const tools: FunctionTool[] = [];
  (body.tools as Block[] | undefined)?.forEach((t, i) => {
    if (t.type === undefined || t.type === 'custom') {
      tools.push({ name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema, ...(typeof t.strict === 'boolean' ? { strict: t.strict } : {}) });
      return;
    }
    const type = String(t.type);
    const refusedKind = REFUSED_TOOL_PREFIXES.find((r) => type.startsWith(r.prefix));
    if (refusedKind) throw unsupportedParameter(`tools[${i}].type`, `The tool type '${type}' is not supported by this service: ${refusedKind.why}.`);
    const kind = SERVER_TOOL_KINDS.find((k) => type.startsWith(`${k}_`));
    if (kind === 'web_search' || kind === 'web_fetch') {
      for (const member of REFUSED_MEMBERS[kind]) {
        if (t[member] !== undefined && t[member] !== null) throw unsupportedParameter(`tools[${i}].${member}`, `Domain limits on ${kind} are not supported by this service.`);
      }
      if (t.max_uses !== undefined && (!Number.isInteger(t.max_uses) || t.max_uses < 1)) throw invalidRequest('max_uses must be a positive integer.', `tools[${i}].max_uses`);
      if (server.some((e) => e.kind === kind)) throw invalidRequest(`The server tool ${kind} is offered more than once.`, `tools[${i}].type`);
      server.push({ kind, type, ...(t.max_uses !== undefined ? { maxUses: t.max_uses } : {}) });
      return;
    }
    if (kind === 'code_execution') {
      if (type !== PYTHON_CODE_EXECUTION_TYPE && !BASH_CODE_EXECUTION_TYPES.includes(type)) {
        throw unsupportedParameter(`tools[${i}].type`, `The code execution tool '${type}' is not offered: send one of ${[PYTHON_CODE_EXECUTION_TYPE, ...BASH_CODE_EXECUTION_TYPES].join(', ')}.`);
      }
      if (server.some((e) => e.kind === kind)) throw invalidRequest('The code execution tool is offered more than once.', `tools[${i}].type`);
      server.push({ kind, type });
      return;
    }
    throw unsupportedParameter(`tools[${i}].type`, `Unknown tool type '${type}': declare a custom tool (name, description, input_schema).`);
  });
  const names = new Set<string>();
  tools.forEach((t, i) => {
    if (names.has(t.name)) throw invalidRequest(`Tool names must be unique: '${t.name}' appears more than once.`, `tools[${i}].name`);
    names.add(t.name);
  });
  return tools;
}

function mapToolChoice(body: AnyBody, tools: FunctionTool[]): { toolChoice?: ToolChoice; parallelToolCalls?: boolean } {
  const choice = body.tool_choice as Block | undefined;
  if (!choice) return {};
  const parallel = choice.disable_parallel_tool_use === true ? { parallelToolCalls: false } : {};
  switch (choice.type) {
    case 'none':
      return { toolChoice: 'none' };
    case 'auto':
      return { toolChoice: 'auto', ...parallel };
    case 'any':
      if (tools.length === 0) throw invalidRequest("tool_choice 'any' needs tools.", 'tool_choice');
      return { toolChoice: 'required', ...parallel };
    default:
      if (!tools.some((t) => t.name === choice.name)) throw invalidRequest(`The tool '${choice.name}' named in tool_choice is not among the tools.`, 'tool_choice.name');
      return { toolChoice: { name: choice.name }, ...parallel };
  }
}

const EFFORTS: Record<string, ReasoningEffort> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'xhigh' };

/** A budget as an effort: the engines take an effort, not a token budget. */
const effortForBudget = (budget: number): ReasoningEffort => (budget < 4_096 ? 'low' : budget < 16_384 ? 'medium' : 'high');

/**
 * `model`: the model that runs (api/messages/message-call.ts chooses it); `maxTokens`: the
 * output cap after the key's. `files`: the stored files the blocks name, already read.
 */
export function toChatRequest(body: AnyBody, model: ChatModel, maxTokens: number, files: ReadonlyMap<string, ResolvedFile>, signatures: ThinkingSignatures, accountId: string): MappedMessage {
  const ctx: Ctx = { files, signatures, accountId, attachments: 0, pending: [] };
  const messages = mapMessages(body, ctx);
  const serverTools: ServerToolEntry[] = [];
  const tools = mapTools(body, serverTools);
  const thinking = body.thinking as Block | undefined;
  if (thinking?.type === 'enabled' && 'max_tokens' in body && typeof body.max_tokens === 'number' && thinking.budget_tokens >= body.max_tokens) {
    throw invalidRequest('thinking.budget_tokens must be less than max_tokens.', 'thinking.budget_tokens');
  }
  const thinks = thinking !== undefined && thinking.type !== 'disabled';
  const effort = !thinks ? 'none' : thinking.type === 'enabled' ? effortForBudget(thinking.budget_tokens) : (EFFORTS[(body.output_config as Block | undefined)?.effort ?? ''] ?? 'medium');
  const format = ((body.output_config as Block | undefined)?.format ?? body.output_format) as Block | null | undefined;
  const b = body as Block;
  const request: ChatRequest = {
    model,
    // A whole answer is fetched whole from an upstream (one JSON, not a stream to reassemble).
    stream: 'stream' in body && body.stream === true,
    messages,
    ...(tools.length ? { tools } : {}),
    ...(tools.length ? mapToolChoice(body, tools) : body.tool_choice && (body.tool_choice as Block).type !== 'none' && (body.tool_choice as Block).type !== 'auto' ? mapToolChoice(body, tools) : {}),
    ...(format ? { responseFormat: { type: 'json_schema' as const, name: 'output', schema: format.schema, strict: true } } : {}),
    maxTokens,
    ...(typeof b.temperature === 'number' ? { temperature: b.temperature } : {}),
    ...(typeof b.top_p === 'number' ? { topP: b.top_p } : {}),
    ...(typeof b.top_k === 'number' ? { topK: b.top_k } : {}),
    ...(Array.isArray(b.stop_sequences) && b.stop_sequences.length ? { stop: b.stop_sequences } : {}),
    ...(model === 'agent-think' ? { reasoningEffort: effort } : {}),
  };
  return { request, serverTools, pending: ctx.pending, attachments: ctx.attachments, thinking: !thinks || model !== 'agent-think' ? 'off' : thinking.display === 'omitted' ? 'omitted' : 'shown' };
}
