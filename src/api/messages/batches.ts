// Message Batches: a batch of POST /v1/messages bodies, run by the batch job of /v1
// (api/batches/batch-job.ts: validated again for the key as it is then, each request
// recorded before it starts and with its outcome after, so a restart never runs one
// twice; each through the one call runner with the key's limits, a Run and an activity
// row). What differs is only where the requests come from (the create body, kept as a
// JSONL blob of batch input lines, since they arrive in the body rather than as a file)
// and how the outcome reads: the vendor's MessageBatch, and results as JSONL served from
// the recorded lines, in request order, at an absolute results_url.
import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { createMessage } from '../../contract/endpoints/messages.ts';
import { MESSAGES } from '../../contract/roots.ts';
import { invalidRequest, serverError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { jobKind } from '../../jobs/types.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { Services } from '../../services.ts';
import type { BatchesTable } from '../../store/schema.ts';
import type { BatchEndpoint } from '../batches/batch-endpoints.ts';
import { Batches, insertBatch, isTerminal, newBatchRow } from '../batches/batches-service.ts';
import { checkLine, lineError } from '../batches/validate-input.ts';
import { messageOnce, startMessage, type MessagesDeps } from './message-call.ts';
import type { MessageBody } from './to-chat-request.ts';

/** The endpoint a request of a message batch runs on, as its activity row names it. */
export const MESSAGE_BATCH_URL = `${MESSAGES.prefix}${createMessage.path}`;

/** The job that runs one message batch: the batch job of /v1 with this surface's line source. */
export const messageBatchJob = jobKind<{ batchId: string }>('messages.batches.run', { maxAttempts: 20 });

/** POST /v1/messages as a batch line: the whole message (a batch line never streams). */
export function messageBatchEndpoint(services: Services, deps: MessagesDeps): BatchEndpoint {
  return {
    url: MESSAGE_BATCH_URL,
    contract: createMessage,
    root: MESSAGES,
    async run(call) {
      const done = await messageOnce(await startMessage(services, deps, call, call.body as MessageBody, call.key!));
      if (!done) throw serverError('The batch stopped before this request finished.');
      return done.message;
    },
  };
}

/** A line of the batch's blob starts with its custom_id (written so, below): the results read it without parsing the params. */
const CUSTOM_ID_PREFIX = /^\{"custom_id":"([A-Za-z0-9_-]{1,64})"/;

/** What batch-job.ts records per line (its Outcome). */
interface Recorded {
  custom_id: string;
  response: { status_code: number; request_id: string; body: Record<string, any> } | null;
  error: { code: string; message: string } | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export class MessageBatches {
  private readonly batches: Batches;

  constructor(
    private readonly services: Services,
    private readonly endpoint: BatchEndpoint,
  ) {
    this.batches = new Batches(services.store.db, services.jobs, services.files, Date.now, 'messages');
  }

  /** The batch job's line source: the requests the create body held. */
  readonly lines = async (batch: BatchesTable): Promise<AsyncIterable<string> | null> => {
    if (!batch.input_blob) return null;
    const stream = await this.services.blobs.get(batch.input_blob).catch(() => null);
    return stream && createInterface({ input: stream, crlfDelay: Infinity });
  };

  /**
   * Checks every request as POST /v1/messages checks its body for this key (yielding to
   * the event loop as it goes), keeps them as a blob of batch input lines, then inserts
   * the row with its job. A bad request refuses the whole batch, naming it.
   */
  async create(key: KeyRecord, requests: { custom_id: string; params: Record<string, unknown> }[], callerIp: string): Promise<BatchesTable> {
    const seen = new Set<string>();
    let sinceYield = performance.now();
    for (const [i, r] of requests.entries()) {
      try {
        checkLine({ custom_id: r.custom_id, method: 'POST', url: MESSAGE_BATCH_URL, body: r.params }, i + 1, MESSAGE_BATCH_URL, this.endpoint, key, seen);
      } catch (err) {
        const e = lineError(err);
        if (!e) throw err;
        const param = e.param === 'custom_id' ? `requests[${i}].custom_id` : `requests[${i}].params${(e.param ?? 'body').slice('body'.length)}`;
        const message = e.code === 'duplicate_custom_id' ? `custom_id '${r.custom_id}' is used by an earlier request; each must be unique.` : e.message.replace(/^Line \d+: /, '');
        throw invalidRequest(message, param);
      }
      if (performance.now() - sinceYield > 5) {
        await new Promise((resolve) => setImmediate(resolve));
        sinceYield = performance.now();
      }
    }
    const { config, blobs } = this.services;
    const source = Readable.from(
      (function* () {
        // custom_id first: CUSTOM_ID_PREFIX reads it back.
        for (const r of requests) yield `${JSON.stringify({ custom_id: r.custom_id, method: 'POST', url: MESSAGE_BATCH_URL, body: r.params })}\n`;
      })(),
    );
    // The requests came in one body: bounded by its limit, plus each line's method and url.
    const blob = await blobs.put(source, { maxBytes: config.bodyLimitBytes + requests.length * 128 });
    const now = Date.now();
    const row = newBatchRow({
      id: newId('msgbatch_'),
      key,
      endpoint: MESSAGE_BATCH_URL,
      input_file_id: '',
      completion_window: '24h',
      metadata: null,
      caller_ip: callerIp,
      created_at: now,
      total: requests.length,
      surface: 'messages',
      input_blob: blob.key,
    });
    try {
      await insertBatch(this.services.jobs, row, messageBatchJob);
    } catch (err) {
      await blobs.delete(blob.key).catch(() => {});
      throw err;
    }
    return row;
  }

  row(accountId: string, id: string): Promise<BatchesTable | undefined> {
    return this.batches.row(accountId, id);
  }

  cancel(accountId: string, id: string): Promise<BatchesTable | undefined> {
    return this.batches.cancelRow(accountId, id);
  }

  /** Newest first; `after_id` pages to older batches, `before_id` to newer ones (the vendor's Page). */
  async list(accountId: string, query: { before_id?: string; after_id?: string; limit?: number }) {
    const limit = query.limit ?? 20;
    const { db } = this.services.store;
    let q = db.selectFrom('batches').selectAll().where('account_id', '=', accountId).where('surface', '=', 'messages');
    if (query.after_id !== undefined) q = q.where('id', '<', query.after_id);
    const backwards = query.before_id !== undefined && query.after_id === undefined;
    if (query.before_id !== undefined) q = q.where('id', '>', query.before_id);
    const rows = await q.orderBy('id', backwards ? 'asc' : 'desc').limit(limit + 1).execute();
    const page = rows.slice(0, limit);
    if (backwards) page.reverse();
    return { rows: page, has_more: rows.length > limit };
  }

  /** Deletes an ended batch: its rows (the recorded lines with it) and its requests' blob. */
  async delete(row: BatchesTable): Promise<void> {
    if (!isTerminal(row.status)) throw invalidRequest(`Message batch ${row.id} is still processing; cancel it and wait for it to end before deleting it.`, 'message_batch_id');
    const { db } = this.services.store;
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('batch_lines').where('batch_id', '=', row.id).execute();
      await trx.deleteFrom('batches').where('id', '=', row.id).execute();
    });
    if (row.input_blob) await this.services.blobs.delete(row.input_blob).catch(() => {});
  }

  /** The vendor's MessageBatch; `rootUrl` is the absolute URL of this surface's root (results_url is fetched as given). */
  object(row: BatchesTable, rootUrl: string) {
    const ended = isTerminal(row.status);
    const total = Number(row.total);
    const succeeded = Number(row.completed);
    const expired = Number(row.expired);
    const recordedErrors = Number(row.failed) - expired;
    const unrun = Math.max(0, total - succeeded - Number(row.failed));
    return {
      id: row.id,
      type: 'message_batch' as const,
      processing_status: ended ? ('ended' as const) : row.status === 'cancelling' ? ('canceling' as const) : ('in_progress' as const),
      request_counts: {
        processing: ended ? 0 : unrun,
        succeeded,
        // A batch that failed before its requests ran (its key gone since): they end errored.
        errored: recordedErrors + (row.status === 'failed' ? unrun : 0),
        canceled: row.status === 'cancelled' ? unrun : 0,
        expired: expired + (row.status === 'expired' ? unrun : 0),
      },
      ended_at: iso(ended ? (row.completed_at ?? row.cancelled_at ?? row.expired_at ?? row.failed_at) : null),
      created_at: iso(row.created_at)!,
      expires_at: iso(row.expires_at)!,
      cancel_initiated_at: iso(row.cancelling_at),
      archived_at: null,
      results_url: ended ? `${rootUrl}/messages/batches/${row.id}/results` : null,
    };
  }

  /** The results as JSONL, one line per request in request order, read in pages of recorded lines. */
  results(row: BatchesTable): Readable {
    const { db } = this.services.store;
    const lines = this.lines;
    const unrun = () => unrunResult(row);
    return Readable.from(
      (async function* () {
        const input = await lines(row);
        if (!input) return;
        let chunk: { lineNo: number; customId: string }[] = [];
        const flush = async () => {
          const recorded = await db
            .selectFrom('batch_lines')
            .select(['line_no', 'outcome'])
            .where('batch_id', '=', row.id)
            .where('state', '=', 'done')
            .where('line_no', '>=', chunk[0]!.lineNo)
            .where('line_no', '<=', chunk.at(-1)!.lineNo)
            .execute();
          const byLine = new Map(recorded.map((r) => [r.line_no, r.outcome]));
          const out = chunk.map(({ lineNo, customId }) => {
            const text = byLine.get(lineNo);
            return `${JSON.stringify({ custom_id: customId, result: text ? resultOf(JSON.parse(text) as Recorded) : unrun() })}\n`;
          });
          chunk = [];
          return out.join('');
        };
        let lineNo = 0;
        for await (const text of input) {
          lineNo++;
          if (text.trim() === '') continue;
          chunk.push({ lineNo, customId: CUSTOM_ID_PREFIX.exec(text)?.[1] ?? '' });
          if (chunk.length >= 200) yield await flush();
        }
        if (chunk.length > 0) yield await flush();
      })(),
    );
  }
}

/** A recorded outcome as the vendor's result. */
function resultOf(o: Recorded): Record<string, unknown> {
  if (o.response === null) return { type: 'expired' };
  const { status_code, body, request_id } = o.response;
  if (status_code >= 200 && status_code < 300) return { type: 'succeeded', message: body };
  if (body.type === 'error') return { type: 'errored', error: body };
  // Written by the job itself (a request a restart cut off): the reference shape, a server error.
  return { type: 'errored', error: { type: 'error', error: { type: 'api_error', message: String(body.error?.message ?? 'The request failed.') }, request_id } };
}

/** A request with no recorded outcome in an ended batch. */
function unrunResult(row: BatchesTable): Record<string, unknown> {
  if (row.status === 'cancelled') return { type: 'canceled' };
  if (row.status === 'expired') return { type: 'expired' };
  const first = row.errors ? (JSON.parse(row.errors) as { message?: string }[])[0] : undefined;
  return { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: first?.message ?? 'The batch ended before this request ran.' } } };
}
