// ChatRequest / CompletionRequest -> OpenAI wire bodies. Every field is forwarded
// (the sampling extensions too); the few deliberate changes are commented.
import type { ChatMessage, ChatRequest, CompletionRequest, ContentPart, ResponseFormat, ToolChoice } from '../../types.ts';
import type { UpstreamConfig } from './config.ts';

type Json = Record<string, unknown>;

/** Drops undefined values so the body only names what was set. */
function compact(body: Json): Json {
  const out: Json = {};
  for (const k in body) if (body[k] !== undefined) out[k] = body[k];
  return out;
}

function part(p: ContentPart): Json {
  switch (p.type) {
    case 'text':
      return { type: 'text', text: p.text };
    case 'image_url':
      return { type: 'image_url', image_url: compact({ url: p.url, detail: p.detail }) };
    case 'file':
      return { type: 'file', file: compact({ file_id: p.file_id, filename: p.filename, file_data: p.data_url }) };
    case 'input_audio':
      return { type: 'input_audio', input_audio: { data: p.data, format: p.format } };
  }
}

/**
 * A message with its cache breakpoint as `cache_control` on its last text part (its
 * text content made a one-part list), for an upstream that takes it (UPSTREAM_CACHE_CONTROL).
 */
function withCacheControl(wire: Json, m: ChatMessage): Json {
  const control = { type: 'ephemeral', ...(m.cacheBreakpoint?.ttl === '1h' ? { ttl: '1h' } : {}) };
  const content = wire.content;
  if (typeof content === 'string') return { ...wire, content: [{ type: 'text', text: content, cache_control: control }] };
  if (!Array.isArray(content)) return wire;
  const parts = content as Json[];
  let last = -1;
  parts.forEach((p, i) => p.type === 'text' && (last = i));
  return last < 0 ? wire : { ...wire, content: parts.map((p, i) => (i === last ? { ...p, cache_control: control } : p)) };
}

export function toWireMessage(m: ChatMessage, cacheControl = false): Json {
  const wire = wireMessage(m);
  return cacheControl && m.cacheBreakpoint ? withCacheControl(wire, m) : wire;
}

function wireMessage(m: ChatMessage): Json {
  switch (m.role) {
    case 'system':
    case 'developer':
      // Open-weight chat templates (vLLM, Ollama) know system/user/assistant/tool
      // only; OpenAI itself treats system as developer on models that want that.
      return { role: 'system', content: m.content };
    case 'user':
      return compact({ role: 'user', content: typeof m.content === 'string' ? m.content : m.content.map(part), name: m.name });
    case 'assistant':
      // `reasoning` is not sent back: OpenAI rejects unknown message fields, and
      // most templates drop earlier reasoning anyway.
      return compact({
        role: 'assistant',
        content: m.content,
        name: m.name,
        tool_calls: m.tool_calls?.length
          ? m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }))
          : undefined,
      });
    case 'tool':
      return { role: 'tool', content: m.content, tool_call_id: m.tool_call_id };
  }
}

function toolChoice(c: ToolChoice | undefined): unknown {
  if (c === undefined || typeof c === 'string') return c;
  return { type: 'function', function: { name: c.name } };
}

function responseFormat(f: ResponseFormat | undefined): unknown {
  if (f === undefined || f.type !== 'json_schema') return f;
  return { type: 'json_schema', json_schema: compact({ name: f.name, schema: f.schema, strict: f.strict }) };
}

const VERBOSITY_NOTE = { low: 'Answer length: brief.', high: 'Answer length: detailed.' } as const;

/**
 * Verbosity has no wire field outside OpenAI's newest models, so it becomes an
 * instruction. It joins the leading system message (or becomes one) instead of
 * being appended at the end: several chat templates reject a system message that
 * is not first.
 */
export function withVerbosity(messages: Json[], verbosity: ChatRequest['verbosity']): Json[] {
  if (verbosity !== 'low' && verbosity !== 'high') return messages;
  const note = VERBOSITY_NOTE[verbosity];
  const [first, ...rest] = messages;
  if (first?.role === 'system' && typeof first.content === 'string') {
    return [{ ...first, content: first.content === '' ? note : `${first.content}\n\n${note}` }, ...rest];
  }
  return [{ role: 'system', content: note }, ...messages];
}

/** Sets `body[name]` when `value` is defined, so the body names only what was set. */
function put(body: Json, name: string, value: unknown): void {
  if (value !== undefined) body[name] = value;
}

/** Fields chat and text completions share (built field by field: this runs on every call). */
function common(req: ChatRequest | CompletionRequest, upstreamModel: string, reasoning: boolean): Json {
  // A caller that wants the answer whole gets it from a non-streamed call: one JSON
  // body to parse instead of an event per token, and the upstream reports usage in it.
  const stream = req.stream !== false;
  const body: Json = { model: upstreamModel, stream };
  if (stream) body.stream_options = { include_usage: true };
  // One output cap, named as the server expects: OpenAI's reasoning models take only
  // max_completion_tokens (reasoning included); most other servers know only max_tokens.
  put(body, reasoning ? 'max_completion_tokens' : 'max_tokens', req.maxTokens);
  put(body, 'temperature', req.temperature);
  put(body, 'top_p', req.topP);
  put(body, 'top_k', req.topK);
  put(body, 'min_p', req.minP);
  put(body, 'top_a', req.topA);
  put(body, 'repetition_penalty', req.repetitionPenalty);
  put(body, 'presence_penalty', req.presencePenalty);
  put(body, 'frequency_penalty', req.frequencyPenalty);
  put(body, 'logit_bias', req.logitBias);
  put(body, 'seed', req.seed);
  if (req.stop?.length) body.stop = req.stop;
  put(body, 'response_format', responseFormat(req.responseFormat));
  // Non-reasoning servers reject or misread reasoning_effort, so only the models
  // configured as reasoning models get it.
  if (reasoning) put(body, 'reasoning_effort', req.reasoningEffort);
  put(body, 'user', req.user);
  return body;
}

export function toChatBody(req: ChatRequest, config: UpstreamConfig): Json {
  const upstreamModel = config.models[req.model];
  const reasoning = config.reasoningModels.includes(upstreamModel);
  const body = common(req, upstreamModel, reasoning);
  body.messages = withVerbosity(req.messages.map((m) => toWireMessage(m, config.cacheControl)), req.verbosity);
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: compact({ name: t.name, description: t.description, parameters: t.parameters, strict: t.strict }),
    }));
  }
  put(body, 'tool_choice', toolChoice(req.toolChoice));
  put(body, 'parallel_tool_calls', req.parallelToolCalls);
  put(body, 'logprobs', req.logprobs);
  put(body, 'top_logprobs', req.topLogprobs);
  return body;
}

/** Verbosity is not applied to a raw prompt: there is no instruction slot to put it in. */
export function toCompletionBody(req: CompletionRequest, config: UpstreamConfig): Json {
  const upstreamModel = config.models[req.model];
  const body = common(req, upstreamModel, config.reasoningModels.includes(upstreamModel));
  body.prompt = req.prompt;
  return body;
}
