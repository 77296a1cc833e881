// The checked chat request body → the provider-neutral ChatRequest. Legacy
// `functions`/`function_call` become tools; message parts are normalized.
import { invalidRequest } from '../../errors.ts';
import type { ChatModel } from '../../contract/models.ts';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ResponseFormat, ToolCall, ToolChoice } from '../../providers/types.ts';

/** Stored files by id: what a `file_id` part becomes. */
export type StoredFileParts = ReadonlyMap<string, { filename: string; dataUrl: string; text?: string }>;

/** The body as the contract step left it (validated, unknown fields dropped). */
export type ChatBody = Record<string, any>;

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
  const fromDefinition = (f: any): FunctionTool => ({
    name: f.name,
    ...(f.description ? { description: f.description } : {}),
    ...(f.parameters ? { parameters: f.parameters } : {}),
    ...(typeof f.strict === 'boolean' ? { strict: f.strict } : {}),
  });
  if (body.tools?.length && body.functions?.length) throw invalidRequest("Send either 'tools' or the legacy 'functions', not both.", 'functions');
  const legacy = !body.tools?.length && !!body.functions?.length;
  const tools: FunctionTool[] | undefined = legacy ? body.functions.map(fromDefinition) : body.tools?.map((t: any) => fromDefinition(t.function));
  const choice = legacy ? body.function_call : body.tool_choice;
  let toolChoice: ToolChoice | undefined;
  if (typeof choice === 'string') toolChoice = choice as ToolChoice;
  else if (choice && typeof choice === 'object') {
    const name = legacy ? choice.name : choice.function?.name;
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

function mapResponseFormat(rf: any): ResponseFormat | undefined {
  if (!rf) return undefined;
  if (rf.type === 'json_schema') {
    return { type: 'json_schema', name: rf.json_schema.name, schema: rf.json_schema.schema ?? {}, ...(typeof rf.json_schema.strict === 'boolean' ? { strict: rf.json_schema.strict } : {}) };
  }
  return { type: rf.type };
}

/** `o` without its undefined and null members (a loop: this runs on every request). */
export function defined<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const k in o) if (o[k] !== undefined && o[k] !== null) out[k] = o[k];
  return out as T;
}

/** `files`: the stored files the messages name by file_id, already read (api/files/resolve-parts.ts). */
export function toProviderRequest(body: ChatBody, maxTokens: number, files: StoredFileParts = new Map()): MappedChat {
  const counter = { attachments: 0 };
  const messages = mapMessages(body.messages, counter, files);
  const { tools, toolChoice, legacy } = mapTools(body);
  const request: ChatRequest = defined({
    model: body.model as ChatModel,
    stream: body.stream === true,
    messages,
    tools,
    toolChoice,
    parallelToolCalls: body.parallel_tool_calls,
    responseFormat: mapResponseFormat(body.response_format),
    maxTokens,
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k,
    minP: body.min_p,
    topA: body.top_a,
    repetitionPenalty: body.repetition_penalty,
    presencePenalty: body.presence_penalty,
    frequencyPenalty: body.frequency_penalty,
    logitBias: body.logit_bias,
    seed: body.seed,
    stop: typeof body.stop === 'string' ? [body.stop] : body.stop,
    logprobs: body.logprobs,
    topLogprobs: body.logprobs ? (body.top_logprobs ?? 0) : undefined,
    reasoningEffort: body.reasoning_effort ?? body.reasoning?.effort,
    verbosity: body.verbosity,
    user: body.user,
  });
  return { request, legacyFunctions: legacy, attachments: counter.attachments };
}
