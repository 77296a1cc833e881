// Turns parsed upstream chunks (chat.completion.chunk / text_completion) into stream
// parts. Stateful: text and reasoning are opened and closed around their deltas, each
// tool call's input opens once its name is known; usage and the finish reason are held
// back and sent in the `finish` part at the end, whatever order the upstream used
// (OpenAI sends usage after finish_reason, vLLM sometimes with it, OpenRouter in a
// trailing chunk with an empty delta).
import { randomBytes } from 'node:crypto';
import { SecretScrubber } from '../../../secrets.ts';
import { ProviderError } from '../../types.ts';
import type { FinishReason, StreamPart, TokenLogprob, Usage } from '../../types.ts';
import { answerError, errorInPayload, isRecord } from './errors.ts';

export type StreamKind = 'chat' | 'completion';

interface CallState {
  id: string;
  /** Opened (tool-input-start sent): its name is known. */
  started: boolean;
  /** Arguments that came before the name. */
  pending: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function newCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

export function mapFinishReason(raw: string | undefined, sawToolCall: boolean): FinishReason {
  let reason: FinishReason;
  switch (raw) {
    case 'length':
    case 'max_tokens':
      reason = 'length';
      break;
    case 'tool_calls':
    case 'function_call': // legacy functions API
      reason = 'tool_calls';
      break;
    case 'content_filter':
      reason = 'content_filter';
      break;
    default:
      reason = 'stop'; // 'stop', 'eos', missing, anything unknown
  }
  // Older Ollama (and some llama.cpp builds) say 'stop' after emitting tool calls;
  // clients loop on 'tool_calls', so correct it.
  if (reason === 'stop' && sawToolCall) reason = 'tool_calls';
  return reason;
}

function mapLogprobs(raw: unknown): TokenLogprob[] | undefined {
  if (!isRecord(raw) || !Array.isArray(raw.content) || raw.content.length === 0) return undefined;
  const bytes = (v: unknown): number[] | null => (Array.isArray(v) ? v.filter((b): b is number => typeof b === 'number') : null);
  return raw.content.filter(isRecord).map((t) => ({
    token: typeof t.token === 'string' ? t.token : '',
    logprob: num(t.logprob) ?? 0,
    bytes: bytes(t.bytes),
    top_logprobs: (Array.isArray(t.top_logprobs) ? t.top_logprobs : []).filter(isRecord).map((alt) => ({
      token: typeof alt.token === 'string' ? alt.token : '',
      logprob: num(alt.logprob) ?? 0,
      bytes: bytes(alt.bytes),
    })),
  }));
}

/** `content` is a string almost everywhere; a few servers stream a list of text parts. */
function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content === '' ? undefined : content;
  if (Array.isArray(content)) {
    const joined = content
      .filter(isRecord)
      .map((p) => (typeof p.text === 'string' ? p.text : ''))
      .join('');
    return joined === '' ? undefined : joined;
  }
  return undefined;
}

export class StreamMapper {
  private finishRaw: string | undefined;
  private usage: Usage | undefined;
  private cost: number | undefined;
  private readonly calls = new Map<number, CallState>();
  private lastCallIndex = -1;
  /** The open text or reasoning part, if any, and how many have been opened. */
  private open: { type: 'text' | 'reasoning'; id: string } | null = null;
  private opened = 0;

  constructor(
    private readonly kind: StreamKind,
    private readonly makeCallId: () => string = newCallId,
    /** Cleans an upstream error's text before it is passed on (the provider's: the key, headers, our secrets). */
    private readonly scrubber = new SecretScrubber(),
  ) {}

  /** Parts for one parsed `data:` payload. Throws ProviderError on an error payload. */
  push(payload: unknown): StreamPart[] {
    const error = errorInPayload(payload);
    if (error) throw answerError(error, this.scrubber);
    if (!isRecord(payload)) throw new ProviderError('upstream sent a stream chunk that is not a JSON object');

    const out: StreamPart[] = [];
    const choices = Array.isArray(payload.choices) ? payload.choices : [];
    for (const choice of choices) {
      if (!isRecord(choice)) continue;
      if (num(choice.index) !== undefined && choice.index !== 0) continue; // we always ask for n = 1
      if (this.kind === 'chat') this.chatChoice(choice, out);
      else this.completionChoice(choice, out);
      const finish = str(choice.finish_reason);
      if (finish) this.finishRaw = finish;
      if (isRecord(choice.usage)) this.takeUsage(choice.usage);
    }
    // Usage may come in a final chunk with `choices: []` (OpenAI), in the finishing
    // chunk (some vLLM versions), after it (OpenRouter), or cumulatively in every
    // chunk (vLLM continuous usage stats): the last one wins.
    if (isRecord(payload.usage)) this.takeUsage(payload.usage);
    return out;
  }

  /**
   * The closing parts: what is still open is closed, then the finish with usage and
   * cost. `sawDone` says whether `[DONE]` arrived; a stream that ends with neither it
   * nor a finish reason was cut off.
   */
  end(sawDone: boolean): StreamPart[] {
    if (!sawDone && this.finishRaw === undefined) {
      throw new ProviderError('upstream stream ended before the answer finished', undefined, false);
    }
    const out: StreamPart[] = [];
    this.closeOpen(out);
    for (const call of this.calls.values()) {
      // A call whose name never came is still delivered, nameless, rather than lost.
      if (!call.started) out.push({ type: 'tool-input-start', id: call.id, toolName: '' }, ...(call.pending ? [{ type: 'tool-input-delta' as const, id: call.id, delta: call.pending }] : []));
      out.push({ type: 'tool-input-end', id: call.id });
    }
    out.push({
      type: 'finish',
      reason: mapFinishReason(this.finishRaw, this.calls.size > 0),
      ...(this.usage ? { usage: this.usage } : {}),
      ...(this.cost !== undefined ? { costUsd: this.cost } : {}),
    });
    return out;
  }

  private closeOpen(out: StreamPart[]): void {
    if (!this.open) return;
    out.push({ type: this.open.type === 'text' ? 'text-end' : 'reasoning-end', id: this.open.id });
    this.open = null;
  }

  /** The id of the open part of this type, opening it (and closing the other) if needed. */
  private openPart(type: 'text' | 'reasoning', out: StreamPart[]): string {
    if (this.open?.type === type) return this.open.id;
    this.closeOpen(out);
    this.open = { type, id: `${type}-${this.opened++}` };
    out.push({ type: type === 'text' ? 'text-start' : 'reasoning-start', id: this.open.id });
    return this.open.id;
  }

  /**
   * All events of a non-streamed answer (`chat.completion` / `text_completion`
   * object), for servers that ignore `stream: true`.
   */
  whole(payload: unknown): StreamPart[] {
    const error = errorInPayload(payload);
    if (error) throw answerError(error, this.scrubber, 'in its answer');
    if (!isRecord(payload)) throw new ProviderError('upstream sent a response that is not a JSON object');
    const out: StreamPart[] = [];
    const choices = Array.isArray(payload.choices) ? payload.choices : [];
    for (const choice of choices) {
      if (!isRecord(choice)) continue;
      if (num(choice.index) !== undefined && choice.index !== 0) continue; // we always ask for n = 1
      // A whole message reads as one delta; its tool calls carry no index, their position is it.
      if (this.kind === 'chat') this.chatChoice(choice, out, isRecord(choice.message) ? choice.message : {});
      else this.completionChoice(choice, out);
      const finish = str(choice.finish_reason);
      if (finish) this.finishRaw = finish;
    }
    if (isRecord(payload.usage)) this.takeUsage(payload.usage);
    for (const event of this.end(true)) out.push(event);
    return out;
  }

  /** `message`: a non-streamed answer's whole message, read as the delta. */
  private chatChoice(choice: Record<string, unknown>, out: StreamPart[], message?: Record<string, unknown>): void {
    const delta = message ?? (isRecord(choice.delta) ? choice.delta : {});
    // vLLM/DeepSeek say reasoning_content, OpenRouter/Ollama/newer vLLM say reasoning;
    // some servers send both with the same text, so take one.
    const reasoning = str(delta.reasoning_content) ?? str(delta.reasoning);
    if (reasoning) out.push({ type: 'reasoning-delta', id: this.openPart('reasoning', out), delta: reasoning });

    // A refusal (OpenAI structured outputs) is shown to the caller as text rather than lost.
    const text = textOf(delta.content) ?? str(delta.refusal);
    const logprobs = mapLogprobs(choice.logprobs);
    if (text !== undefined || logprobs) {
      const id = this.openPart('text', out);
      out.push(logprobs ? { type: 'text-delta', id, delta: text ?? '', logprobs } : { type: 'text-delta', id, delta: text ?? '' });
    }

    if (Array.isArray(delta.tool_calls)) {
      const calls = delta.tool_calls;
      for (let i = 0; i < calls.length; i++) {
        const call: unknown = calls[i];
        if (isRecord(call)) this.toolFragment(call, out, message && num(call.index) === undefined ? i : undefined);
      }
    }
    if (isRecord(delta.function_call)) {
      this.toolFragment({ index: 0, function: delta.function_call }, out); // legacy functions API
    }
  }

  private completionChoice(choice: Record<string, unknown>, out: StreamPart[]): void {
    const text = str(choice.text);
    if (text) out.push({ type: 'text-delta', id: this.openPart('text', out), delta: text });
  }

  /** `position`: the call's place in a whole message, its index when it names none. */
  private toolFragment(raw: Record<string, unknown>, out: StreamPart[], position?: number): void {
    const fn = isRecord(raw.function) ? raw.function : {};
    const id = str(raw.id);
    const name = str(fn.name);
    // Arguments are JSON text on the wire; a few servers send an object instead.
    const args =
      typeof fn.arguments === 'string' ? fn.arguments : isRecord(fn.arguments) ? JSON.stringify(fn.arguments) : '';

    const index = position ?? this.indexOf(raw, id);
    this.lastCallIndex = index;
    this.closeOpen(out);
    let state = this.calls.get(index);
    if (!state) {
      // First fragment of this call: it carries the id (made up if the server sent none) and, mostly, the name.
      state = { id: id ?? this.makeCallId(), started: false, pending: '' };
      this.calls.set(index, state);
    }
    if (!state.started) {
      if (!name) {
        state.pending += args; // the input opens once the name is known
        return;
      }
      state.started = true;
      out.push({ type: 'tool-input-start', id: state.id, toolName: name });
      const first = state.pending + args;
      state.pending = '';
      if (first) out.push({ type: 'tool-input-delta', id: state.id, delta: first });
      return;
    }
    if (args !== '') out.push({ type: 'tool-input-delta', id: state.id, delta: args });
  }

  /**
   * The call index of a fragment. Servers that omit `index` (single calls, older
   * Ollama) get 0; when they omit it but a fragment brings a new id, that is a new
   * call, so it takes the next free index.
   */
  private indexOf(raw: Record<string, unknown>, id: string | undefined): number {
    const given = num(raw.index);
    if (given !== undefined && given >= 0) return Math.floor(given);
    if (this.lastCallIndex === -1) return 0;
    const current = this.calls.get(this.lastCallIndex);
    if (id !== undefined && current !== undefined && current.id !== id) return Math.max(...this.calls.keys()) + 1;
    return this.lastCallIndex;
  }

  private takeUsage(raw: Record<string, unknown>): void {
    const input = num(raw.prompt_tokens);
    const output = num(raw.completion_tokens);
    if (input === undefined && output === undefined) return;
    const usage: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
    const reasoning = isRecord(raw.completion_tokens_details) ? num(raw.completion_tokens_details.reasoning_tokens) : undefined;
    const cached = isRecord(raw.prompt_tokens_details) ? num(raw.prompt_tokens_details.cached_tokens) : undefined;
    if (reasoning !== undefined) usage.reasoningTokens = reasoning;
    if (cached !== undefined) usage.cachedInputTokens = cached;
    this.usage = usage;
    const cost = num(raw.cost); // OpenRouter: what this call cost, in USD
    if (cost !== undefined && cost >= 0) this.cost = cost;
  }
}
