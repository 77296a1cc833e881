// POST /responses and the stored-response endpoints (SPEC "Responses"). The contract has
// checked every field; an id the key's account cannot see (unknown, another account's,
// expired, or made with store: false) is 404, the same everywhere.
import { cancelResponse, compactConversation, createResponse, deleteResponse, getInputTokenCounts, getResponse, listInputItems } from '../../contract/endpoints/responses.ts';
import { compact, type Compaction } from './compaction.ts';
import { countInputTokens } from './input-tokens.ts';
import { invalidRequest, notFound, responseNotCancellable } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import { consume } from '../stream-answer.ts';
import type { BatchEndpoint } from '../batches/batch-endpoints.ts';
import { serverError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { collectResponse, startResponse, type ResponseBody, type ResponsesDeps, type StartedResponse } from './response-call.ts';
import { pageItems } from './stored-responses.ts';
import { forListing, shownResponse } from './items.ts';
import { followResponse, ResponseEventLog } from './event-log.ts';
import { openEventStream } from '../../http/sse.ts';
import { streamResponse } from './response-stream.ts';

/**
 * How often a streamed GET of a running background response looks for new events
 * without being told: rarely when signals cross instances (a safety net), else as often
 * as before signals (another instance may be running it).
 */
const FOLLOW_POLL_MS = { signalled: 1_000, unsignalled: 100 };

const missing = (id: string) => notFound(`No response found with id '${id}'.`, 'response_id');

/** The whole response as one object; null when the caller went away first. */
export async function responseOnce(started: StartedResponse): Promise<Record<string, any> | null> {
  const ran = await consume(started.run, started.run.signal, () => collectResponse(started));
  if (!ran) return null;
  return started.finish(ran.value, ran.credits, ran.usage);
}

/** Background responses: queued as a job (api/responses/background.ts registers it). */
export interface BackgroundResponses {
  enqueue(ctx: { body: ResponseBody; call: import('../../pipeline/call.ts').Call; key: import('../../keys/keys-service.ts').KeyRecord }): Promise<Record<string, any>>;
  cancel(accountId: string, id: string): Promise<Record<string, any> | undefined>;
}

export function responsesRoutes(router: Router, deps: ResponsesDeps & { compaction: Compaction }, background?: BackgroundResponses): void {
  const services = router.services;
  const events = new ResponseEventLog(services.store.db, services.signals, services.log);

  router.endpoint(createResponse, async ({ body, key, request, reply }) => {
    if (body.background) {
      if (!background) throw invalidRequest('Background responses are not offered.', 'background');
      if (body.stream) throw invalidRequest('background cannot be combined with stream: poll GET /responses/{response_id} instead.', 'background');
      return background.enqueue({ body, call: request.state, key });
    }
    const started = await startResponse(services, deps, request.state, body, key);
    if (!body.stream) return (await responseOnce(started)) ?? reply;
    return streamResponse(reply, started);
  });

  router.endpoint(getInputTokenCounts, async ({ body, key }) => countInputTokens(deps, key.accountId, body));

  router.endpoint(compactConversation, async ({ body, key, request, reply }) => (await compact(services, deps, request.state, body, key)) ?? reply);

  router.endpoint(getResponse, async ({ params, query, key, request, reply }) => {
    const found = await deps.stored.get(key.accountId, params.response_id!);
    if (!found) throw missing(params.response_id!);
    const include = query.include as string[] | undefined;
    if (query.stream !== true) return shownResponse(found.response, include);
    // Its events so far, then live while it runs (from whichever instance runs it), until its end.
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort());
    if (reply.raw.destroyed) gone.abort();
    const sse = openEventStream(reply);
    try {
      for await (const e of followResponse({
        stored: deps.stored,
        events,
        accountId: key.accountId,
        id: params.response_id!,
        startingAfter: typeof query.starting_after === 'number' ? query.starting_after : undefined,
        include,
        signal: gone.signal,
        pollMs: services.signals.shared ? FOLLOW_POLL_MS.signalled : FOLLOW_POLL_MS.unsignalled,
      })) {
        await sse.send(e, e.type);
      }
    } catch (err) {
      // The stream is open: the client gets its end, the log the reason.
      request.log.warn({ err }, 'following a response failed');
    }
    sse.end();
    return reply;
  });

  router.endpoint(deleteResponse, async ({ params, key }) => {
    if (!(await deps.stored.delete(key.accountId, params.response_id!))) throw missing(params.response_id!);
    return { id: params.response_id!, object: 'response', deleted: true };
  });

  router.endpoint(cancelResponse, async ({ params, key }) => {
    const found = await deps.stored.get(key.accountId, params.response_id!);
    if (!found) throw missing(params.response_id!);
    if (!found.background) throw responseNotCancellable('Only a background response can be cancelled.');
    const status = found.response.status;
    if (status === 'cancelled') return shownResponse(found.response, null);
    if (status !== 'queued' && status !== 'in_progress') throw responseNotCancellable(`The response is already ${status}: only a queued or running background response can be cancelled.`);
    const cancelled = background ? await background.cancel(key.accountId, params.response_id!) : undefined;
    if (!cancelled) throw missing(params.response_id!);
    return shownResponse(cancelled, null);
  });

  router.endpoint(listInputItems, async ({ params, query, key }) => {
    const found = await deps.stored.get(key.accountId, params.response_id!);
    if (!found) throw missing(params.response_id!);
    const page = pageItems(found.inputItems, {
      limit: typeof query.limit === 'number' ? query.limit : undefined,
      after: typeof query.after === 'string' ? query.after : undefined,
      order: query.order === 'asc' || query.order === 'desc' ? query.order : undefined,
    });
    if (page === 'unknown_after') throw invalidRequest(`No input item with id '${String(query.after)}' in this response.`, 'after');
    return { ...page, data: forListing(page.data, query.include as string[] | undefined) };
  });
}

/** Responses as a batch line answers them (api/batches/batch-endpoints.ts). */
export function responseBatchEndpoint(services: Services, deps: ResponsesDeps): BatchEndpoint {
  return {
    url: '/v1/responses',
    contract: createResponse,
    async run(call) {
      const body = call.body as ResponseBody;
      if (body.stream) throw invalidRequest('A batch line cannot stream: leave out stream.', 'stream');
      if (body.background) throw invalidRequest('A batch line cannot run in the background: leave out background.', 'background');
      const response = await responseOnce(await startResponse(services, deps, call, body, call.key!));
      if (!response) throw serverError('The batch stopped before this request finished.');
      return response;
    },
  };
}
