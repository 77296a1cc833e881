// One chat completion, whoever asked for it: an HTTP request (streamed or not) or a
// batch line. startChat maps the checked body, opens the Run (credits reserved before
// any model runs) and starts the provider or the tool loop; chatOnce collects the whole
// answer into the completion object and keeps it when `store` is true.
import { fromMicro } from '../../accounts/money.ts';
import { createChatCompletion } from '../../contract/endpoints/chat.ts';
import { invalidRequest, serverError } from '../../errors.ts';
import type { BatchEndpoint } from '../batches/batch-endpoints.ts';
import { addPdfText, resolveFileParts } from '../files/resolve-parts.ts';
import type { ChatModel } from '../../contract/models.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { outputCap } from '../../keys/key-limits.ts';
import { callSignal, type Call } from '../../pipeline/call.ts';
import { messageInput, moderateInput } from '../moderations/moderate-input.ts';
import type { StreamPart } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { consume } from '../stream-answer.ts';
import { runAgent } from '../../agent/agent-loop.ts';
import { mentionsUrl, type ToolRegistry, type ToolSet } from '../../tools/registry.ts';
import { CitedSources } from '../../tools/web-search/citations.ts';
import { collect, completionObject, newCompletionId } from './completion-object.ts';
import { toProviderRequest, type ChatBody } from './to-provider-request.ts';

/** Where `store: true` completions go (api/chat/stored-completions.ts). */
export interface CompletionStore {
  save(input: { accountId: string; completion: Record<string, unknown>; requestMessages: unknown[]; metadata: Record<string, string> | null }): Promise<unknown>;
}

export interface StartedChat {
  readonly run: Run;
  readonly events: AsyncIterable<StreamPart>;
  readonly id: string;
  readonly created: number;
  readonly model: ChatModel;
  readonly legacyFunctions: boolean;
  /** The sources the assistant's web tools returned, cited as url_citation annotations; null when it has no tools. */
  readonly sources: CitedSources | null;
  /** Keeps the finished completion when the request asked for `store`. */
  keep(completion: Record<string, unknown>): Promise<unknown> | undefined;
}

export async function startChat(services: Services, stored: CompletionStore, tools: ToolRegistry, call: Call, body: ChatBody, key: KeyRecord): Promise<StartedChat> {
  const model = body.model as ChatModel;
  const maxTokens = outputCap(body.max_completion_tokens ?? body.max_tokens, key.maxOutputTokens, services.config.defaultMaxOutputTokens);
  const files = await resolveFileParts(body.messages, key.accountId, services.files, services.config.bodyLimitBytes);
  // The offline engine reads a stored PDF's text, as it reads a text file's.
  if (files.size > 0 && services.engines.for('chat', model).name === 'offline') await addPdfText(files);
  const mapped = toProviderRequest(body, maxTokens, files);
  mapped.request.requestId = call.id; // the upstream's failure warning names it
  const fileContents = [...files.values()].map((f) => f.text ?? f.dataUrl);
  // The Moderate requests switch: every message's text moderated before anything runs.
  if (key.permissions.moderate) {
    const messages = (body.messages ?? []) as { content?: unknown }[];
    await moderateInput(services, key, messages.map((m, i) => messageInput(m.content, `messages[${i}].content`, files)), callSignal(call), call);
  }
  const assistant: ToolSet = answersDirectly(body, key) ? NO_TOOLS : tools.assistant(key, mentionsUrl(mapped.request.messages), call.log);
  const inputEstimate = estimateInputTokens([body.messages, body.tools ?? body.functions, body.response_format, fileContents, assistant.tools.map((t) => t.definition)], mapped.attachments);
  const run = await Run.open(services, call, { key, model, input: inputEstimate, maxOutputTokens: maxTokens });
  const provider = services.engines.for('chat', model);
  const source: AsyncIterable<StreamPart> =
    assistant.tools.length === 0
      ? provider.chat(mapped.request, run.signal)
      : runAgent(provider, mapped.request, assistant.tools, run.signal, run.agentHooks(mapped.attachments, maxTokens), services.config.agentLimits);
  return {
    run,
    events: run.meter(source),
    id: newCompletionId(),
    created: Math.floor(Date.now() / 1000),
    model,
    legacyFunctions: mapped.legacyFunctions,
    sources: assistant.tools.length > 0 ? new CitedSources() : null,
    keep: (completion) =>
      body.store ? stored.save({ accountId: key.accountId, completion, requestMessages: body.messages ?? [], metadata: body.metadata ?? null }) : undefined,
  };
}

const NO_TOOLS: ToolSet = { tools: [], notes: [] };

/** Should the model answer directly, with every field as sent? */
const has = (v: unknown) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);

export function answersDirectly(body: Record<string, unknown>, key: KeyRecord): boolean {
  return has(body.tools) || has(body.functions) || has(body.response_format) || body.logprobs === true || !key.permissions.agent_tools;
}

/** The whole answer as one completion object; null when the caller went away first. */
export async function chatOnce(chat: StartedChat, body: ChatBody): Promise<Record<string, unknown> | null> {
  const ran = await consume(chat.run, chat.run.signal, () => collect(chat.events, body.logprobs === true, chat.sources));
  if (!ran) return null;
  const completion = completionObject({
    id: chat.id,
    created: chat.created,
    model: chat.model,
    collected: ran.value,
    legacyFunctions: chat.legacyFunctions,
    usage: ran.usage,
    svc: fromMicro(ran.credits),
  });
  await chat.keep(completion);
  return completion;
}

/** Chat completions as a batch line answers them (api/batches/batch-endpoints.ts). */
export function chatBatchEndpoint(services: Services, stored: CompletionStore, tools: ToolRegistry): BatchEndpoint {
  return {
    url: '/v1/chat/completions',
    contract: createChatCompletion,
    async run(call) {
      const body = call.body as ChatBody;
      if (body.stream) throw invalidRequest('A batch line cannot stream: leave out stream.', 'stream');
      const completion = await chatOnce(await startChat(services, stored, tools, call, body, call.key!), body);
      if (!completion) throw serverError('The batch stopped before this request finished.');
      return completion;
    },
  };
}
