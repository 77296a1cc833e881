// POST /completions (legacy text completions): one prompt, plain text out, with the
// same credits, streaming and error rules as chat.
import { fromMicro } from '../../accounts/money.ts';
import { createCompletion } from '../../contract/endpoints/completions.ts';
import type { Router } from '../../http/router.ts';
import { usageObject } from '../chat/completion-object.ts';
import { streamAnswer } from '../stream-answer.ts';
import { completionChoice, completionOnce, startCompletion } from './completion-call.ts';

export function completionsRoutes(router: Router): void {
  const services = router.services;

  router.endpoint(createCompletion, async ({ body, key, request, reply }) => {
    const completion = await startCompletion(services, request.state, body, key);
    if (!body.stream) return (await completionOnce(completion)) ?? reply;

    const { base } = completion;
    const includeUsage = body.stream_options?.include_usage === true;
    const nullUsage = includeUsage ? { usage: null } : {};
    return streamAnswer({
      reply,
      meter: completion.run,
      signal: completion.run.signal,
      events: completion.events,
      chunk: (e) =>
        e.type === 'text-delta'
          ? { ...base, choices: [completionChoice(e.delta, null)], ...nullUsage }
          : e.type === 'finish'
            ? { ...base, choices: [completionChoice('', e.reason)], ...nullUsage }
            : null,
      tail: (credits, usage) => (includeUsage ? [{ ...base, choices: [], usage: usageObject(usage, fromMicro(credits)) }] : []),
    });
  });
}
