// Stream parts → the messages-style surface's wire shapes: the events of a streamed
// message (content_block_start / _delta / _stop per block, thinking closed by its
// signature_delta) and, from the same blocks, the whole Message object. One encoder for
// both, so a streamed answer accumulates to exactly the non-streamed one.
import type { FinishReason, StreamPart, Usage } from '../../providers/types.ts';
import type { ThinkingSignatures } from './thinking-signature.ts';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

export interface MessageContext {
  id: string;
  /** The model as the request named it (echoed). */
  model: string;
  accountId: string;
  signatures: ThinkingSignatures;
  thinking: 'off' | 'shown' | 'omitted';
  /** The input tokens counted before the provider ran (message_start's usage). */
  inputTokens: number;
  stopSequences: readonly string[];
  /** The offline prefix cache's verdict on this request's prefix, null without one (or on an upstream). */
  cache: { tokens: number; use: 'created' | 'read' } | null;
}

type Block = Record<string, unknown>;
type Event = Record<string, unknown> & { type: string };
const NONE: Event[] = [];

export function stopReasonFor(reason: FinishReason, stopSequence: string | null): StopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return stopSequence !== null ? 'stop_sequence' : 'end_turn';
  }
}

type CacheUse = MessageContext['cache'];

/**
 * The counters of a message's usage (message_delta carries these, cumulative, and a
 * client overwrites with them). input_tokens is what follows the cached prefix, as the
 * vendor counts it: input + creation + read is the whole input.
 */
function counters(usage: Usage, cache: CacheUse) {
  const read = cache?.use === 'read' ? cache.tokens : (usage.cachedInputTokens ?? 0);
  const created = cache?.use === 'created' ? cache.tokens : 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - read - created),
    cache_creation_input_tokens: created,
    cache_read_input_tokens: read,
    output_tokens: usage.outputTokens,
  };
}

/** The usage object of a message (message_start's holds the same fields, so a stream accumulates to the whole message). */
export function usageObject(usage: Usage, cache: CacheUse) {
  const c = counters(usage, cache);
  return { ...c, cache_creation: { ephemeral_5m_input_tokens: c.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard' };
}

/** Turns parts into events, and keeps the blocks they make for the whole message. */
export class MessageEncoder {
  readonly content: Block[] = [];
  /** The open block of each part id (text, reasoning, tool input), and its index. */
  private readonly open = new Map<string, { index: number; block: Block; json?: string }>();
  finish: { reason: FinishReason; stopSequence: string | null } | null = null;
  private hasToolUse = false;
  /** Off for a whole (non-streamed) answer: the blocks are built, no event objects per token. */
  private emit = true;

  constructor(private readonly ctx: MessageContext) {}

  messageStart(): Event {
    return {
      type: 'message_start',
      message: {
        id: this.ctx.id,
        type: 'message',
        role: 'assistant',
        model: this.ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        container: null,
        usage: usageObject({ inputTokens: this.ctx.inputTokens, outputTokens: 1 }, this.ctx.cache),
      },
    };
  }

  private start(id: string, block: Block): Event {
    const index = this.content.length;
    this.content.push(block);
    this.open.set(id, { index, block });
    return { type: 'content_block_start', index, content_block: { ...block } };
  }

  /** Builds the blocks of a whole answer from one part, without its events. */
  collect(e: StreamPart): void {
    this.emit = false;
    this.events(e);
  }

  /** The events for one part (none for parts this surface does not show). */
  events(e: StreamPart): Event[] {
    switch (e.type) {
      case 'text-start':
        return [this.start(e.id, { type: 'text', text: '' })];
      case 'text-delta': {
        const o = this.open.get(e.id);
        if (!o) return [];
        o.block.text = (o.block.text as string) + e.delta;
        if (!this.emit) return NONE;
        return [{ type: 'content_block_delta', index: o.index, delta: { type: 'text_delta', text: e.delta } }];
      }
      case 'reasoning-start':
        return this.ctx.thinking === 'off' ? [] : [this.start(e.id, { type: 'thinking', thinking: '', signature: '' })];
      case 'reasoning-delta': {
        const o = this.open.get(e.id);
        if (!o) return [];
        if (this.ctx.thinking === 'omitted') return [];
        o.block.thinking = (o.block.thinking as string) + e.delta;
        if (!this.emit) return NONE;
        return [{ type: 'content_block_delta', index: o.index, delta: { type: 'thinking_delta', thinking: e.delta } }];
      }
      case 'reasoning-end': {
        const o = this.open.get(e.id);
        if (!o) return [];
        this.open.delete(e.id);
        const signature = this.ctx.signatures.sign(this.ctx.accountId, o.block.thinking as string);
        o.block.signature = signature;
        return [
          { type: 'content_block_delta', index: o.index, delta: { type: 'signature_delta', signature } },
          { type: 'content_block_stop', index: o.index },
        ];
      }
      case 'tool-input-start': {
        if (e.providerExecuted) return [];
        this.hasToolUse = true;
        const event = this.start(e.id, { type: 'tool_use', id: e.id, name: e.toolName, input: {} });
        this.open.get(e.id)!.json = '';
        return [event];
      }
      case 'tool-input-delta': {
        const o = this.open.get(e.id);
        if (!o || o.json === undefined) return [];
        o.json += e.delta;
        return e.delta === '' || !this.emit ? [] : [{ type: 'content_block_delta', index: o.index, delta: { type: 'input_json_delta', partial_json: e.delta } }];
      }
      case 'text-end':
      case 'tool-input-end': {
        const o = this.open.get(e.id);
        if (!o) return [];
        this.open.delete(e.id);
        if (o.json !== undefined) o.block.input = toolInput(o.json);
        return [{ type: 'content_block_stop', index: o.index }];
      }
      case 'finish': {
        const stopSequence = e.reason === 'stop' ? matchedStop(this.content, this.ctx.stopSequences, e.stopSequence) : null;
        // A provider that says "stop" after a client tool call still ends the turn for the tool.
        this.finish = { reason: this.hasToolUse && e.reason === 'stop' ? 'tool_calls' : e.reason, stopSequence };
        // Blocks a provider left open are closed before the message ends.
        const closing: Event[] = [];
        for (const [id, o] of this.open) {
          this.open.delete(id);
          if (o.json !== undefined) o.block.input = toolInput(o.json);
          if (o.block.type === 'thinking') {
            o.block.signature = this.ctx.signatures.sign(this.ctx.accountId, o.block.thinking as string);
            closing.push({ type: 'content_block_delta', index: o.index, delta: { type: 'signature_delta', signature: o.block.signature } });
          }
          closing.push({ type: 'content_block_stop', index: o.index });
        }
        return closing;
      }
      default:
        return [];
    }
  }

  get stopReason(): StopReason {
    return this.finish ? stopReasonFor(this.finish.reason, this.finish.stopSequence) : 'end_turn';
  }

  messageDelta(usage: Usage): Event {
    return { type: 'message_delta', delta: { stop_reason: this.stopReason, stop_sequence: this.finish?.stopSequence ?? null, stop_details: null }, usage: counters(usage, this.ctx.cache) };
  }

  /** The whole message, from the blocks the events built. */
  message(usage: Usage): Record<string, unknown> {
    return {
      id: this.ctx.id,
      type: 'message',
      role: 'assistant',
      model: this.ctx.model,
      content: this.content,
      stop_reason: this.stopReason,
      stop_sequence: this.finish?.stopSequence ?? null,
      stop_details: null,
      container: null,
      usage: usageObject(usage, this.ctx.cache),
    };
  }
}

/** A tool call's arguments as the object `input` must be (a provider's malformed or non-object JSON becomes `{}`). */
function toolInput(json: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(json === '' ? '{}' : json);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Which stop sequence ended the text: the one the provider named, else none (a provider
 * that stops at a sequence leaves it out of the text, so only it can tell).
 */
function matchedStop(_content: Block[], sequences: readonly string[], named: string | undefined): string | null {
  if (named !== undefined && sequences.includes(named)) return named;
  return null;
}
