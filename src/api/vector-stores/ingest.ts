// Ingestion of one file into one vector store, as a durable job: read the upload,
// extract its text (documents/), cut it into token windows, embed each window with the
// service's embedder, and write the passages. Passages are written in small
// transactions keyed by (store, file, position) with "do nothing" on conflict, so a job
// cut off by a restart resumes by running again without duplicating a passage; the
// file becomes `completed` only through a conditional update from `in_progress`, so a
// cancel or removal in the meantime wins and its passages are removed. A file that
// cannot be parsed ends `failed` with `last_error`, never a crash; past the account's
// index cap (SPEC: 500 MB of passages and vectors) it ends `failed` saying so.
import { sql } from 'kysely';
import { DocumentError } from '../../documents/document-error.ts';
import { extractText } from '../../documents/extract-text.ts';
import { JobInterrupted, jobKind, type JobHandler } from '../../jobs/types.ts';
import { chunkText, type Chunking } from '../../retrieval/chunking.ts';
import type { Embedder } from '../../retrieval/embedder.ts';
import { vectorBytes } from '../../retrieval/passage-index.ts';
import type { Store } from '../../store/db.ts';
import type { StoredFiles } from '../files/stored-files.ts';
import type { VectorStores } from './vector-stores-store.ts';

export interface IngestPayload {
  accountId: string;
  vectorStoreId: string;
  fileId: string;
}

export const ingestJob = jobKind<IngestPayload, never, null>('vector_stores.ingest', { maxAttempts: 3 });

/** SPEC "Vector store": each account's index holds up to 500 MB of passages and vectors. */
export const ACCOUNT_INDEX_BYTES = 500 * 1024 * 1024;
/** Largest upload read for indexing (the text extracted from it is capped by documents/). */
export const MAX_INDEXED_FILE_BYTES = 64 * 1024 * 1024;
/** Passages embedded and written per transaction. */
const WRITE_BATCH = 64;

export interface IngestDeps {
  store: Store;
  files: StoredFiles;
  vectorStores: VectorStores;
  embedder: Embedder;
  /** Index cap per account (bytes); default ACCOUNT_INDEX_BYTES. */
  accountIndexBytes?: number;
}

class IngestFailure extends Error {
  constructor(
    readonly code: 'server_error' | 'unsupported_file' | 'invalid_file',
    message: string,
  ) {
    super(message);
  }
}

export function ingestHandler(deps: IngestDeps): JobHandler<IngestPayload, never, null> {
  const { store, files, vectorStores, embedder } = deps;
  const db = store.db;
  const cap = deps.accountIndexBytes ?? ACCOUNT_INDEX_BYTES;

  const fail = async (p: IngestPayload, code: string, message: string) => {
    await vectorStores.purgePassages(p.vectorStoreId, [p.fileId]);
    await db.transaction().execute(async (trx) => {
      await trx
        .updateTable('vector_store_files')
        .set({ status: 'failed', last_error: JSON.stringify({ code, message }), usage_bytes: 0, chunk_count: 0 })
        .where('vector_store_id', '=', p.vectorStoreId)
        .where('file_id', '=', p.fileId)
        .where('status', '=', 'in_progress')
        .execute();
      await trx.updateTable('vector_stores').set({ index_version: sql`index_version + 1` }).where('id', '=', p.vectorStoreId).execute();
    });
  };

  return async (ctx) => {
    const p = ctx.payload;
    const row = await db.selectFrom('vector_store_files').selectAll().where('vector_store_id', '=', p.vectorStoreId).where('file_id', '=', p.fileId).executeTakeFirst();
    if (!row || row.status !== 'in_progress') return null;
    try {
      const read = await files.read(p.accountId, p.fileId, MAX_INDEXED_FILE_BYTES);
      if (read === undefined) throw new IngestFailure('invalid_file', `The file ${p.fileId} no longer exists.`);
      if (read === 'too_large') throw new IngestFailure('invalid_file', `The file ${p.fileId} is larger than ${MAX_INDEXED_FILE_BYTES / 1024 / 1024} MB, the most that is indexed.`);
      let text: string;
      try {
        text = (await extractText({ bytes: read.content, filename: read.file.filename, signal: ctx.signal })).text;
      } catch (err: unknown) {
        if (err instanceof DocumentError) throw new IngestFailure(err.code === 'unsupported_file' ? 'unsupported_file' : 'invalid_file', err.message);
        throw err;
      }
      ctx.signal.throwIfAborted();
      // Already written by an earlier attempt: those positions are skipped, not embedded again.
      const done = new Set(
        (await db.selectFrom('vector_store_chunks').select('seq').where('vector_store_id', '=', p.vectorStoreId).where('file_id', '=', p.fileId).execute()).map((r) => Number(r.seq)),
      );
      const usedElsewhere = (await vectorStores.accountUsage(p.accountId)) - Number(row.usage_bytes);
      let bytes = 0;
      let seq = 0;
      let pending: { seq: number; text: string; tokens: number; overlapChars: number }[] = [];
      const flush = async () => {
        if (pending.length === 0) return;
        const vectors = await embedder.embed(pending.map((c) => c.text), ctx.signal);
        ctx.signal.throwIfAborted();
        const rows = pending.map((c, i) => ({
          account_id: p.accountId,
          vector_store_id: p.vectorStoreId,
          file_id: p.fileId,
          seq: c.seq,
          text: c.text,
          overlap_chars: c.overlapChars,
          tokens: c.tokens,
          bytes: Buffer.byteLength(c.text) + vectors[i]!.byteLength,
          embedding: vectorBytes(vectors[i]!),
        }));
        pending = [];
        await db.insertInto('vector_store_chunks').values(rows).onConflict((oc) => oc.columns(['vector_store_id', 'file_id', 'seq']).doNothing()).execute();
      };
      for await (const chunk of chunkText(text.replaceAll('\u0000', ''), JSON.parse(row.chunking) as Chunking)) {
        const size = Buffer.byteLength(chunk.text) + embedder.dimensions * 4;
        bytes += size;
        if (usedElsewhere + bytes > cap) {
          throw new IngestFailure('invalid_file', `The account's search index is full: it holds at most ${Math.round(cap / 1024 / 1024)} MB of passages and vectors. Delete vector stores or files to make room.`);
        }
        if (!done.has(seq)) pending.push({ seq, text: chunk.text, tokens: chunk.tokens, overlapChars: chunk.overlapChars });
        seq++;
        if (pending.length >= WRITE_BATCH) await flush();
      }
      await flush();
      if (seq === 0) throw new IngestFailure('invalid_file', `The file ${read.file.filename} has no text to index.`);
      const finished = await db.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable('vector_store_files')
          .set({ status: 'completed', usage_bytes: bytes, chunk_count: seq, last_error: null })
          .where('vector_store_id', '=', p.vectorStoreId)
          .where('file_id', '=', p.fileId)
          .where('status', '=', 'in_progress')
          .executeTakeFirst();
        await trx.updateTable('vector_stores').set({ index_version: sql`index_version + 1`, last_active_at: Date.now() }).where('id', '=', p.vectorStoreId).execute();
        return Number(r.numUpdatedRows) > 0;
      });
      // Cancelled or removed meanwhile: what this run wrote goes.
      if (!finished) await vectorStores.purgePassages(p.vectorStoreId, [p.fileId]);
      return null;
    } catch (err) {
      if (err instanceof IngestFailure) {
        await fail(p, err.code, err.message);
        return null;
      }
      // Interrupted: after a shutdown the job runs again and keeps what was written; after a
      // cancel (file batch cancelled) the file is cancelled and its passages go.
      if (ctx.signal.aborted) {
        const reason = ctx.signal.reason;
        if (reason instanceof JobInterrupted && reason.reason === 'cancelled') {
          await vectorStores.purgePassages(p.vectorStoreId, [p.fileId]);
        }
        throw err;
      }
      // Anything else: retried by the runner; on the last attempt the file fails cleanly.
      if (ctx.attempt >= ctx.maxAttempts) {
        await fail(p, 'server_error', 'The file could not be indexed.');
        return null;
      }
      throw err;
    }
  };
}
