// One text completion, whoever asked for it (an HTTP request or a batch line): the Run
// opened before the model runs, and the whole answer as one object.
import { fromMicro } from '../../accounts/money.ts';
import { createCompletion } from '../../contract/endpoints/completions.ts';
import { invalidRequest, serverError } from '../../errors.ts';
import type { BatchEndpoint } from '../batches/batch-endpoints.ts';
import type { ChatModel } from '../../contract/models.ts';
import type { BodyOf } from '../../contract/types.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import { newId } from '../../ids.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { outputCap } from '../../keys/key-limits.ts';
import { callSignal, type Call } from '../../pipeline/call.ts';
import { moderateInput } from '../moderations/moderate-input.ts';
import type { CompletionRequest, FinishReason, StreamPart } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { usageObject } from '../chat/completion-object.ts';
import { generationOptions } from '../generation-options.ts';
import { consume } from '../stream-answer.ts';

export type CompletionBody = BodyOf<typeof createCompletion>;

export interface StartedCompletion {
  readonly run: Run;
  readonly events: AsyncIterable<StreamPart>;
  /** The fields every object and chunk of this completion carries. */
  readonly base: { id: string; object: 'text_completion'; created: number; model: ChatModel; system_fingerprint: string };
}

export const completionChoice = (text: string, finish: FinishReason | null) => ({ text, index: 0, logprobs: null, finish_reason: finish });

export async function startCompletion(services: Services, call: Call, body: CompletionBody, key: KeyRecord): Promise<StartedCompletion> {
  const model = body.model as ChatModel;
  const prompt = Array.isArray(body.prompt) ? body.prompt[0]! : (body.prompt as string);
  const maxTokens = outputCap(body.max_completion_tokens ?? body.max_tokens, key.maxOutputTokens, services.config.defaultMaxOutputTokens);
  const request: CompletionRequest = generationOptions(body, maxTokens, { prompt, requestId: call.id });
  // The Moderate requests switch: the prompt moderated before anything runs.
  if (key.permissions.moderate) await moderateInput(services, key, typeof prompt === 'string' ? [{ text: prompt, param: 'prompt' }] : [], callSignal(call), call);
  const run = await Run.open(services, call, { key, model, input: estimateInputTokens(prompt, 0), maxOutputTokens: maxTokens });
  return {
    run,
    events: run.meter(services.engines.for('chat', model).complete(request, run.signal)),
    base: { id: newId('cmpl-'), object: 'text_completion', created: Math.floor(Date.now() / 1000), model, system_fingerprint: 'agent-api' },
  };
}

/** The whole answer as one text_completion object; null when the caller went away first. */
export async function completionOnce(c: StartedCompletion): Promise<Record<string, unknown> | null> {
  const ran = await consume(c.run, c.run.signal, async () => {
    let text = '';
    let finish: FinishReason = 'stop';
    for await (const e of c.events) {
      if (e.type === 'text-delta') text += e.delta;
      else if (e.type === 'finish') finish = e.reason;
    }
    return { text, finish };
  });
  if (!ran) return null;
  return { ...c.base, choices: [completionChoice(ran.value.text, ran.value.finish)], usage: usageObject(ran.usage), svc: fromMicro(ran.credits) };
}

/** Text completions as a batch line answers them (api/batches/batch-endpoints.ts). */
export function completionBatchEndpoint(services: Services): BatchEndpoint {
  return {
    url: '/v1/completions',
    contract: createCompletion,
    async run(call) {
      const body = call.body as CompletionBody;
      if (body.stream) throw invalidRequest('A batch line cannot stream: leave out stream.', 'stream');
      const completion = await completionOnce(await startCompletion(services, call, body, call.key!));
      if (!completion) throw serverError('The batch stopped before this request finished.');
      return completion;
    },
  };
}
