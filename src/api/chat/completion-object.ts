// Stream parts → the non-streaming chat.completion object (reference shape, plus
// `svc`: the credits the response used).
import { newId } from '../../ids.ts';
import type { FinishReason, StreamPart, TokenLogprob, Usage } from '../../providers/types.ts';
import type { CitedSources } from '../../tools/web-search/citations.ts';

export interface Collected {
  content: string;
  reasoning: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  logprobs: TokenLogprob[] | null;
  finishReason: FinishReason;
  /** url_citation annotations of the content (the assistant's web sources). */
  annotations: ChatAnnotation[];
}

/** A chat message's url_citation annotation (reference ChatCompletionResponseMessage.annotations). */
export interface ChatAnnotation {
  type: 'url_citation';
  url_citation: { end_index: number; start_index: number; title: string; url: string };
}

/** The url_citation annotations of an answer, as chat shows them. */
export function chatAnnotations(sources: CitedSources | null, content: string): ChatAnnotation[] {
  if (!sources || sources.size === 0) return [];
  return sources.citations(content).map((c) => ({ type: 'url_citation', url_citation: { end_index: c.end_index, start_index: c.start_index, title: c.title, url: c.url } }));
}

/** Accumulates a provider stream into the pieces of one assistant message. */
export class Collector {
  private readonly out: Collected;
  /** Tool calls by id, in the order they opened (their index in the message). */
  private readonly calls = new Map<string, { id: string; name: string; arguments: string }>();

  constructor(
    wantLogprobs: boolean,
    /** Where the web tools' sources are kept (tool results), when the assistant has tools. */
    private readonly sources: CitedSources | null = null,
  ) {
    this.out = { content: '', reasoning: '', toolCalls: [], logprobs: wantLogprobs ? [] : null, finishReason: 'stop', annotations: [] };
  }

  add(e: StreamPart): void {
    const out = this.out;
    switch (e.type) {
      case 'text-delta':
        out.content += e.delta;
        if (out.logprobs && e.logprobs) out.logprobs.push(...e.logprobs);
        break;
      case 'reasoning-delta':
        out.reasoning += e.delta;
        break;
      case 'tool-input-start': {
        // A tool the service ran is not the client's to answer.
        if (e.providerExecuted) break;
        const call = { id: e.id, name: e.toolName, arguments: '' };
        this.calls.set(e.id, call);
        out.toolCalls.push(call);
        break;
      }
      case 'tool-input-delta': {
        const call = this.calls.get(e.id);
        if (call) call.arguments += e.delta;
        break;
      }
      case 'tool-result':
        this.sources?.add(e.data);
        break;
      case 'finish':
        out.finishReason = e.reason;
        break;
    }
  }

  result(): Collected {
    return { ...this.out, toolCalls: [...this.out.toolCalls], annotations: chatAnnotations(this.sources, this.out.content) };
  }
}

export async function collect(events: AsyncIterable<StreamPart>, wantLogprobs: boolean, sources: CitedSources | null = null): Promise<Collected> {
  const collector = new Collector(wantLogprobs, sources);
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
  const message: Record<string, unknown> = { role: 'assistant', content: calls.length && !c.content ? null : c.content, refusal: null, annotations: c.annotations };
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
