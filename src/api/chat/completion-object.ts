// Provider events → the non-streaming chat.completion object (reference shape, plus
// `svc`: the credits the response used).
import { newId } from '../../ids.ts';
import type { FinishReason, ProviderEvent, TokenLogprob, Usage } from '../../providers/types.ts';

export interface Collected {
  content: string;
  reasoning: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  logprobs: TokenLogprob[] | null;
  finishReason: FinishReason;
}

/** Accumulates a provider stream into the pieces of one assistant message. */
export class Collector {
  private readonly out: Collected;

  constructor(wantLogprobs: boolean) {
    this.out = { content: '', reasoning: '', toolCalls: [], logprobs: wantLogprobs ? [] : null, finishReason: 'stop' };
  }

  add(e: ProviderEvent): void {
    const out = this.out;
    switch (e.type) {
      case 'text':
        out.content += e.delta;
        if (out.logprobs && e.logprobs) out.logprobs.push(...e.logprobs);
        break;
      case 'reasoning':
        out.reasoning += e.delta;
        break;
      case 'tool_call': {
        const call = (out.toolCalls[e.index] ??= { id: '', name: '', arguments: '' });
        if (e.id) call.id = e.id;
        if (e.name) call.name += e.name;
        call.arguments += e.argumentsDelta;
        break;
      }
      case 'finish':
        out.finishReason = e.reason;
        break;
    }
  }

  result(): Collected {
    return { ...this.out, toolCalls: this.out.toolCalls.filter(Boolean) };
  }
}

export async function collect(events: AsyncIterable<ProviderEvent>, wantLogprobs: boolean): Promise<Collected> {
  const collector = new Collector(wantLogprobs);
  for await (const e of events) collector.add(e);
  return collector.result();
}

export const newCompletionId = () => newId('chatcmpl-');

export function usageObject(usage: Usage, svc?: number) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    ...(svc === undefined ? {} : { svc }),
  };
}

export function completionObject(opts: { id: string; created: number; model: string; collected: Collected; legacyFunctions: boolean; usage: Usage; svc: number }) {
  const { collected: c, legacyFunctions } = opts;
  const calls = c.toolCalls;
  const message: Record<string, unknown> = { role: 'assistant', content: calls.length && !c.content ? null : c.content, refusal: null, annotations: [] };
  if (c.reasoning) message.reasoning_content = c.reasoning;
  let finish: string = c.finishReason;
  if (calls.length && legacyFunctions) {
    message.function_call = { name: calls[0]!.name, arguments: calls[0]!.arguments };
    if (finish === 'tool_calls') finish = 'function_call';
  } else if (calls.length) {
    message.tool_calls = calls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } }));
  }
  return {
    id: opts.id,
    object: 'chat.completion' as const,
    created: opts.created,
    model: opts.model,
    choices: [{ index: 0, message, logprobs: c.logprobs ? { content: c.logprobs, refusal: null } : null, finish_reason: finish }],
    usage: usageObject(opts.usage),
    service_tier: 'default',
    system_fingerprint: 'agent-api',
    svc: opts.svc,
  };
}
