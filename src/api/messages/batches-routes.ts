// /v1/messages/batches on the messages-style root (SPEC: the key's Files switch): create,
// list, retrieve, cancel, delete, and the results as JSONL. Only the key's own account
// sees a batch. results_url is absolute (the SDKs fetch it as given): this root under
// AGENT_API_PUBLIC_BASE_URL's origin and path less its `/v1`, else under the request's
// own origin (X-Forwarded-Proto and Host count from a trusted proxy).
import type { FastifyRequest } from 'fastify';
import {
  cancelMessageBatch,
  createMessageBatch,
  deleteMessageBatch,
  listMessageBatches,
  messageBatchResults,
  retrieveMessageBatch,
} from '../../contract/endpoints/messages-batches.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import { rootUrl as publishedRootUrl } from '../root-url.ts';
import type { BatchesTable } from '../../store/schema.ts';
import { isTerminal } from '../batches/batches-service.ts';
import { BatchEndpoints } from '../batches/batch-endpoints.ts';
import { batchJobHandler } from '../batches/batch-job.ts';
import { MESSAGE_BATCH_URL, MessageBatches, messageBatchEndpoint, messageBatchJob } from './batches.ts';
import type { MessagesDeps } from './message-call.ts';

const missing = (id: string) => notFound(`No message batch with id '${id}' exists for this account.`, 'message_batch_id');

/** The surface's batches: the routes, and their job (the /v1 batch job over this surface's line source, without output files). */
export function messageBatchesRoutes(router: Router, deps: MessagesDeps): void {
  const { services } = router;
  const endpoints = new BatchEndpoints();
  endpoints.register(messageBatchEndpoint(services, deps));
  const batches = new MessageBatches(services, endpoints.get(MESSAGE_BATCH_URL)!);
  const { config } = services;
  services.jobRunner.handle(messageBatchJob, batchJobHandler(services, endpoints, { concurrency: config.batchConcurrency, lines: batches.lines, outputFiles: false }), {
    concurrency: config.batchJobs,
  });
  const rootUrl = (request: FastifyRequest) => publishedRootUrl(config.publicBaseUrl, request, router.prefix);
  const found = async (accountId: string, id: string): Promise<BatchesTable> => (await batches.row(accountId, id)) ?? Promise.reject(missing(id));

  router.endpoint(createMessageBatch, async ({ body, key, request }) => batches.object(await batches.create(key, body.requests!, request.ip), rootUrl(request)));

  router.endpoint(listMessageBatches, async ({ query, key, request }) => {
    const { rows, has_more } = await batches.list(key.accountId, query);
    const data = rows.map((r) => batches.object(r, rootUrl(request)));
    return { data, has_more, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  });

  router.endpoint(retrieveMessageBatch, async ({ params, key, request }) => batches.object(await found(key.accountId, params.message_batch_id!), rootUrl(request)));

  router.endpoint(cancelMessageBatch, async ({ params, key, request }) => {
    const row = await batches.cancel(key.accountId, params.message_batch_id!);
    if (!row) throw missing(params.message_batch_id!);
    return batches.object(row, rootUrl(request));
  });

  router.endpoint(deleteMessageBatch, async ({ params, key }) => {
    const row = await found(key.accountId, params.message_batch_id!);
    await batches.delete(row);
    return { id: row.id, type: 'message_batch_deleted' };
  });

  router.endpoint(messageBatchResults, async ({ params, key, reply }) => {
    const row = await found(key.accountId, params.message_batch_id!);
    if (!isTerminal(row.status)) throw invalidRequest(`Message batch ${row.id} has not ended yet; its results are available once processing_status is ended.`, 'message_batch_id');
    reply.header('content-type', 'application/x-jsonl');
    return reply.send(batches.results(row));
  });
}
