// POST /chat/completions: map the checked body to a provider request, reserve credits,
// run directly or through the assistant's tool loop, answer as one object or as SSE,
// settle credits to what ran, and keep the completion when `store` is true.
import { createChatCompletion } from '../../contract/endpoints/chat.ts';
import { fromMicro } from '../../accounts/money.ts';
import type { Router } from '../../http/router.ts';
import { streamAnswer } from '../stream-answer.ts';
import type { ToolRegistry } from '../../tools/registry.ts';
import { chatOnce, startChat, type CompletionStore } from './chat-call.ts';
import { chunk, eventChunk, roleChunk, type ChunkContext } from './chunks.ts';
import { Collector, completionObject, usageObject } from './completion-object.ts';

export type { CompletionStore } from './chat-call.ts';

export function chatRoutes(router: Router, stored: CompletionStore, registry: ToolRegistry): void {
  const services = router.services;

  router.endpoint(createChatCompletion, async ({ body, key, request, reply }) => {
    const chat = await startChat(services, stored, registry, request.state, body, key);
    if (!body.stream) return (await chatOnce(chat, body)) ?? reply;

    const { id, created, model, legacyFunctions } = chat;
    const ctx: ChunkContext = { id, created, model, legacyFunctions, includeUsage: body.stream_options?.include_usage === true };
    const collector = new Collector(false, chat.sources);
    let finished = false;
    return streamAnswer({
      reply,
      meter: chat.run,
      signal: chat.run.signal,
      events: chat.events,
      head: [roleChunk(ctx)],
      chunk: (e) => {
        collector.add(e);
        if (e.type !== 'finish') return eventChunk(ctx, e);
        finished = true;
        // The answer's url_citation annotations, in a chunk of their own just before the finish chunk.
        const annotations = chat.sources ? collector.result().annotations : [];
        return annotations.length > 0 ? [chunk(ctx, { annotations }), eventChunk(ctx, e)] : eventChunk(ctx, e);
      },
      tail: (credits, usage) => (ctx.includeUsage ? [{ ...usageChunkBase(ctx), usage: usageObject(usage, fromMicro(credits)) }] : []),
      done: async (credits, usage) => {
        if (finished) await chat.keep(completionObject({ id, created, model, collected: collector.result(), legacyFunctions, usage, svc: fromMicro(credits) }));
      },
    });
  });
}

function usageChunkBase(ctx: ChunkContext) {
  return { id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, service_tier: 'default', system_fingerprint: 'agent-api', choices: [] };
}
