// Batch endpoints (SPEC "Files and batches": need the Files switch; Batch resource: a .jsonl
// uploaded with purpose batch, five endpoints, 24h window, output files stay until deleted).
import { z } from 'zod';
import { applied, limited, listQueryFields, listSchema, metadataSchema, objectId, refused, svcSchema, withoutFields } from '../fields.ts';
import { defineEndpoint } from '../types.ts';

/** The endpoints the reference lets a batch name; the service takes those it registers a batch call for (api/batches/batch-endpoints.ts). */
export const BATCH_ENDPOINTS = [
  '/v1/responses',
  '/v1/chat/completions',
  '/v1/embeddings',
  '/v1/completions',
  '/v1/moderations',
  '/v1/images/generations',
  '/v1/images/edits',
  '/v1/videos',
] as const;

const timestamp = z.number().int().nullable().optional();

export const batchSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('batch'),
    endpoint: z.string(),
    model: z.string().optional(),
    errors: z
      .looseObject({
        object: z.string().optional(),
        data: z
          .array(
            z.looseObject({
              code: z.string().optional(),
              message: z.string().optional(),
              param: z.string().nullable().optional(),
              line: z.number().int().nullable().optional(),
            }),
          )
          .optional(),
      })
      .nullable()
      .optional(),
    input_file_id: z.string(),
    completion_window: z.string(),
    status: z.enum(['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled']),
    output_file_id: z.string().nullable().optional(),
    error_file_id: z.string().nullable().optional(),
    created_at: z.number().int(),
    in_progress_at: timestamp,
    expires_at: timestamp,
    finalizing_at: timestamp,
    completed_at: timestamp,
    failed_at: timestamp,
    expired_at: timestamp,
    cancelling_at: timestamp,
    cancelled_at: timestamp,
    request_counts: z.looseObject({ total: z.number().int(), completed: z.number().int(), failed: z.number().int() }).optional(),
    usage: z
      .looseObject({
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        total_tokens: z.number().int(),
        input_tokens_details: z.looseObject({ cached_tokens: z.number().int() }).optional(),
        output_tokens_details: z.looseObject({ reasoning_tokens: z.number().int() }).optional(),
      })
      .optional(),
    metadata: metadataSchema.optional(),
    // Credits settle as the batch's requests run.
    svc: svcSchema.optional(),
  })
  .meta({ id: 'Batch' });

const batchIdParams = { batch_id: z.string() };

/**
 * Creating a batch, its `endpoint` limited to `offered`: the endpoints a line can be run
 * on here, as registered at start, so a batch naming another is refused at once (400
 * naming `endpoint`) instead of failing later, and /capabilities and /openapi.json list
 * exactly those.
 */
export const createBatchFor = (offered: readonly string[]) =>
  defineEndpoint({
    operationId: 'createBatch',
    method: 'POST',
    path: '/batches',
    family: 'batches',
    summary: 'Creates a batch from an uploaded .jsonl file of requests.',
    permission: 'files',
    body: {
      type: 'json',
      required: ['input_file_id', 'endpoint', 'completion_window'],
      fields: {
        input_file_id: applied(objectId(), 'a .jsonl file uploaded with purpose batch'),
        endpoint: limited(offered, 'the endpoints this service runs batch lines on'),
        completion_window: applied(z.literal('24h'), '24h'),
        metadata: applied(metadataSchema, 'see Conventions'),
        output_expires_after: refused('output files stay until deleted; an expiry cannot be set'),
      },
    },
    response: { schema: batchSchema },
    billable: true,
    notes: ['input is a .jsonl file uploaded with purpose batch (up to 100 MB)', 'output and error files stay until deleted'],
  });

/** The whole table, every endpoint the reference names (the registry's; the routes register `createBatchFor`). */
export const createBatch = createBatchFor(BATCH_ENDPOINTS);

export const listBatches = defineEndpoint({
  operationId: 'listBatches',
  method: 'GET',
  path: '/batches',
  family: 'batches',
  summary: "Lists the workspace's batches, newest first.",
  permission: 'files',
  // The reference gives this list no `order`.
  query: withoutFields(listQueryFields('desc'), 'order'),
  response: { schema: listSchema(batchSchema) },
});

export const retrieveBatch = defineEndpoint({
  operationId: 'retrieveBatch',
  method: 'GET',
  path: '/batches/{batch_id}',
  family: 'batches',
  summary: 'Retrieves one batch.',
  permission: 'files',
  params: batchIdParams,
  response: { schema: batchSchema },
});

export const cancelBatch = defineEndpoint({
  operationId: 'cancelBatch',
  method: 'POST',
  path: '/batches/{batch_id}/cancel',
  family: 'batches',
  summary: 'Cancels a batch.',
  permission: 'files',
  params: batchIdParams,
  response: { schema: batchSchema },
});

export const batchesEndpoints = [createBatch, listBatches, retrieveBatch, cancelBatch];
