// The two candidate lists of a hybrid search, from the database's own indexes:
// nearest passages by vector, and passages matching the query's words (full text).
// SQLite: sqlite-vec's vec0 (partitioned by store, file id as a metadata column) and
// FTS5 with bm25. PostgreSQL: the tsvector/GIN index, and for vectors an in-process
// index loaded from the table (pgvector is not packaged here; see docs/retrieval.md).
import { sql, type Kysely } from 'kysely';
import type { Store } from '../store/db.ts';
import type { Database } from '../store/schema.ts';
import { sqliteReader, type SqliteReader } from './sqlite-reader.ts';

export interface Hit {
  chunkId: number;
  /** Vector hits: cosine similarity; text hits: the engine's rank (higher is better). */
  score: number;
}

export interface PassageIndex {
  /** The k nearest passages of the stores, only of `fileIds` when given. */
  nearest(storeIds: readonly string[], vector: Float32Array, k: number, fileIds: readonly string[] | null, signal?: AbortSignal): Promise<Hit[]>;
  /** Up to k passages matching any of the words, best first. */
  matching(storeIds: readonly string[], words: readonly string[], k: number, fileIds: readonly string[] | null): Promise<Hit[]>;
  /** Stops what the index runs beside the server (SQLite's reader thread). */
  close(): Promise<void>;
}

/** vec0 answers at most this many neighbours per query. */
const VEC0_MAX_K = 4096;
/** A file list longer than this is filtered after the search instead of inside it. */
const MAX_BOUND_FILES = 500;

export function vectorBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function vectorOf(bytes: Uint8Array): Float32Array {
  // Copy: the driver's buffer may be shared or unaligned.
  const copy = new Uint8Array(bytes);
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
}

/** The index of the configured database; `sqliteFile` lets SQLite's queries run on a reader thread. */
export function passageIndex(store: Store, sqliteFile?: string): PassageIndex {
  return store.kind === 'sqlite' ? new SqlitePassageIndex(sqliteReader(store, sqliteFile)) : new PostgresPassageIndex(store.db);
}

class SqlitePassageIndex implements PassageIndex {
  constructor(private readonly reader: SqliteReader) {}

  async nearest(storeIds: readonly string[], vector: Float32Array, k: number, fileIds: readonly string[] | null): Promise<Hit[]> {
    const bound = fileIds && fileIds.length <= MAX_BOUND_FILES ? fileIds : null;
    const allowed = fileIds && !bound ? new Set(fileIds) : null;
    const want = Math.min(VEC0_MAX_K, allowed ? VEC0_MAX_K : k);
    const hits: Hit[] = [];
    for (const storeId of storeIds) {
      const fileClause = bound ? ` and file_id in (${bound.map(() => '?').join(',')})` : '';
      const rows = await this.reader.all<{ id: number; file_id: string; distance: number }>(
        `select rowid as id, file_id, distance from vector_store_vec where embedding match ? and k = ? and vector_store_id = ?${fileClause}`,
        [vectorBytes(vector), want, storeId, ...(bound ?? [])],
      );
      for (const r of rows) if (!allowed || allowed.has(r.file_id)) hits.push({ chunkId: Number(r.id), score: 1 - r.distance });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, k);
  }

  async matching(storeIds: readonly string[], words: readonly string[], k: number, fileIds: readonly string[] | null): Promise<Hit[]> {
    if (words.length === 0) return [];
    const terms = words.map((w) => `"${w}"`).join(' OR ');
    const hits: Hit[] = [];
    const bound = fileIds && fileIds.length <= MAX_BOUND_FILES ? fileIds : null;
    const allowed = fileIds && !bound ? new Set(fileIds) : null;
    for (const storeId of storeIds) {
      // The store id is a column of the full-text table: the match stays inside the store.
      const query = `vector_store_id : "${storeId.replaceAll('"', '')}" AND text : (${terms})`;
      const fileClause = bound ? ` and c.file_id in (${bound.map(() => '?').join(',')})` : '';
      const rows = await this.reader.all<{ id: number; file_id: string; rank: number }>(
        `select c.id as id, c.file_id as file_id, bm25(vector_store_fts, 1.0, 0.0) as rank from vector_store_fts f join vector_store_chunks c on c.id = f.rowid
         where vector_store_fts match ?${fileClause} order by rank limit ?`,
        [query, ...(bound ?? []), allowed ? VEC0_MAX_K : k],
      );
      // bm25() is lower for better matches.
      for (const r of rows) if (!allowed || allowed.has(r.file_id)) hits.push({ chunkId: Number(r.id), score: -r.rank });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, k);
  }

  close(): Promise<void> {
    return this.reader.close();
  }
}

/** Floats kept by the in-process vector index of all stores together (about 256 MB). */
const MATRIX_BUDGET_FLOATS = 64 * 1024 * 1024;
/** Rows scored between two turns of the event loop. */
const SCAN_SLICE_ROWS = 4096;

interface LoadedStore {
  version: number;
  ids: Float64Array;
  files: string[];
  fileOf: Int32Array;
  dims: number;
  matrix: Float32Array;
}

class PostgresPassageIndex implements PassageIndex {
  /** Map order is recency of use: the first entry is evicted first. */
  private readonly loaded = new Map<string, LoadedStore>();
  private readonly loading = new Map<string, Promise<LoadedStore>>();

  constructor(private readonly db: Kysely<Database>) {}

  async nearest(storeIds: readonly string[], vector: Float32Array, k: number, fileIds: readonly string[] | null, signal?: AbortSignal): Promise<Hit[]> {
    const allowed = fileIds ? new Set(fileIds) : null;
    const top: Hit[] = [];
    for (const storeId of storeIds) {
      const s = await this.current(storeId);
      const mask = allowed ? s.files.map((f) => allowed.has(f)) : null;
      const n = s.ids.length;
      let sliceEnd = 0;
      for (let row = 0; row < n; row++) {
        if (row === sliceEnd) {
          if (row > 0) {
            await new Promise((resolve) => setImmediate(resolve));
            signal?.throwIfAborted();
          }
          sliceEnd = Math.min(n, row + SCAN_SLICE_ROWS);
        }
        if (mask && !mask[s.fileOf[row]!]) continue;
        let dot = 0;
        const base = row * s.dims;
        for (let i = 0; i < s.dims; i++) dot += s.matrix[base + i]! * vector[i]!;
        if (top.length < k || dot > top[top.length - 1]!.score) insertSorted(top, { chunkId: s.ids[row]!, score: dot }, k);
      }
    }
    return top;
  }

  async matching(storeIds: readonly string[], words: readonly string[], k: number, fileIds: readonly string[] | null): Promise<Hit[]> {
    if (words.length === 0) return [];
    const tsquery = words.join(' | ');
    let q = this.db
      .selectFrom('vector_store_chunks')
      .select(['id', sql<number>`ts_rank_cd(tsv, to_tsquery('english', ${tsquery}))`.as('rank')])
      .where('vector_store_id', 'in', storeIds)
      .where(sql<boolean>`tsv @@ to_tsquery('english', ${tsquery})`);
    if (fileIds) q = fileIds.length > 0 ? q.where('file_id', 'in', fileIds) : q.where(sql<boolean>`false`);
    const rows = await q.orderBy('rank', 'desc').limit(k).execute();
    return rows.map((r) => ({ chunkId: Number(r.id), score: Number(r.rank) }));
  }

  async close(): Promise<void> {
    this.loaded.clear();
  }

  /** The store's vectors as of its current index_version, loaded once per version. */
  private async current(storeId: string): Promise<LoadedStore> {
    const row = await this.db.selectFrom('vector_stores').select('index_version').where('id', '=', storeId).executeTakeFirst();
    const version = Number(row?.index_version ?? -1);
    const have = this.loaded.get(storeId);
    if (have && have.version === version) {
      this.loaded.delete(storeId);
      this.loaded.set(storeId, have);
      return have;
    }
    const key = `${storeId}@${version}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.load(storeId, version).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async load(storeId: string, version: number): Promise<LoadedStore> {
    const ids: number[] = [];
    const files: string[] = [];
    const fileIndex = new Map<string, number>();
    const fileOf: number[] = [];
    const parts: Float32Array[] = [];
    let dims = 0;
    let after = 0;
    // Pages by id, so no single query holds the whole store in the driver's memory.
    for (;;) {
      const page = await this.db
        .selectFrom('vector_store_chunks')
        .select(['id', 'file_id', 'embedding'])
        .where('vector_store_id', '=', storeId)
        .where('id', '>', after)
        .orderBy('id')
        .limit(2000)
        .execute();
      for (const r of page) {
        const v = vectorOf(r.embedding);
        dims ||= v.length;
        if (v.length !== dims) continue;
        ids.push(Number(r.id));
        let f = fileIndex.get(r.file_id);
        if (f === undefined) {
          f = files.length;
          files.push(r.file_id);
          fileIndex.set(r.file_id, f);
        }
        fileOf.push(f);
        parts.push(v);
      }
      if (page.length < 2000) break;
      after = Number(page.at(-1)!.id);
    }
    const matrix = new Float32Array(parts.length * dims);
    parts.forEach((v, i) => matrix.set(v, i * dims));
    const loaded: LoadedStore = { version, ids: Float64Array.from(ids), files, fileOf: Int32Array.from(fileOf), dims, matrix };
    this.loaded.delete(storeId);
    this.loaded.set(storeId, loaded);
    let total = 0;
    for (const s of this.loaded.values()) total += s.matrix.length;
    for (const [id, s] of this.loaded) {
      if (total <= MATRIX_BUDGET_FLOATS || id === storeId) break;
      this.loaded.delete(id);
      total -= s.matrix.length;
    }
    return loaded;
  }
}

function insertSorted(top: Hit[], hit: Hit, k: number): void {
  let i = top.length;
  while (i > 0 && top[i - 1]!.score < hit.score) i--;
  top.splice(i, 0, hit);
  if (top.length > k) top.pop();
}
