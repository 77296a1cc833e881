// Batches (SPEC "Batch", "Files and batches"): the rows, the reference batch object, and
// the API's operations. A batch's work is one durable job (batch-job.ts): created with
// the row in one transaction, so a batch never exists without the job that runs it.
import { fromMicro } from '../../accounts/money.ts';
import { invalidRequest } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { JobQueue } from '../../jobs/job-queue.ts';
import { jobKind } from '../../jobs/types.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { BatchesTable, Database } from '../../store/schema.ts';
import type { Kysely } from 'kysely';
import type { StoredFiles } from '../files/stored-files.ts';

/** The job that validates and runs one batch; a crash counts as an attempt, so it has many. */
export const batchJob = jobKind<{ batchId: string }>('batches.run', { maxAttempts: 20 });

export const COMPLETION_WINDOW_MS = 24 * 60 * 60_000;

const TERMINAL = new Set<BatchesTable['status']>(['failed', 'completed', 'expired', 'cancelled']);
export const isTerminal = (status: BatchesTable['status']) => TERMINAL.has(status);

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(Number(ms) / 1000));

/** The reference batch object. */
export function batchObject(row: BatchesTable) {
  const errors = row.errors ? (JSON.parse(row.errors) as unknown[]) : null;
  return {
    id: row.id,
    object: 'batch' as const,
    endpoint: row.endpoint,
    errors: errors ? { object: 'list', data: errors } : null,
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: seconds(row.created_at)!,
    in_progress_at: seconds(row.in_progress_at),
    expires_at: seconds(row.expires_at),
    finalizing_at: seconds(row.finalizing_at),
    completed_at: seconds(row.completed_at),
    failed_at: seconds(row.failed_at),
    expired_at: seconds(row.expired_at),
    cancelling_at: seconds(row.cancelling_at),
    cancelled_at: seconds(row.cancelled_at),
    request_counts: { total: Number(row.total), completed: Number(row.completed), failed: Number(row.failed) },
    usage: {
      input_tokens: Number(row.input_tokens),
      output_tokens: Number(row.output_tokens),
      total_tokens: Number(row.input_tokens) + Number(row.output_tokens),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    },
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : null,
    svc: fromMicro(Number(row.credits)),
  };
}

export type BatchObject = ReturnType<typeof batchObject>;


/** A batch's first row, before any line ran: `fields` are what its surface knows, the rest start empty. */
export function newBatchRow(fields: Pick<BatchesTable, 'id' | 'endpoint' | 'input_file_id' | 'completion_window' | 'metadata' | 'caller_ip' | 'created_at'> & { key: KeyRecord } & Partial<Pick<BatchesTable, 'total' | 'surface' | 'input_blob'>>): BatchesTable {
  const { key, ...given } = fields;
  return {
    account_id: key.accountId,
    key_id: key.id,
    status: 'validating',
    output_file_id: null,
    error_file_id: null,
    errors: null,
    total: 0,
    completed: 0,
    failed: 0,
    credits: 0,
    input_tokens: 0,
    output_tokens: 0,
    job_id: null,
    expires_at: given.created_at + COMPLETION_WINDOW_MS,
    in_progress_at: null,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    surface: 'v1',
    input_blob: null,
    expired: 0,
    ...given,
  };
}

/** A new batch's row and the job that runs it, in one transaction (a batch never exists without its job). */
export async function insertBatch(jobs: JobQueue, row: BatchesTable, kind: typeof batchJob = batchJob): Promise<void> {
  await jobs.transaction(async (trx) => {
    const job = await jobs.enqueue(kind, { batchId: row.id }, { db: trx, accountId: row.account_id });
    row.job_id = job.id;
    await trx.insertInto('batches').values(row).execute();
  });
}

export class Batches {
  /** `surface`: the batches this instance finds, lists and cancels (each surface sees only its own). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly jobs: JobQueue,
    private readonly files: StoredFiles,
    private readonly clock: () => number = Date.now,
    private readonly surface: BatchesTable['surface'] = 'v1',
  ) {}

  async create(
    key: KeyRecord,
    input: { input_file_id: string; endpoint: string; completion_window: string; metadata?: Record<string, string> | null },
    callerIp: string,
  ): Promise<BatchObject> {
    const file = await this.files.get(key.accountId, input.input_file_id);
    if (!file) throw invalidRequest(`No file with id '${input.input_file_id}' exists for this account.`, 'input_file_id');
    if (file.purpose !== 'batch') throw invalidRequest(`The file '${file.id}' was uploaded with purpose '${file.purpose}'; a batch reads a file with purpose 'batch'.`, 'input_file_id');
    const now = this.clock();
    const row = newBatchRow({
      id: newId('batch_'),
      key,
      endpoint: input.endpoint,
      input_file_id: file.id,
      completion_window: input.completion_window,
      metadata: input.metadata ? JSON.stringify(input.metadata) : null,
      caller_ip: callerIp,
      created_at: now,
    });
    await insertBatch(this.jobs, row);
    return batchObject(row);
  }

  /** The account's batch; undefined for an unknown id or another account's. */
  async row(accountId: string, id: string): Promise<BatchesTable | undefined> {
    return this.db.selectFrom('batches').selectAll().where('id', '=', id).where('account_id', '=', accountId).where('surface', '=', this.surface).executeTakeFirst();
  }

  async list(accountId: string, options: { after?: string; limit?: number }) {
    const limit = options.limit ?? 20;
    let q = this.db.selectFrom('batches').selectAll().where('account_id', '=', accountId).where('surface', '=', this.surface);
    if (options.after !== undefined) q = q.where('id', '<', options.after);
    const rows = await q.orderBy('id', 'desc').limit(limit + 1).execute();
    const data = rows.slice(0, limit).map(batchObject);
    return { object: 'list' as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
  }

  /**
   * validating / in_progress → cancelling: no new line starts, the ones running finish,
   * then the batch ends `cancelled` with what ran. A batch whose job has not started yet
   * is cancelled at once. Other states: returned unchanged.
   */
  async cancel(accountId: string, id: string): Promise<BatchObject | undefined> {
    const row = await this.cancelRow(accountId, id);
    return row && batchObject(row);
  }

  /** `cancel`, answering with the row (each surface renders its own object). */
  async cancelRow(accountId: string, id: string): Promise<BatchesTable | undefined> {
    const row = await this.row(accountId, id);
    if (!row) return undefined;
    if (row.status !== 'validating' && row.status !== 'in_progress') return row;
    const now = this.clock();
    await this.db.updateTable('batches').set({ status: 'cancelling', cancelling_at: now }).where('id', '=', id).where('status', 'in', ['validating', 'in_progress']).execute();
    const job = row.job_id ? await this.jobs.cancel(row.job_id) : undefined;
    // Never claimed: no handler will finish it, so it ends here.
    if (!job || (job.status === 'cancelled' && job.attempts === 0)) {
      await this.db.updateTable('batches').set({ status: 'cancelled', cancelled_at: now }).where('id', '=', id).where('status', '=', 'cancelling').execute();
    }
    return (await this.row(accountId, id))!;
  }
}
