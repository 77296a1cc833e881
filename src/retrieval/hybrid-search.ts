// Vector store search (POST /vector_stores/{id}/search and the file_search tool): hybrid
// retrieval over the database's own indexes. For each query text, candidates come from
// the vector index (nearest passages to the query's embedding) and from the full-text
// index (passages holding its words); each candidate is scored
//   0.5 · cosine similarity (≥ 0) + 0.3 · share of the query's words it holds
//   + 0.2 · reciprocal rank fusion of its two ranks (normalized to 0..1),
// so a score is in 0..1 and means the same for every query: score_threshold works as an
// absolute bar. Several query texts are searched together: a passage keeps its best
// score. Only completed files of the account's own, unexpired stores are searched, and
// the attribute filter narrows the files before the indexes are asked.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { matches } from './attribute-filter.ts';
import { dot, type Embedder } from './embedder.ts';
import { queryTerms } from './lexical-embedder.ts';
import type { PassageIndex } from './passage-index.ts';
import { vectorOf } from './passage-index.ts';
import type { Attributes, SearchOptions, SearchResult, StoreState, VectorSearch } from './search-types.ts';

const RRF_K = 60;
const W_VECTOR = 0.5;
const W_WORDS = 0.3;
const W_FUSION = 0.2;
/** Candidates taken from each index per query text. */
const MIN_CANDIDATES = 40;
const MAX_CANDIDATES = 150;

export class HybridSearch implements VectorSearch {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly index: PassageIndex,
    private readonly embedder: Embedder,
    private readonly clock: () => number = Date.now,
  ) {}

  async search(accountId: string, vectorStoreIds: readonly string[], options: SearchOptions, signal?: AbortSignal): Promise<SearchResult[]> {
    const max = options.maxResults ?? 10;
    const stores = vectorStoreIds.length
      ? (
          await this.db
            .selectFrom('vector_stores')
            .select('id')
            .where('id', 'in', [...new Set(vectorStoreIds)])
            .where('account_id', '=', accountId)
            .where('expired_at', 'is', null)
            .execute()
        ).map((r) => r.id)
      : [];
    if (stores.length === 0) return [];
    const files = await this.db
      .selectFrom('vector_store_files as v')
      .innerJoin('files as f', 'f.id', 'v.file_id')
      .select(['v.file_id', 'v.attributes', 'f.filename'])
      .where('v.vector_store_id', 'in', stores)
      .where('v.status', '=', 'completed')
      .execute();
    const info = new Map<string, { filename: string; attributes: Attributes | null }>();
    for (const f of files) {
      const attributes = f.attributes ? (JSON.parse(f.attributes) as Attributes) : null;
      if (options.filters && !matches(options.filters, attributes)) continue;
      info.set(f.file_id, { filename: f.filename, attributes });
    }
    if (info.size === 0) return [];
    // The indexes are narrowed to the files only under a filter; otherwise a candidate of a
    // file still being indexed is dropped below, which keeps the index queries plain.
    const fileIds = options.filters ? [...info.keys()] : null;
    const queries = (Array.isArray(options.query) ? options.query : [options.query]).filter((q) => q.trim() !== '');
    const k = Math.min(MAX_CANDIDATES, Math.max(MIN_CANDIDATES, max * 3));
    const best = new Map<number, number>();
    const vectors = await this.embedder.embed(queries, signal);
    const chunkCache = new Map<number, { text: string; lower: string; file_id: string; embedding: Float32Array }>();
    for (let qi = 0; qi < queries.length; qi++) {
      const terms = queryTerms(queries[qi]!);
      const [near, text] = await Promise.all([
        this.index.nearest(stores, vectors[qi]!, k, fileIds, signal),
        this.index.matching(stores, terms.map((t) => t.word), k, fileIds),
      ]);
      const rankNear = new Map(near.map((h, i) => [h.chunkId, i + 1]));
      const rankText = new Map(text.map((h, i) => [h.chunkId, i + 1]));
      const ids = [...new Set([...rankNear.keys(), ...rankText.keys()])];
      await this.loadChunks(ids.filter((id) => !chunkCache.has(id)), chunkCache);
      for (const id of ids) {
        const c = chunkCache.get(id);
        if (!c || !info.has(c.file_id)) continue;
        const cos = Math.max(0, dot(c.embedding, vectors[qi]!));
        const words = terms.length ? terms.filter((t) => c.lower.includes(t.stem)).length / terms.length : 0;
        const rn = rankNear.get(id);
        const rt = rankText.get(id);
        const fusion = ((rn ? 1 / (RRF_K + rn) : 0) + (rt ? 1 / (RRF_K + rt) : 0)) / (2 / (RRF_K + 1));
        const score = Math.min(1, W_VECTOR * cos + W_WORDS * words + W_FUSION * fusion);
        if (score > (best.get(id) ?? -1)) best.set(id, score);
      }
    }
    const threshold = options.scoreThreshold ?? 0;
    const ranked = [...best.entries()].filter(([, s]) => s >= threshold).sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, max);
    void this.touch(stores);
    return ranked.map(([id, score]) => {
      const c = chunkCache.get(id)!;
      const f = info.get(c.file_id)!;
      return { file_id: c.file_id, filename: f.filename, score: Math.round(score * 1e6) / 1e6, attributes: f.attributes ?? {}, content: [{ type: 'text' as const, text: c.text }] };
    });
  }

  async storeStates(accountId: string, vectorStoreIds: readonly string[]): Promise<Map<string, StoreState>> {
    if (vectorStoreIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('vector_stores')
      .select(['id', 'expired_at'])
      .where('id', 'in', [...new Set(vectorStoreIds)])
      .where('account_id', '=', accountId)
      .execute();
    return new Map(rows.map((r) => [r.id, r.expired_at === null ? 'active' : 'expired']));
  }

  private async loadChunks(ids: number[], into: Map<number, { text: string; lower: string; file_id: string; embedding: Float32Array }>): Promise<void> {
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await this.db.selectFrom('vector_store_chunks').select(['id', 'file_id', 'text', 'embedding']).where('id', 'in', ids.slice(i, i + 500)).execute();
      for (const r of rows) into.set(Number(r.id), { text: r.text, lower: r.text.toLowerCase(), file_id: r.file_id, embedding: vectorOf(r.embedding) });
    }
  }

  /** A search is activity: the stores' expiry counts from now (best effort, not awaited by the caller). */
  private async touch(stores: string[]): Promise<void> {
    await this.db
      .updateTable('vector_stores')
      .set({ last_active_at: this.clock() })
      .where('id', 'in', stores)
      .where(sql<boolean>`expired_at is null`)
      .execute()
      .catch(() => undefined);
  }
}
