// POST /completions (legacy text completions): one prompt, plain text out, with the
// same credits, streaming and error rules as chat.
import { fromMicro } from '../../accounts/money.ts';
import { createCompletion } from '../../contract/endpoints/completions.ts';
import type { ChatModel } from '../../contract/models.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import { outputCap } from '../../keys/key-limits.ts';
import type { Router } from '../../http/router.ts';
import { newId } from '../../ids.ts';
import type { CompletionRequest, FinishReason } from '../../providers/types.ts';
import { consume, streamAnswer } from '../stream-answer.ts';
import { usageObject } from '../chat/completion-object.ts';
import { generationOptions } from '../generation-options.ts';

export function completionsRoutes(router: Router): void {
  const services = router.services;

  router.endpoint(createCompletion, async ({ body, key, request, reply }) => {
    const model = body.model as ChatModel;
    const prompt = Array.isArray(body.prompt) ? body.prompt[0]! : (body.prompt as string);
    const maxTokens = outputCap(body.max_completion_tokens ?? body.max_tokens, key.maxOutputTokens, services.config.defaultMaxOutputTokens);
    const completionRequest: CompletionRequest = { ...generationOptions(body, maxTokens), prompt, requestId: request.id };

    const meter = await Run.open(services, request.state, { key, model, input: estimateInputTokens(prompt, 0), maxOutputTokens: maxTokens });
    const signal = meter.signal;
    const events = meter.meter(services.chat.provider.complete(completionRequest, signal));
    const id = newId('cmpl-');
    const created = Math.floor(Date.now() / 1000);
    const base = { id, object: 'text_completion' as const, created, model, system_fingerprint: 'agent-api' };
    const choice = (text: string, finish: FinishReason | null) => ({ text, index: 0, logprobs: null, finish_reason: finish });

    if (!body.stream) {
      const ran = await consume(meter, signal, async () => {
        let text = '';
        let finish: FinishReason = 'stop';
        for await (const e of events) {
          if (e.type === 'text') text += e.delta;
          else if (e.type === 'finish') finish = e.reason;
        }
        return { text, finish };
      });
      if (!ran) return reply;
      return { ...base, choices: [choice(ran.value.text, ran.value.finish)], usage: usageObject(ran.usage), svc: fromMicro(ran.credits) };
    }

    const includeUsage = body.stream_options?.include_usage === true;
    const nullUsage = includeUsage ? { usage: null } : {};
    return streamAnswer({
      reply,
      meter,
      signal,
      events,
      chunk: (e) =>
        e.type === 'text'
          ? { ...base, choices: [choice(e.delta, null)], ...nullUsage }
          : e.type === 'finish'
            ? { ...base, choices: [choice('', e.reason)], ...nullUsage }
            : null,
      tail: (credits, usage) => (includeUsage ? [{ ...base, choices: [], usage: usageObject(usage, fromMicro(credits)) }] : []),
    });
  });
}
