// Message Batches on the messages-style surface (SPEC "Files and batches": the key's Files
// switch; "Limits": 1 to 5,000 requests): the vendor's paths and MessageBatch shape. Each
// request's `params` is a POST /v1/messages body, checked against that endpoint's own
// table (createMessage) for the calling key when the batch is created, so no rule of it
// is repeated here.
import { z } from 'zod';
import { applied, noEffect } from '../fields.ts';
import type { FieldTable } from '../types.ts';
import { betaQuery, idPageQuery } from './messages-query.ts';
import { defineEndpoint } from '../types.ts';

/** The vendor's bound on requests per batch (SPEC "Limits"). */
export const MAX_MESSAGE_BATCH_REQUESTS = 5_000;

/** The vendor's custom_id: 1 to 64 letters, digits, `_` or `-`. */
export const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

const timestamp = z.string().meta({ description: 'RFC 3339' });

export const messageBatchSchema = z
  .looseObject({
    id: z.string(),
    type: z.literal('message_batch'),
    processing_status: z.enum(['in_progress', 'canceling', 'ended']),
    request_counts: z.looseObject({
      processing: z.number().int(),
      succeeded: z.number().int(),
      errored: z.number().int(),
      canceled: z.number().int(),
      expired: z.number().int(),
    }),
    ended_at: timestamp.nullable(),
    created_at: timestamp,
    expires_at: timestamp,
    cancel_initiated_at: timestamp.nullable(),
    archived_at: timestamp.nullable(),
    results_url: z.string().nullable(),
  })
  .meta({ id: 'MessageBatch' });


const batchIdParams = { message_batch_id: z.string().min(1).max(256) };

const requestSchema = z.looseObject({
  custom_id: z.string().regex(CUSTOM_ID, 'custom_id is 1 to 64 letters, digits, _ or -'),
  params: z.record(z.string(), z.unknown()).meta({ description: 'A POST /v1/messages body, without stream' }),
});

export const createMessageBatch = defineEndpoint({
  operationId: 'message_batches_post',
  method: 'POST',
  path: '/messages/batches',
  family: 'messages',
  summary: 'Creates a batch of message requests, run in the background; results are read at results_url once it has ended.',
  permission: 'files',
  query: betaQuery,
  body: {
    type: 'json',
    required: ['requests'],
    fields: {
      requests: applied(
        z
          .array(requestSchema)
          .min(1, 'requests must hold at least one request')
          .max(MAX_MESSAGE_BATCH_REQUESTS, `a batch holds at most ${MAX_MESSAGE_BATCH_REQUESTS} requests`),
        `1 to ${MAX_MESSAGE_BATCH_REQUESTS} requests, custom_id unique; each params is checked as POST /v1/messages checks its body for the calling key (stream is refused)`,
      ),
    },
  },
  response: { schema: messageBatchSchema },
  billable: true,
  notes: ['the whole batch is one request body, so AGENT_API_BODY_LIMIT_BYTES bounds it', 'each request is charged as a POST /v1/messages when it runs'],
});

export const listMessageBatches = defineEndpoint({
  operationId: 'message_batches_list',
  method: 'GET',
  path: '/messages/batches',
  family: 'messages',
  summary: "Lists the account's message batches, newest first, in pages.",
  permission: 'files',
  query: idPageQuery,
  response: {
    schema: z.looseObject({ data: z.array(messageBatchSchema), has_more: z.boolean(), first_id: z.string().nullable(), last_id: z.string().nullable() }),
  },
});

export const retrieveMessageBatch = defineEndpoint({
  operationId: 'message_batches_retrieve',
  method: 'GET',
  path: '/messages/batches/{message_batch_id}',
  family: 'messages',
  summary: 'Retrieves one message batch (poll it until processing_status is ended).',
  permission: 'files',
  query: betaQuery,
  params: batchIdParams,
  response: { schema: messageBatchSchema },
});

export const cancelMessageBatch = defineEndpoint({
  operationId: 'message_batches_cancel',
  method: 'POST',
  path: '/messages/batches/{message_batch_id}/cancel',
  family: 'messages',
  summary: 'Cancels a message batch: no new request starts, the running ones finish, the rest end canceled.',
  permission: 'files',
  query: betaQuery,
  params: batchIdParams,
  response: { schema: messageBatchSchema },
});

export const deleteMessageBatch = defineEndpoint({
  operationId: 'message_batches_delete',
  method: 'DELETE',
  path: '/messages/batches/{message_batch_id}',
  family: 'messages',
  summary: 'Deletes an ended message batch and its results (cancel a running one first).',
  permission: 'files',
  query: betaQuery,
  params: batchIdParams,
  response: { schema: z.looseObject({ id: z.string(), type: z.literal('message_batch_deleted') }) },
});

export const messageBatchResults = defineEndpoint({
  operationId: 'message_batches_results',
  method: 'GET',
  path: '/messages/batches/{message_batch_id}/results',
  family: 'messages',
  summary:
    'The results of an ended batch as JSON Lines, one per request in request order: {custom_id, result} with result succeeded (message), errored (error), canceled or expired.',
  permission: 'files',
  query: betaQuery,
  params: batchIdParams,
  response: { schema: z.string(), alternate: 'binary', contentType: 'application/x-jsonl' },
});

export const messagesBatchesEndpoints = [createMessageBatch, listMessageBatches, retrieveMessageBatch, cancelMessageBatch, deleteMessageBatch, messageBatchResults] as const;
