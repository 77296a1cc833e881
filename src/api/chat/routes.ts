// POST /chat/completions: map the checked body to a provider request, reserve credits,
// run directly or through the assistant's tool loop, answer as one object or as SSE,
// settle credits to what ran, and keep the completion when `store` is true.
import { createChatCompletion } from '../../contract/endpoints/chat.ts';
import type { ChatModel } from '../../contract/models.ts';
import { fromMicro } from '../../accounts/money.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import { outputCap } from '../../keys/key-limits.ts';
import type { Router } from '../../http/router.ts';
import type { ProviderEvent } from '../../providers/types.ts';
import { consume, streamAnswer } from '../stream-answer.ts';
import { answersDirectly, emptyToolRegistry, runAgent, type ToolRegistry } from './agent-loop.ts';
import { eventChunk, roleChunk, type ChunkContext } from './chunks.ts';
import { collect, Collector, completionObject, newCompletionId, usageObject } from './completion-object.ts';
import { resolveFileParts } from '../files/resolve-parts.ts';
import { toProviderRequest } from './to-provider-request.ts';

/** Where `store: true` completions go (api/chat/stored-completions.ts). */
export interface CompletionStore {
  save(input: { accountId: string; completion: Record<string, unknown>; requestMessages: unknown[]; metadata: Record<string, string> | null }): Promise<unknown>;
}

export function chatRoutes(router: Router, stored: CompletionStore, registry: ToolRegistry = emptyToolRegistry): void {
  const services = router.services;

  router.endpoint(createChatCompletion, async ({ body, key, request, reply }) => {
    const model = body.model as ChatModel;
    const maxTokens = outputCap(body.max_completion_tokens ?? body.max_tokens, key.maxOutputTokens, services.config.defaultMaxOutputTokens);
    const files = await resolveFileParts(body.messages, key.accountId, services.files, services.config.bodyLimitBytes);
    const mapped = toProviderRequest(body, maxTokens, files);
    mapped.request.requestId = request.id; // the upstream's failure warning names it
    const fileContents = [...files.values()].map((f) => f.text ?? f.dataUrl);
    const inputEstimate = estimateInputTokens([body.messages, body.tools ?? body.functions, body.response_format, fileContents], mapped.attachments);
    const meter = await Run.open(services, request.state, { key, model, input: inputEstimate, maxOutputTokens: maxTokens });
    const signal = meter.signal;
    const source: AsyncIterable<ProviderEvent> = answersDirectly(body, key)
      ? services.chat.provider.chat(mapped.request, signal)
      : runAgent(services.chat.provider, mapped.request, registry.available(key), signal, {
          // Each further step holds credits for its own input and output cap first.
          beforeStep: (messages) => meter.extend(estimateInputTokens(messages, mapped.attachments).bound, maxTokens),
        });
    const events = meter.meter(source);
    const id = newCompletionId();
    const created = Math.floor(Date.now() / 1000);
    const keep = (completion: Record<string, unknown>) =>
      body.store ? stored.save({ accountId: key.accountId, completion, requestMessages: body.messages ?? [], metadata: body.metadata ?? null }) : undefined;

    if (!body.stream) {
      const ran = await consume(meter, signal, () => collect(events, body.logprobs === true));
      if (!ran) return reply;
      const completion = completionObject({ id, created, model, collected: ran.value, legacyFunctions: mapped.legacyFunctions, usage: ran.usage, svc: fromMicro(ran.credits) });
      await keep(completion);
      return completion;
    }

    const ctx: ChunkContext = { id, created, model, legacyFunctions: mapped.legacyFunctions, includeUsage: body.stream_options?.include_usage === true };
    const collector = new Collector(false);
    let finished = false;
    return streamAnswer({
      reply,
      meter,
      signal,
      events,
      head: [roleChunk(ctx)],
      chunk: (e) => {
        collector.add(e);
        if (e.type === 'finish') finished = true;
        return eventChunk(ctx, e);
      },
      tail: (credits, usage) => (ctx.includeUsage ? [{ ...usageChunkBase(ctx), usage: usageObject(usage, fromMicro(credits)) }] : []),
      done: async (credits, usage) => {
        if (finished) await keep(completionObject({ id, created, model, collected: collector.result(), legacyFunctions: mapped.legacyFunctions, usage, svc: fromMicro(credits) }));
      },
    });
  });
}

function usageChunkBase(ctx: ChunkContext) {
  return { id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, service_tier: 'default', system_fingerprint: 'agent-api', choices: [] };
}
