// The vector store endpoints (SPEC "Containers, vector stores, skills"). The contract has
// checked every field and limit; these handlers check what needs the database: the
// store and the files exist for this account (404 / 400 naming the field), the store has
// not expired, the account's index has room. Files are indexed by durable jobs enqueued
// in the same transaction as their rows, so an added file is never left without a job.
import type { Kysely } from 'kysely';
import {
  createVectorStore,
  deleteVectorStore,
  getVectorStore,
  listVectorStores,
  modifyVectorStore,
  searchVectorStore,
} from '../../contract/endpoints/vector-stores.ts';
import {
  cancelVectorStoreFileBatch,
  createVectorStoreFile,
  createVectorStoreFileBatch,
  deleteVectorStoreFile,
  getVectorStoreFile,
  getVectorStoreFileBatch,
  listFilesInVectorStoreBatch,
  listVectorStoreFiles,
  retrieveVectorStoreFileContent,
  updateVectorStoreFileAttributes,
} from '../../contract/endpoints/vector-store-files.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import type { JobQueue } from '../../jobs/job-queue.ts';
import { callSignal } from '../../pipeline/call.ts';
import { chunkingOf, type Chunking } from '../../retrieval/chunking.ts';
import type { AttributeFilter, VectorSearch } from '../../retrieval/search-types.ts';
import type { Database, VectorStoresTable } from '../../store/schema.ts';
import type { StoredFiles } from '../files/stored-files.ts';
import { ACCOUNT_INDEX_BYTES, ingestJob } from './ingest.ts';
import type { FileStatus, Metadata, NewFile, VectorStores } from './vector-stores-store.ts';
import { pageOptions } from '../list-page.ts';
import { stillThere } from '../still-there.ts';
import { isForeignKeyViolation } from '../../store/errors.ts';

export interface VectorStoreDeps {
  vectorStores: VectorStores;
  search: VectorSearch;
  files: StoredFiles;
  jobs: JobQueue;
  accountIndexBytes?: number;
}

type ChunkingParam = { type: string; static?: Chunking } | undefined;
type Attrs = Record<string, unknown> | null | undefined;

const missingStore = (id: string) => notFound(`No vector store found with id '${id}'.`, 'vector_store_id');
const missingFile = (id: string) => notFound(`No file found with id '${id}' in this vector store.`, 'file_id');
const missingBatch = (id: string) => notFound(`No file batch found with id '${id}' in this vector store.`, 'batch_id');

/**
 * What deleting an upload does to the vector stores (DELETE /files/{id}): the file leaves
 * every store of the account, its passages leave the indexes, a running ingestion of it
 * is cancelled.
 */
export function detachDeletedFile(vectorStores: VectorStores, jobs: JobQueue): (accountId: string, fileId: string) => Promise<void> {
  return async (accountId, fileId) => {
    for (const job of await vectorStores.removeFileEverywhere(accountId, fileId)) await jobs.cancel(job);
  };
}

export function vectorStoresRoutes(router: Router, deps: VectorStoreDeps): void {
  const { vectorStores, files, jobs } = deps;
  const db: Kysely<Database> = vectorStores.db;
  const cap = deps.accountIndexBytes ?? ACCOUNT_INDEX_BYTES;

  /** The account's store, usable (not expired); 404 / 400 otherwise. */
  const usable = async (accountId: string, id: string): Promise<VectorStoresTable> => {
    const row = await vectorStores.row(accountId, id);
    if (!row) throw missingStore(id);
    if (row.expired_at !== null) throw invalidRequest(`The vector store '${id}' has expired; create a new one.`, 'vector_store_id');
    return row;
  };

  /** Every named upload must be the account's; the index must have room. */
  const checkFiles = async (accountId: string, ids: readonly string[], param: string) => {
    for (let i = 0; i < ids.length; i++) {
      if (!(await files.get(accountId, ids[i]!))) throw invalidRequest(`No file found with id '${ids[i]}'.`, `${param}[${i}]`);
    }
    if (ids.length > 0 && (await vectorStores.accountUsage(accountId)) >= cap) {
      throw invalidRequest(`The account's search index is full: it holds at most ${Math.round(cap / 1024 / 1024)} MB of passages and vectors. Delete vector stores or files to make room.`, param);
    }
  };

  /** Rows and their jobs in one transaction. */
  const addFiles = async (accountId: string, storeId: string, list: NewFile[], batch: boolean) =>
    db
      .transaction()
      .execute(async (trx) => {
        const batchId = batch ? await vectorStores.createBatch(trx, accountId, storeId) : null;
        const added = await vectorStores.addFiles(trx, accountId, storeId, list, batchId);
        for (const row of added) {
          const job = await jobs.enqueue(ingestJob, { accountId, vectorStoreId: storeId, fileId: row.file_id }, { db: trx, accountId });
          await trx.updateTable('vector_store_files').set({ job_id: job.id }).where('vector_store_id', '=', storeId).where('file_id', '=', row.file_id).execute();
        }
        return batchId;
      })
      .catch(async (err: unknown) => {
        // The store (or a file) was deleted by another request after it was checked: the caller's 404.
        if (!isForeignKeyViolation(err)) throw err;
        if (!(await vectorStores.row(accountId, storeId))) throw missingStore(storeId);
        throw notFound('A file was deleted while it was being added to the vector store.', batch ? 'file_ids' : 'file_id');
      });

  router.endpoint(createVectorStore, async ({ body, key }) => {
    const fileIds = (body.file_ids as string[] | undefined) ?? [];
    await checkFiles(key.accountId, fileIds, 'file_ids');
    const chunking = chunkingOf(body.chunking_strategy as ChunkingParam);
    const expires = body.expires_after as { days: number } | undefined;
    const row = await db.transaction().execute(async (trx) => {
      const created = await vectorStores.create(
        key.accountId,
        {
          name: (body.name as string | undefined) ?? null,
          description: (body.description as string | undefined) ?? null,
          metadata: (body.metadata as Metadata | null | undefined) ?? null,
          expiresAfterDays: expires?.days ?? null,
        },
        trx,
      );
      return created;
    });
    if (fileIds.length > 0) await addFiles(key.accountId, row.id, [...new Set(fileIds)].map((fileId) => ({ fileId, attributes: null, chunking })), false);
    return stillThere(await vectorStores.get(key.accountId, row.id), () => missingStore(row.id));
  });

  router.endpoint(listVectorStores, async ({ query, key }) => vectorStores.list(key.accountId, pageOptions(query)));

  router.endpoint(getVectorStore, async ({ params, key }) => {
    const store = await vectorStores.get(key.accountId, params.vector_store_id!);
    if (!store) throw missingStore(params.vector_store_id!);
    return store;
  });

  router.endpoint(modifyVectorStore, async ({ params, body, key }) => {
    const id = params.vector_store_id!;
    await usable(key.accountId, id);
    const expires = body.expires_after as { days: number } | null | undefined;
    await vectorStores.update(key.accountId, id, {
      ...(body.name !== undefined ? { name: body.name as string | null } : {}),
      ...(body.metadata !== undefined ? { metadata: body.metadata as Metadata | null } : {}),
      ...(expires !== undefined ? { expiresAfterDays: expires === null ? null : expires.days } : {}),
    });
    return stillThere(await vectorStores.get(key.accountId, id), () => missingStore(id));
  });

  router.endpoint(deleteVectorStore, async ({ params, key }) => {
    const id = params.vector_store_id!;
    const running = await db.selectFrom('vector_store_files').select('job_id').where('vector_store_id', '=', id).where('account_id', '=', key.accountId).where('status', '=', 'in_progress').execute();
    if (!(await vectorStores.delete(key.accountId, id))) throw missingStore(id);
    for (const r of running) if (r.job_id) await jobs.cancel(r.job_id);
    return { id, object: 'vector_store.deleted', deleted: true };
  });

  router.endpoint(searchVectorStore, async ({ params, body, key, request }) => {
    const id = params.vector_store_id!;
    await usable(key.accountId, id);
    const query = body.query as string | string[];
    const ranking = body.ranking_options as { score_threshold?: number } | undefined;
    const data = await deps.search.search(
      key.accountId,
      [id],
      {
        query,
        maxResults: (body.max_num_results as number | undefined) ?? 10,
        filters: (body.filters as AttributeFilter | undefined) ?? null,
        ...(ranking?.score_threshold !== undefined ? { scoreThreshold: ranking.score_threshold } : {}),
      },
      callSignal(request.state),
    );
    return { object: 'vector_store.search_results.page', search_query: Array.isArray(query) ? query : [query], data, has_more: false, next_page: null };
  });

  // --- files ----------------------------------------------------------------------------

  router.endpoint(createVectorStoreFile, async ({ params, body, key }) => {
    const id = params.vector_store_id!;
    await usable(key.accountId, id);
    const fileId = body.file_id as string;
    if (!(await files.get(key.accountId, fileId))) throw invalidRequest(`No file found with id '${fileId}'.`, 'file_id');
    await checkFiles(key.accountId, [fileId], 'file_id');
    await addFiles(key.accountId, id, [{ fileId, attributes: (body.attributes as Attrs) ?? null, chunking: chunkingOf(body.chunking_strategy as ChunkingParam) }], false);
    return vectorStores.fileObject(stillThere(await vectorStores.fileRow(key.accountId, id, fileId), () => missingFile(fileId)));
  });

  router.endpoint(listVectorStoreFiles, async ({ params, query, key }) => {
    const id = params.vector_store_id!;
    if (!(await vectorStores.row(key.accountId, id))) throw missingStore(id);
    const page = await vectorStores.listFiles(key.accountId, id, { ...pageOptions(query), ...(typeof query.filter === 'string' ? { status: query.filter as FileStatus } : {}) });
    if (page === 'unknown_cursor') throw invalidRequest('No file with that cursor id in this vector store.', query.after ? 'after' : 'before');
    return page;
  });

  router.endpoint(getVectorStoreFile, async ({ params, key }) => {
    const row = await vectorStores.fileRow(key.accountId, params.vector_store_id!, params.file_id!);
    if (!row) throw missingFile(params.file_id!);
    return vectorStores.fileObject(row);
  });

  router.endpoint(updateVectorStoreFileAttributes, async ({ params, body, key }) => {
    await usable(key.accountId, params.vector_store_id!);
    const row = await vectorStores.updateAttributes(key.accountId, params.vector_store_id!, params.file_id!, (body.attributes as Attrs) ?? null);
    if (!row) throw missingFile(params.file_id!);
    return vectorStores.fileObject(row);
  });

  router.endpoint(deleteVectorStoreFile, async ({ params, key }) => {
    const removed = await vectorStores.removeFile(key.accountId, params.vector_store_id!, params.file_id!);
    if (!removed) throw missingFile(params.file_id!);
    if (removed.jobId) await jobs.cancel(removed.jobId);
    return { id: params.file_id!, object: 'vector_store.file.deleted', deleted: true };
  });

  router.endpoint(retrieveVectorStoreFileContent, async ({ params, key }) => {
    const row = await vectorStores.fileRow(key.accountId, params.vector_store_id!, params.file_id!);
    if (!row) throw missingFile(params.file_id!);
    // The parsed text, rebuilt from the passages without their overlaps, one part per passage.
    const data: { type: 'text'; text: string }[] = [];
    let after = -1;
    for (;;) {
      const page = await vectorStores.passages(row.vector_store_id, row.file_id, after, 500);
      for (const p of page) data.push({ type: 'text', text: p.text.slice(p.overlap_chars) });
      if (page.length < 500) break;
      after = Number(page.at(-1)!.seq);
    }
    return { object: 'vector_store.file_content.page', data, has_more: false, next_page: null };
  });

  // --- file batches ---------------------------------------------------------------------

  router.endpoint(createVectorStoreFileBatch, async ({ params, body, key }) => {
    const id = params.vector_store_id!;
    await usable(key.accountId, id);
    const ids = body.file_ids as string[] | undefined;
    const each = body.files as { file_id: string; attributes?: Attrs; chunking_strategy?: ChunkingParam }[] | undefined;
    if ((ids === undefined) === (each === undefined)) throw invalidRequest('Send exactly one of file_ids and files.', ids === undefined ? 'file_ids' : 'files');
    if (each && (body.attributes !== undefined || body.chunking_strategy !== undefined)) {
      throw invalidRequest('attributes and chunking_strategy apply to file_ids; with files, give them per file.', body.attributes !== undefined ? 'attributes' : 'chunking_strategy');
    }
    const list: NewFile[] = ids
      ? [...new Set(ids)].map((fileId) => ({ fileId, attributes: (body.attributes as Attrs) ?? null, chunking: chunkingOf(body.chunking_strategy as ChunkingParam) }))
      : each!.map((f) => ({ fileId: f.file_id, attributes: f.attributes ?? null, chunking: chunkingOf(f.chunking_strategy) }));
    await checkFiles(key.accountId, list.map((f) => f.fileId), ids ? 'file_ids' : 'files');
    const batchId = await addFiles(key.accountId, id, list, true);
    return stillThere(await vectorStores.batch(key.accountId, id, batchId!), () => missingBatch(batchId!));
  });

  router.endpoint(getVectorStoreFileBatch, async ({ params, key }) => {
    const batch = await vectorStores.batch(key.accountId, params.vector_store_id!, params.batch_id!);
    if (!batch) throw missingBatch(params.batch_id!);
    return batch;
  });

  router.endpoint(cancelVectorStoreFileBatch, async ({ params, key }) => {
    const jobIds = await vectorStores.cancelBatch(key.accountId, params.vector_store_id!, params.batch_id!);
    if (!jobIds) throw missingBatch(params.batch_id!);
    for (const j of jobIds) await jobs.cancel(j);
    // A job cancelled while it ran removes its own passages; this catches one that finished writing first.
    const cancelled = await db.selectFrom('vector_store_files').select('file_id').where('batch_id', '=', params.batch_id!).where('status', '=', 'cancelled').execute();
    await vectorStores.purgePassages(params.vector_store_id!, cancelled.map((r) => r.file_id));
    return stillThere(await vectorStores.batch(key.accountId, params.vector_store_id!, params.batch_id!), () => missingBatch(params.batch_id!));
  });

  router.endpoint(listFilesInVectorStoreBatch, async ({ params, query, key }) => {
    if (!(await vectorStores.batch(key.accountId, params.vector_store_id!, params.batch_id!))) throw missingBatch(params.batch_id!);
    const page = await vectorStores.listFiles(key.accountId, params.vector_store_id!, {
      ...pageOptions(query),
      batchId: params.batch_id!,
      ...(typeof query.filter === 'string' ? { status: query.filter as FileStatus } : {}),
    });
    if (page === 'unknown_cursor') throw invalidRequest('No file with that cursor id in this batch.', query.after ? 'after' : 'before');
    return page;
  });
}
