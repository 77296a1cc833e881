// Stream parts → chat.completion.chunk objects in SPEC's order: a role chunk,
// content / reasoning_content / tool_calls fragments, a finish chunk; the usage chunk
// (with usage.svc) and [DONE] are written by the caller once credits are settled.
import type { StreamPart } from '../../providers/types.ts';

export interface ChunkContext {
  id: string;
  created: number;
  model: string;
  legacyFunctions: boolean;
  /** With stream_options.include_usage every chunk carries `usage: null` until the last. */
  includeUsage: boolean;
  /** The JSON around the choice, the same in every chunk of the stream: serialized once. */
  frame?: { head: string; tail: string };
  /** Each client tool call's index in the message, by call id (in the order they opened). */
  calls?: Map<string, number>;
}

function frameOf(ctx: ChunkContext): { head: string; tail: string } {
  if (!ctx.frame) {
    const fields = { id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, service_tier: 'default', system_fingerprint: 'agent-api' };
    ctx.frame = { head: `${JSON.stringify(fields).slice(0, -1)},"choices":[`, tail: ctx.includeUsage ? '],"usage":null}' : ']}' };
  }
  return ctx.frame;
}

/**
 * One chat.completion.chunk as JSON text (keys in the reference's order). Built around
 * the choice rather than by serializing a whole object: a stream has a chunk per token.
 */
export function chunk(ctx: ChunkContext, delta: Record<string, unknown>, finishReason: string | null = null, logprobs: unknown = null): string {
  const { head, tail } = frameOf(ctx);
  const finish = finishReason === null ? 'null' : JSON.stringify(finishReason);
  return `${head}{"index":0,"delta":${JSON.stringify(delta)},"logprobs":${logprobs === null ? 'null' : JSON.stringify(logprobs)},"finish_reason":${finish}}${tail}`;
}

export function roleChunk(ctx: ChunkContext) {
  return chunk(ctx, { role: 'assistant', content: '', refusal: null });
}

/** The chunk for one part, or null for parts that have no chunk (starts, ends, results). */
export function eventChunk(ctx: ChunkContext, e: StreamPart) {
  switch (e.type) {
    case 'text-delta':
      return chunk(ctx, { content: e.delta }, null, e.logprobs ? { content: e.logprobs, refusal: null } : null);
    case 'reasoning-delta':
      return chunk(ctx, { reasoning_content: e.delta });
    case 'tool-input-start': {
      if (e.providerExecuted) return null; // the service's own tool: not the client's call
      const calls = (ctx.calls ??= new Map());
      const index = calls.size;
      calls.set(e.id, index);
      if (ctx.legacyFunctions) return index > 0 ? null : chunk(ctx, { function_call: { name: e.toolName, arguments: '' } }); // the legacy form carries one call
      return chunk(ctx, { tool_calls: [{ index, id: e.id, type: 'function', function: { name: e.toolName, arguments: '' } }] });
    }
    case 'tool-input-delta': {
      const index = ctx.calls?.get(e.id);
      if (index === undefined) return null;
      if (ctx.legacyFunctions) return index > 0 ? null : chunk(ctx, { function_call: { arguments: e.delta } });
      return chunk(ctx, { tool_calls: [{ index, function: { arguments: e.delta } }] });
    }
    case 'finish': {
      const reason = ctx.legacyFunctions && e.reason === 'tool_calls' ? 'function_call' : e.reason;
      return chunk(ctx, {}, reason);
    }
    default:
      return null;
  }
}
