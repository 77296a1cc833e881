// The messages-style surface's endpoints (root MESSAGES, contract/roots.ts): POST
// /messages (whole, or streamed through the one stream driver as the vendor's named
// events), POST /messages/count_tokens, and the models in the vendor's shape. The
// pipeline (key, limits, contract, activity) is the one every root runs on.
import { fromMicro } from '../../accounts/money.ts';
import { SVC_HEADER } from '../../contract/fields.ts';
import { countMessageTokens as countMessageTokensContract, createMessage, listMessagesModels, retrieveMessagesModel } from '../../contract/endpoints/messages.ts';
import { messagesError, messagesErrorMessage } from '../../contract/roots.ts';
import { CHAT_MODELS } from '../../contract/models.ts';
import { notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { streamAnswer } from '../stream-answer.ts';
import { countMessageTokens, messageOnce, startMessage } from './message-call.ts';
import { messagesFilesRoutes } from './files-routes.ts';
import type { MessagesDeps } from './message-call.ts';
import { messageBatchesRoutes } from './batches-routes.ts';

const PING = 'event: ping\ndata: {"type":"ping"}\n\n';

export function messagesRoutes(router: Router, deps: MessagesDeps): void {
  const services = router.services;
  messagesFilesRoutes(router);

  router.endpoint(createMessage, async ({ body, key, request, reply }) => {
    const started = await startMessage(services, deps, request.state, body, key);
    if (!body.stream) {
      const done = await messageOnce(started);
      if (!done) return reply;
      reply.header(SVC_HEADER, String(fromMicro(done.credits)));
      return done.message;
    }
    const { encoder } = started;
    return streamAnswer({
      reply,
      meter: started.run,
      signal: started.run.signal,
      events: started.events,
      named: true,
      terminator: null,
      keepAlive: PING,
      head: [encoder.messageStart(), { type: 'ping' }],
      chunk: (e) => encoder.events(e),
      tail: (_credits, usage) => [encoder.messageDelta(usage), { type: 'message_stop' }],
      failure: (error) => [{ type: 'error', error: { type: messagesError(error).type, message: messagesErrorMessage(error) }, request_id: request.id }],
    });
  });

  router.endpoint(countMessageTokensContract, async ({ body, key }) => ({ input_tokens: await countMessageTokens(services, deps, body, key) }));

  router.endpoint(listMessagesModels, async ({ key, query }) => {
    const all = modelsFor(key);
    const limit = query.limit ?? 20;
    let from = 0;
    let to = all.length;
    if (query.after_id !== undefined) from = all.findIndex((m) => m.id === query.after_id) + 1;
    if (query.before_id !== undefined) to = Math.max(0, all.findIndex((m) => m.id === query.before_id));
    const page = query.before_id !== undefined && query.after_id === undefined ? all.slice(Math.max(from, to - limit), to) : all.slice(from, Math.min(to, from + limit));
    const hasMore = query.before_id !== undefined && query.after_id === undefined ? to - limit > from : from + limit < to;
    return { data: page, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
  });

  router.endpoint(retrieveMessagesModel, async ({ key, params }) => {
    const model = modelsFor(key).find((m) => m.id === params.model_id);
    if (!model) throw notFound(`The model '${params.model_id}' does not exist or this API key may not use it.`, 'model_id');
    return model;
  });

  messageBatchesRoutes(router, deps);
}

/** When the chat models were first offered, as the vendor's `created_at` (RFC 3339). */
const CREATED_AT = '2025-01-01T00:00:00Z';
const DISPLAY: Record<string, string> = { agent: 'Agent', 'agent-think': 'Agent (thinking)' };

/** The chat models the key may use, in the vendor's ModelInfo shape. */
function modelsFor(key: KeyRecord) {
  return CHAT_MODELS.filter((id) => !key.models || key.models.includes(id)).map((id) => ({ type: 'model', id, display_name: DISPLAY[id] ?? id, created_at: CREATED_AT }));
}
