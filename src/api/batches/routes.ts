// /batches (SPEC "Files and batches", Files switch): create from an uploaded batch file,
// list, retrieve, cancel. The work runs as a durable job (batch-job.ts); only the key's
// own account sees a batch.
import { cancelBatch, createBatchFor, listBatches, retrieveBatch } from '../../contract/endpoints/batches.ts';
import { notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import { batchObject, type Batches } from './batches-service.ts';

const missing = (id: string) => notFound(`No such Batch object: ${id}`, 'batch_id');

/** `endpoints`: the ones a batch line can be run on (registered in BatchEndpoints); a batch naming another is refused. */
export function batchesRoutes(router: Router, batches: Batches, endpoints: readonly string[]): void {
  router.endpoint(createBatchFor(endpoints), async ({ body, key, request }) =>
    batches.create(key, { input_file_id: body.input_file_id!, endpoint: body.endpoint as string, completion_window: body.completion_window!, metadata: body.metadata ?? null }, request.ip),
  );

  router.endpoint(listBatches, async ({ query, key }) =>
    batches.list(key.accountId, {
      ...(typeof query.after === 'string' ? { after: query.after } : {}),
      ...(typeof query.limit === 'number' ? { limit: query.limit } : {}),
    }),
  );

  router.endpoint(retrieveBatch, async ({ params, key }) => {
    const row = await batches.row(key.accountId, params.batch_id!);
    if (!row) throw missing(params.batch_id!);
    return batchObject(row);
  });

  router.endpoint(cancelBatch, async ({ params, key }) => (await batches.cancel(key.accountId, params.batch_id!)) ?? Promise.reject(missing(params.batch_id!)));
}
