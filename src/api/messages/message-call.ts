// One message, whoever asked for it (an HTTP request, streamed or not; a batch line):
// the model that runs is chosen (`agent` and `agent-think` as named, any other name on
// the surface's configured model), the body becomes the ChatRequest chat uses, the Run
// reserves credits before any model runs, and the same chat provider answers. Its parts
// are encoded by message-events.ts.
import type { ChatModel } from '../../contract/models.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import { modelNotAllowed } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { outputCap } from '../../keys/key-limits.ts';
import { callSignal, type Call } from '../../pipeline/call.ts';
import { countInputTokens } from '../../providers/inline/offline/plan.ts';
import type { StreamPart } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { newId } from '../../ids.ts';
import { addPdfText, resolveFiles } from '../files/resolve-parts.ts';
import { messageInput, moderateInput } from '../moderations/moderate-input.ts';
import { consume } from '../stream-answer.ts';
import { MessageEncoder, type MessageContext } from './message-events.ts';
import { cachePrefix, MIN_CACHEABLE_TOKENS, type PrefixCache } from './prefix-cache.ts';
import type { ThinkingSignatures } from './thinking-signature.ts';

/** What the surface keeps between requests: the key that signs thinking, the offline prefix cache. */
export interface MessagesDeps {
  signatures: ThinkingSignatures;
  prefixCache: PrefixCache;
}
import { fileSourceIds, toChatRequest, type CountBody, type MessageBody, type MappedMessage } from './to-chat-request.ts';

export interface StartedMessage {
  readonly run: Run;
  readonly events: AsyncIterable<StreamPart>;
  readonly encoder: MessageEncoder;
}

/** The chat model a request's `model` runs on: ours by name, a vendor name on the configured one (with thinking: the thinking one). */
export function modelFor(services: Services, body: CountBody): ChatModel {
  if (body.model === 'agent' || body.model === 'agent-think') return body.model;
  const thinking = (body.thinking as { type?: string } | undefined)?.type;
  return thinking === 'enabled' || thinking === 'adaptive' ? services.config.messagesThinkingModel : services.config.messagesModel;
}

/** Maps a body for the model that runs, after checking the key may use it (a restricted key's list names our models). */
async function mapFor(services: Services, deps: MessagesDeps, body: CountBody, key: KeyRecord, maxTokens: number): Promise<MappedMessage & { cached: { tokens: number; body: Record<string, unknown>; ttlMs: number } | null }> {
  const model = modelFor(services, body);
  if (key.models && !key.models.includes(model)) {
    const why = model === body.model ? '' : ` (the model '${body.model}' runs on '${model}' here)`;
    throw modelNotAllowed(`This API key is not allowed to use the model '${model}'${why}.`, 'model');
  }
  const prefix = cachePrefix(body as Record<string, unknown>);
  const files = await resolveFiles(fileSourceIds(body), key.accountId, services.files, services.config.bodyLimitBytes);
  // The offline engine reads a PDF document's text, as it reads a text file's.
  if (files.size > 0 && services.engines.for('chat', model).name === 'offline') await addPdfText(files);
  const mapped = toChatRequest(body, model, maxTokens, files, deps.signatures, key.accountId);
  // The prefix's tokens, counted as the whole request's are (so a read never exceeds the input).
  let cached = null;
  if (prefix) {
    const tokens = await countInputTokens(toChatRequest(prefix.body as CountBody, model, maxTokens, files, deps.signatures, key.accountId).request);
    if (tokens >= MIN_CACHEABLE_TOKENS) cached = { tokens, body: prefix.body, ttlMs: prefix.ttlMs };
  }
  return { ...mapped, cached };
}

/** The input tokens the same request is charged for on the offline engine (free: nothing is reserved, nothing cached). */
export async function countMessageTokens(services: Services, deps: MessagesDeps, body: CountBody, key: KeyRecord): Promise<number> {
  const mapped = await mapFor(services, deps, body, key, services.config.defaultMaxOutputTokens);
  return countInputTokens(mapped.request);
}

export async function startMessage(services: Services, deps: MessagesDeps, call: Call, body: MessageBody, key: KeyRecord): Promise<StartedMessage> {
  const { signatures } = deps;
  const maxTokens = outputCap(body.max_tokens, key.maxOutputTokens, services.config.defaultMaxOutputTokens);
  const mapped = await mapFor(services, deps, body, key, maxTokens);
  const { request } = mapped;
  request.requestId = call.id; // the upstream's failure warning names it
  call.model = body.model ?? call.model;
  // The Moderate requests switch: every user turn's text (and images) moderated before anything runs.
  if (key.permissions.moderate) {
    const inputs = (body.messages as { role: string; content: unknown }[]).map((m, i) => messageInput(asChatContent(m.content), `messages[${i}].content`, new Map()));
    await moderateInput(services, key, inputs, callSignal(call), call);
  }
  // message_start reports the input before the provider's usage comes: counted for streams only.
  const inputTokens = body.stream ? await countInputTokens(request) : 0;
  const run = await Run.open(services, call, { key, model: request.model, input: estimateInputTokens([request.messages, request.tools, request.responseFormat], mapped.attachments), maxOutputTokens: maxTokens });
  const provider = services.engines.for('chat', request.model);
  // The offline engine's prefix cache (an upstream reports its own cached tokens).
  const cache = mapped.cached && provider.name === 'offline' ? { tokens: mapped.cached.tokens, use: deps.prefixCache.use(key.accountId, request.model, mapped.cached.body, mapped.cached.ttlMs) } : null;
  const ctx: MessageContext = {
    id: newId('msg_'),
    model: body.model ?? request.model,
    accountId: key.accountId,
    signatures,
    thinking: mapped.thinking,
    inputTokens,
    stopSequences: (body.stop_sequences as string[] | undefined) ?? [],
    cache,
  };
  return { run, events: run.meter(provider.chat(request, run.signal)), encoder: new MessageEncoder(ctx) };
}

/** The vendor's blocks as chat content parts, for moderation: its text and images. */
function asChatContent(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return (content as Record<string, any>[]).flatMap((b): Record<string, unknown>[] => {
    if (b.type === 'text') return [{ type: 'text', text: b.text }];
    if (b.type === 'image' && b.source?.type === 'base64') return [{ type: 'image_url', image_url: { url: `data:${b.source.media_type};base64,${b.source.data}` } }];
    if (b.type === 'tool_result' && typeof b.content === 'string') return [{ type: 'text', text: b.content }];
    return [];
  });
}

/** The whole answer as one Message, with the credits it cost; null when the caller went away first. */
export async function messageOnce(started: StartedMessage): Promise<{ message: Record<string, unknown>; credits: number } | null> {
  const { encoder } = started;
  const ran = await consume(started.run, started.run.signal, async () => {
    for await (const part of started.events) encoder.collect(part);
  });
  if (!ran) return null;
  return { message: encoder.message(ran.usage), credits: ran.credits };
}
