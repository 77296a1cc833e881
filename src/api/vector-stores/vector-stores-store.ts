// Vector stores, their files and file batches as rows, and the API objects made from
// them (SPEC "Vector store", "Vector store file"). Every read is scoped to the account:
// another account's id looks exactly like an unknown one. Statuses that follow from the
// files (a store or batch is in_progress while a file is) are computed when read, so no
// transition can be missed by a crash.
import { sql, type Kysely, type Transaction } from 'kysely';
import { AUTO_CHUNKING, type Chunking } from '../../retrieval/chunking.ts';
import { newId } from '../../ids.ts';
import type { Database, VectorStoreFilesTable, VectorStoresTable } from '../../store/schema.ts';
import { type ListPage, type PageOptions, listPage } from '../list-page.ts';

const DAY_MS = 86_400_000;
const sec = (ms: number) => Math.floor(ms / 1000);

export type FileStatus = VectorStoreFilesTable['status'];
export type Metadata = Record<string, string>;

export interface FileCounts {
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  total: number;
}

export interface NewFile {
  fileId: string;
  attributes: Record<string, unknown> | null;
  chunking: Chunking;
}

const emptyCounts = (): FileCounts => ({ in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 });

export class VectorStores {
  constructor(
    readonly db: Kysely<Database>,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Deletes a store's passages (of one file, or of every file `fileIds` names, or all),
   * 500 at a time with a turn of the event loop between: on SQLite each removal also
   * updates the full-text and vector indexes, and a store may hold 100,000 passages.
   */
  async purgePassages(storeId: string, fileIds?: readonly string[]): Promise<number> {
    let removed = 0;
    for (;;) {
      let q = this.db.selectFrom('vector_store_chunks').select('id').where('vector_store_id', '=', storeId);
      if (fileIds) {
        if (fileIds.length === 0) return removed;
        q = q.where('file_id', 'in', fileIds);
      }
      const ids = (await q.limit(500).execute()).map((r) => r.id);
      if (ids.length === 0) return removed;
      await this.db.deleteFrom('vector_store_chunks').where('id', 'in', ids).execute();
      removed += ids.length;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // --- stores -------------------------------------------------------------------------

  async create(
    accountId: string,
    input: { name?: string | null; description?: string | null; metadata?: Metadata | null; expiresAfterDays?: number | null },
    db: Kysely<Database> = this.db,
  ): Promise<VectorStoresTable> {
    const now = this.clock();
    const row: VectorStoresTable = {
      id: newId('vs_'),
      account_id: accountId,
      name: input.name ?? null,
      description: input.description ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
      expires_after_days: input.expiresAfterDays ?? null,
      created_at: now,
      last_active_at: now,
      expired_at: null,
      index_version: 0,
    };
    await db.insertInto('vector_stores').values(row).execute();
    return row;
  }

  async row(accountId: string, id: string): Promise<VectorStoresTable | undefined> {
    return this.db.selectFrom('vector_stores').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  async update(
    accountId: string,
    id: string,
    changes: { name?: string | null; metadata?: Metadata | null; expiresAfterDays?: number | null },
  ): Promise<VectorStoresTable | undefined> {
    const set: Partial<VectorStoresTable> = { last_active_at: this.clock() };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.metadata !== undefined) set.metadata = JSON.stringify(changes.metadata ?? {});
    if (changes.expiresAfterDays !== undefined) set.expires_after_days = changes.expiresAfterDays;
    const r = await this.db.updateTable('vector_stores').set(set).where('id', '=', id).where('account_id', '=', accountId).where('expired_at', 'is', null).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return this.row(accountId, id);
    return this.row(accountId, id);
  }

  /** Deletes the store, its files' rows and its passages; false when the account has none such. */
  async delete(accountId: string, id: string): Promise<boolean> {
    if (!(await this.row(accountId, id))) return false;
    await this.purgePassages(id);
    return this.db.transaction().execute(async (trx) => {
      const found = await trx.selectFrom('vector_stores').select('id').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      if (!found) return false;
      // What an ingestion wrote since the purge (a few batches at most).
      await trx.deleteFrom('vector_store_chunks').where('vector_store_id', '=', id).execute();
      await trx.deleteFrom('vector_store_files').where('vector_store_id', '=', id).execute();
      await trx.deleteFrom('vector_store_file_batches').where('vector_store_id', '=', id).execute();
      await trx.deleteFrom('vector_stores').where('id', '=', id).execute();
      return true;
    });
  }

  async list(accountId: string, page: PageOptions): Promise<ListPage<Record<string, unknown>>> {
    const limit = page.limit ?? 20;
    const order = page.order ?? 'desc';
    let q = this.db.selectFrom('vector_stores').selectAll().where('account_id', '=', accountId);
    if (page.after) q = q.where('id', order === 'asc' ? '>' : '<', page.after);
    if (page.before) q = q.where('id', order === 'asc' ? '<' : '>', page.before);
    // `before` pages backwards: read in the opposite order, then restore it.
    const backwards = Boolean(page.before) && !page.after;
    const rows = await q.orderBy('id', backwards ? (order === 'asc' ? 'desc' : 'asc') : order).limit(limit + 1).execute();
    const more = rows.length > limit;
    const kept = rows.slice(0, limit);
    if (backwards) kept.reverse();
    const counts = await this.countsByStore(kept.map((r) => r.id));
    const data = kept.map((r) => this.object(r, counts.get(r.id) ?? emptyCounts()));
    return listPage(data, more);
  }

  async get(accountId: string, id: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.row(accountId, id);
    if (!row) return undefined;
    const counts = await this.countsByStore([id]);
    return this.object(row, counts.get(id) ?? emptyCounts());
  }

  object(row: VectorStoresTable, counts: FileCounts & { bytes?: number }): Record<string, unknown> {
    const expiresAt = row.expires_after_days === null ? null : row.last_active_at + row.expires_after_days * DAY_MS;
    return {
      id: row.id,
      object: 'vector_store',
      created_at: sec(row.created_at),
      name: row.name,
      description: row.description,
      usage_bytes: counts.bytes ?? 0,
      file_counts: { in_progress: counts.in_progress, completed: counts.completed, failed: counts.failed, cancelled: counts.cancelled, total: counts.total },
      status: row.expired_at !== null ? 'expired' : counts.in_progress > 0 ? 'in_progress' : 'completed',
      ...(row.expires_after_days === null ? {} : { expires_after: { anchor: 'last_active_at', days: row.expires_after_days } }),
      expires_at: expiresAt === null ? null : sec(row.expired_at ?? expiresAt),
      last_active_at: sec(row.last_active_at),
      metadata: JSON.parse(row.metadata) as Metadata,
    };
  }

  private async countsByStore(ids: readonly string[]): Promise<Map<string, FileCounts & { bytes: number }>> {
    const out = new Map<string, FileCounts & { bytes: number }>();
    if (ids.length === 0) return out;
    const rows = await this.db
      .selectFrom('vector_store_files')
      .select(['vector_store_id', 'status', sql<number>`count(*)`.as('n'), sql<number>`coalesce(sum(usage_bytes), 0)`.as('bytes')])
      .where('vector_store_id', 'in', ids)
      .groupBy(['vector_store_id', 'status'])
      .execute();
    for (const r of rows) {
      const c = out.get(r.vector_store_id) ?? { ...emptyCounts(), bytes: 0 };
      c[r.status] = Number(r.n);
      c.total += Number(r.n);
      c.bytes += Number(r.bytes);
      out.set(r.vector_store_id, c);
    }
    return out;
  }

  /** Marks the store used now (its expiry counts from here). */
  async touch(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('vector_stores').set({ last_active_at: this.clock() }).where('id', 'in', ids).where('expired_at', 'is', null).execute();
  }

  /**
   * Stores idle past their expiry become `expired`: their passages and file rows go (the
   * index space is freed), the row stays so a caller reads why. Returns how many. Also
   * removes from the stores files whose upload no longer exists.
   */
  async expire(): Promise<number> {
    const now = this.clock();
    const due = await this.db
      .selectFrom('vector_stores')
      .select('id')
      .where('expired_at', 'is', null)
      .where('expires_after_days', 'is not', null)
      .where(sql<boolean>`last_active_at + expires_after_days * ${DAY_MS} <= ${now}`)
      .limit(1000)
      .execute();
    for (const { id } of due) {
      await this.db.updateTable('vector_stores').set({ expired_at: now }).where('id', '=', id).execute();
      await this.purgePassages(id);
      await this.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('vector_store_chunks').where('vector_store_id', '=', id).execute();
        await trx.updateTable('vector_store_files').set({ usage_bytes: 0, chunk_count: 0 }).where('vector_store_id', '=', id).execute();
        await trx.updateTable('vector_stores').set({ expired_at: now, index_version: sql`index_version + 1` }).where('id', '=', id).execute();
      });
    }
    // Passages an expiry cut off by a crash left behind.
    const leftover = await this.db
      .selectFrom('vector_stores')
      .select('id')
      .where('expired_at', 'is not', null)
      .where((eb) => eb.exists(eb.selectFrom('vector_store_chunks').select('id').whereRef('vector_store_chunks.vector_store_id', '=', 'vector_stores.id')))
      .limit(100)
      .execute();
    for (const { id } of leftover) await this.purgePassages(id);
    // Files whose upload is gone (deleted by an older version, which left them in their
    // stores, or a store they joined while the delete ran): out of the store and the indexes.
    const orphans = await this.db
      .selectFrom('vector_store_files as v')
      .leftJoin('files as f', 'f.id', 'v.file_id')
      .select(['v.account_id', 'v.vector_store_id', 'v.file_id'])
      .where('f.id', 'is', null)
      .limit(100)
      .execute();
    for (const o of orphans) await this.removeFile(o.account_id, o.vector_store_id, o.file_id);
    return due.length;
  }

  // --- files --------------------------------------------------------------------------

  /**
   * Adds files to a store as in_progress rows (an already added file keeps its row: adding
   * it again returns it unchanged). Returns the rows newly added, in order.
   */
  async addFiles(trx: Transaction<Database> | Kysely<Database>, accountId: string, storeId: string, files: readonly NewFile[], batchId: string | null): Promise<VectorStoreFilesTable[]> {
    const now = this.clock();
    const added: VectorStoreFilesTable[] = [];
    let seq = now * 1000;
    for (const f of files) {
      const row: VectorStoreFilesTable = {
        vector_store_id: storeId,
        file_id: f.fileId,
        account_id: accountId,
        batch_id: batchId,
        status: 'in_progress',
        last_error: null,
        attributes: f.attributes ? JSON.stringify(f.attributes) : null,
        chunking: JSON.stringify(f.chunking),
        job_id: null,
        created_at: now,
        seq: seq++,
        usage_bytes: 0,
        chunk_count: 0,
      };
      const r = await trx.insertInto('vector_store_files').values(row).onConflict((oc) => oc.columns(['vector_store_id', 'file_id']).doNothing()).executeTakeFirst();
      if (Number(r.numInsertedOrUpdatedRows ?? 0) > 0) added.push(row);
    }
    return added;
  }

  async fileRow(accountId: string, storeId: string, fileId: string): Promise<VectorStoreFilesTable | undefined> {
    return this.db.selectFrom('vector_store_files').selectAll().where('vector_store_id', '=', storeId).where('file_id', '=', fileId).where('account_id', '=', accountId).executeTakeFirst();
  }

  fileObject(row: VectorStoreFilesTable): Record<string, unknown> {
    const chunking = JSON.parse(row.chunking) as Chunking;
    return {
      id: row.file_id,
      object: 'vector_store.file',
      usage_bytes: Number(row.usage_bytes),
      created_at: sec(row.created_at),
      vector_store_id: row.vector_store_id,
      status: row.status,
      last_error: row.last_error ? JSON.parse(row.last_error) : null,
      chunking_strategy: { type: 'static', static: chunking },
      attributes: row.attributes ? JSON.parse(row.attributes) : {},
    };
  }

  async listFiles(accountId: string, storeId: string, page: PageOptions & { status?: FileStatus; batchId?: string }): Promise<ListPage<Record<string, unknown>> | 'unknown_cursor'> {
    const limit = page.limit ?? 20;
    const order = page.order ?? 'desc';
    const cursorSeq = async (fileId: string) =>
      (await this.db.selectFrom('vector_store_files').select('seq').where('vector_store_id', '=', storeId).where('file_id', '=', fileId).executeTakeFirst())?.seq;
    let q = this.db.selectFrom('vector_store_files').selectAll().where('vector_store_id', '=', storeId).where('account_id', '=', accountId);
    if (page.status) q = q.where('status', '=', page.status);
    if (page.batchId) q = q.where('batch_id', '=', page.batchId);
    if (page.after) {
      const s = await cursorSeq(page.after);
      if (s === undefined) return 'unknown_cursor';
      q = q.where('seq', order === 'asc' ? '>' : '<', s);
    }
    if (page.before) {
      const s = await cursorSeq(page.before);
      if (s === undefined) return 'unknown_cursor';
      q = q.where('seq', order === 'asc' ? '<' : '>', s);
    }
    const backwards = Boolean(page.before) && !page.after;
    const rows = await q.orderBy('seq', backwards ? (order === 'asc' ? 'desc' : 'asc') : order).limit(limit + 1).execute();
    const kept = rows.slice(0, limit);
    if (backwards) kept.reverse();
    const data = kept.map((r) => this.fileObject(r));
    return listPage(data, rows.length > limit);
  }

  async updateAttributes(accountId: string, storeId: string, fileId: string, attributes: Record<string, unknown> | null): Promise<VectorStoreFilesTable | undefined> {
    await this.db
      .updateTable('vector_store_files')
      .set({ attributes: attributes ? JSON.stringify(attributes) : null })
      .where('vector_store_id', '=', storeId)
      .where('file_id', '=', fileId)
      .where('account_id', '=', accountId)
      .execute();
    return this.fileRow(accountId, storeId, fileId);
  }

  /** Removes a file from the store with its passages; false when it is not in it. */
  async removeFile(accountId: string, storeId: string, fileId: string): Promise<{ jobId: string | null } | false> {
    if (!(await this.fileRow(accountId, storeId, fileId))) return false;
    await this.purgePassages(storeId, [fileId]);
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('vector_store_files')
        .where('vector_store_id', '=', storeId)
        .where('file_id', '=', fileId)
        .where('account_id', '=', accountId)
        .returning('job_id')
        .executeTakeFirst();
      if (!row) return false;
      await trx.deleteFrom('vector_store_chunks').where('vector_store_id', '=', storeId).where('file_id', '=', fileId).execute();
      await trx.updateTable('vector_stores').set({ index_version: sql`index_version + 1`, last_active_at: this.clock() }).where('id', '=', storeId).execute();
      return { jobId: row.job_id };
    });
  }

  /**
   * Removes a file from every store of the account that holds it (its upload is being
   * deleted, as the reference does): rows, passages and their index entries. Returns the
   * ingestion jobs still to cancel.
   */
  async removeFileEverywhere(accountId: string, fileId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('vector_store_files').select('vector_store_id').where('file_id', '=', fileId).where('account_id', '=', accountId).execute();
    const jobs: string[] = [];
    for (const { vector_store_id } of rows) {
      const removed = await this.removeFile(accountId, vector_store_id, fileId);
      if (removed && removed.jobId) jobs.push(removed.jobId);
    }
    return jobs;
  }

  /** The file's passages in order; each one's text past `overlap_chars` continues the previous one. */
  async passages(storeId: string, fileId: string, afterSeq: number, limit: number): Promise<{ seq: number; text: string; overlap_chars: number }[]> {
    return this.db
      .selectFrom('vector_store_chunks')
      .select(['seq', 'text', 'overlap_chars'])
      .where('vector_store_id', '=', storeId)
      .where('file_id', '=', fileId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  }

  // --- file batches -------------------------------------------------------------------

  async createBatch(trx: Transaction<Database>, accountId: string, storeId: string): Promise<string> {
    const id = newId('vsfb_');
    await trx.insertInto('vector_store_file_batches').values({ id, vector_store_id: storeId, account_id: accountId, status: 'in_progress', created_at: this.clock() }).execute();
    return id;
  }

  async batch(accountId: string, storeId: string, batchId: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.db
      .selectFrom('vector_store_file_batches')
      .selectAll()
      .where('id', '=', batchId)
      .where('vector_store_id', '=', storeId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!row) return undefined;
    const rows = await this.db
      .selectFrom('vector_store_files')
      .select(['status', sql<number>`count(*)`.as('n')])
      .where('batch_id', '=', batchId)
      .groupBy('status')
      .execute();
    const counts = emptyCounts();
    for (const r of rows) {
      counts[r.status] = Number(r.n);
      counts.total += Number(r.n);
    }
    // Cancelling cancels the unfinished files in the same transaction: nothing is left to wait for.
    const status = row.status === 'cancelled' ? 'cancelled' : counts.in_progress > 0 ? 'in_progress' : 'completed';
    return { id: row.id, object: 'vector_store.files_batch', created_at: sec(row.created_at), vector_store_id: storeId, status, file_counts: counts };
  }

  /** Marks the batch cancelled and its unfinished files cancelled; returns their ingestion jobs. */
  async cancelBatch(accountId: string, storeId: string, batchId: string): Promise<string[] | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('vector_store_file_batches')
        .set({ status: 'cancelled' })
        .where('id', '=', batchId)
        .where('vector_store_id', '=', storeId)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return undefined;
      const jobs = await trx
        .updateTable('vector_store_files')
        .set({ status: 'cancelled' })
        .where('batch_id', '=', batchId)
        .where('status', '=', 'in_progress')
        .returning('job_id')
        .execute();
      return jobs.map((j) => j.job_id).filter((j): j is string => j !== null);
    });
  }

  /** Bytes of passages and vectors the account's index holds now. */
  async accountUsage(accountId: string): Promise<number> {
    const r = await this.db.selectFrom('vector_store_files').select(sql<number>`coalesce(sum(usage_bytes), 0)`.as('b')).where('account_id', '=', accountId).executeTakeFirst();
    return Number(r?.b ?? 0);
  }
}

export { AUTO_CHUNKING };
