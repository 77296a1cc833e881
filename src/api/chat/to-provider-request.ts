// The checked chat request body → the provider-neutral ChatRequest. Legacy
// `functions`/`function_call` become tools; message parts are normalized.
import { invalidRequest } from '../../errors.ts';
import type { createChatCompletion } from '../../contract/endpoints/chat.ts';
import type { BodyOf } from '../../contract/types.ts';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../../providers/types.ts';
import { generationOptions } from '../generation-options.ts';

/** Stored files by id: what a `file_id` part becomes. */
export type StoredFileParts = ReadonlyMap<string, { filename: string; dataUrl: string; text?: string }>;

/** The body as the contract step left it (validated, unknown fields dropped). */
export type ChatBody = BodyOf<typeof createChatCompletion>;

export interface MappedChat {
  request: ChatRequest;
  /** The request used the legacy `functions` form: answer with `function_call`. */
  legacyFunctions: boolean;
  /** Images and files in the conversation (each adds a fixed amount to the estimate). */
  attachments: number;
}

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && typeof p.text === 'string' ? p.text : '')).join('');
  return '';
};

function userParts(content: unknown, at: string, counter: { attachments: number }, files: StoredFileParts): string | ContentPart[] {
  if (typeof content === 'string') return content;
  const parts: ContentPart[] = [];
  (content as any[]).forEach((p, j) => {
    switch (p.type) {
      case 'text':
        parts.push({ type: 'text', text: p.text });
        break;
      case 'image_url':
        counter.attachments++;
        parts.push({ type: 'image_url', url: p.image_url.url, ...(p.image_url.detail ? { detail: p.image_url.detail } : {}) });
        break;
      case 'input_audio':
        counter.attachments++;
        parts.push({ type: 'input_audio', data: p.input_audio.data, format: p.input_audio.format });
        break;
      case 'file': {
        counter.attachments++;
        if (p.file?.file_id) {
          // Read beforehand for the caller's account (api/files/resolve-parts.ts).
          const stored = files.get(p.file.file_id);
          if (!stored) throw invalidRequest(`No file with id '${p.file.file_id}' exists for this account.`, `${at}.content[${j}].file.file_id`);
          parts.push({ type: 'file', filename: p.file.filename ?? stored.filename, data_url: stored.dataUrl, ...(stored.text !== undefined ? { text: stored.text } : {}) });
          break;
        }
        parts.push({ type: 'file', ...(p.file?.filename ? { filename: p.file.filename } : {}), ...(p.file?.file_data ? { data_url: p.file.file_data } : {}) });
        break;
      }
      default:
        throw invalidRequest(`Unsupported content part type '${p.type}'.`, `${at}.content[${j}].type`);
    }
  });
  return parts;
}

function mapMessages(raw: any[], counter: { attachments: number }, files: StoredFileParts): ChatMessage[] {
  const legacyIds = new Map<string, string>();
  return raw.map((m, i): ChatMessage => {
    const at = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: m.role, content: textOf(m.content) };
      case 'user':
        return { role: 'user', content: userParts(m.content, at, counter, files), ...(m.name ? { name: m.name } : {}) };
      case 'assistant': {
        const calls: ToolCall[] = (m.tool_calls ?? []).map((c: any) => ({ id: c.id, name: c.function?.name ?? '', arguments: c.function?.arguments ?? '' }));
        if (m.function_call) {
          const id = `call_legacy_${i}`;
          legacyIds.set(m.function_call.name, id);
          calls.push({ id, name: m.function_call.name, arguments: m.function_call.arguments ?? '' });
        }
        return { role: 'assistant', content: m.content == null ? null : textOf(m.content), ...(calls.length ? { tool_calls: calls } : {}) };
      }
      case 'tool':
        return { role: 'tool', tool_call_id: m.tool_call_id, content: textOf(m.content) };
      case 'function':
        return { role: 'tool', tool_call_id: legacyIds.get(m.name) ?? `call_legacy_${m.name}`, content: textOf(m.content) };
      default:
        throw invalidRequest(`Unsupported role '${m.role}'.`, `${at}.role`);
    }
  });
}

function mapTools(body: ChatBody): { tools?: FunctionTool[]; toolChoice?: ToolChoice; legacy: boolean } {
  type Definition = { name: string; description?: string | undefined; parameters?: Record<string, unknown> | undefined; strict?: boolean | null | undefined };
  const fromDefinition = (f: Definition): FunctionTool => ({
    name: f.name,
    ...(f.description ? { description: f.description } : {}),
    ...(f.parameters ? { parameters: f.parameters } : {}),
    ...(typeof f.strict === 'boolean' ? { strict: f.strict } : {}),
  });
  if (body.tools?.length && body.functions?.length) throw invalidRequest("Send either 'tools' or the legacy 'functions', not both.", 'functions');
  const legacy = !body.tools?.length && !!body.functions?.length;
  const tools: FunctionTool[] | undefined = legacy ? body.functions?.map(fromDefinition) : body.tools?.map((t) => fromDefinition(t.function));
  const choice = legacy ? body.function_call : body.tool_choice;
  let toolChoice: ToolChoice | undefined;
  if (typeof choice === 'string') toolChoice = choice as ToolChoice;
  else if (choice && typeof choice === 'object') {
    const named = choice as { function?: { name?: string }; name?: string };
    const name = (legacy ? named.name : named.function?.name) ?? '';
    if (!tools?.some((t) => t.name === name)) {
      throw invalidRequest(`The function '${name}' named in ${legacy ? 'function_call' : 'tool_choice'} is not among the tools.`, legacy ? 'function_call' : 'tool_choice');
    }
    toolChoice = { name };
  }
  if (toolChoice && toolChoice !== 'none' && !tools?.length) {
    throw invalidRequest(`'${legacy ? 'function_call' : 'tool_choice'}' needs tools.`, legacy ? 'function_call' : 'tool_choice');
  }
  return { ...(tools?.length ? { tools } : {}), ...(toolChoice ? { toolChoice } : {}), legacy };
}

/** `files`: the stored files the messages name by file_id, already read (api/files/resolve-parts.ts). */
export function toProviderRequest(body: ChatBody, maxTokens: number, files: StoredFileParts = new Map()): MappedChat {
  const counter = { attachments: 0 };
  const { tools, toolChoice, legacy } = mapTools(body);
  const request: ChatRequest = generationOptions(body, maxTokens, {
    messages: mapMessages(body.messages as unknown[], counter, files),
    tools,
    toolChoice,
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    logprobs: body.logprobs ?? undefined,
    topLogprobs: body.logprobs ? (body.top_logprobs ?? 0) : undefined,
  });
  return { request, legacyFunctions: legacy, attachments: counter.attachments };
}
