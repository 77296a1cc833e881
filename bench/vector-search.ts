// Vector store figures against agent-api in a child process, through the official
// openai SDK:
// - ingestion throughput: one large text file added to a store, chunks per second from
//   the add until the file is `completed` (extraction, chunking, embedding, writes);
// - search latency p50/p99 of POST /vector_stores/{id}/search at 10k and 100k chunks
//   (synthetic passages, embedded by the service's own embedder, written straight into
//   the store's tables so the figure does not wait for hours of ingestion);
// - recall@10 of the vector index against an exact brute-force search of the same vectors.
//
//   npm run bench:vector-search   (BENCH_SIZES=10000,100000; BENCH_QUERIES=200; BENCH_DATABASE_URL=postgres://… for PostgreSQL)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { loadConfig } from '../src/config.ts';
import { dot } from '../src/retrieval/embedder.ts';
import { LexicalEmbedder } from '../src/retrieval/lexical-embedder.ts';
import { passageIndex, vectorBytes } from '../src/retrieval/passage-index.ts';
import { openStore } from '../src/store/db.ts';
import { freePort, percentile, startChild, stopChild, serverArgs } from './lib.ts';

const sizes = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const queries = Number(process.env.BENCH_QUERIES ?? 200);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const pgUrl = process.env.BENCH_DATABASE_URL ?? '';

// Seeded xorshift, so runs compare.
let seed = 0x9e3779b9;
const rand = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
};
const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'sto', 'val', 'qui', 'dor', 'en', 'tha', 'por', 'lin', 'gar', 'bel', 'mos', 'tri', 'ux', 'fen', 'ia', 'cor'];
const VOCAB = Array.from({ length: 8000 }, () => Array.from({ length: 2 + Math.floor(rand() * 3) }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join(''));
// Zipf-like: low ranks far more common.
const word = () => VOCAB[Math.floor(VOCAB.length * Math.pow(rand(), 2.5))]!;
const passage = (n: number) => Array.from({ length: n }, word).join(' ') + '.';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-vs-'));
const port = await freePort();
const api = await startChild(
  serverArgs(root),
  { PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: pgUrl, AGENT_API_BOOTSTRAP_KEY: key, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', AGENT_API_JOBS_POLL_MS: '50' },
  `http://127.0.0.1:${port}/healthz`,
  30_000,
);
const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: pgUrl, LOG_LEVEL: 'silent' });
const store = await openStore(config.database);

try {
  const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, timeout: 600_000 });
  console.log(`vector stores, ${os.cpus().length} cores, ${pgUrl ? 'PostgreSQL (in-process vector index, tsvector)' : 'SQLite (sqlite-vec vec0, FTS5)'}`);

  // --- ingestion ---------------------------------------------------------------------
  const text = Array.from({ length: 4000 }, () => passage(60)).join('\n\n');
  const file = await client.files.create({ file: await toFile(Buffer.from(text), 'ingest.txt'), purpose: 'assistants' });
  const ingestStore = await client.vectorStores.create({ name: 'ingest' });
  const t0 = performance.now();
  await client.vectorStores.files.create(ingestStore.id, { file_id: file.id });
  let vsFile;
  for (;;) {
    vsFile = await client.vectorStores.files.retrieve(file.id, { vector_store_id: ingestStore.id });
    if (vsFile.status !== 'in_progress') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const ingestMs = performance.now() - t0;
  const row = await store.db.selectFrom('vector_store_files').select('chunk_count').where('file_id', '=', file.id).executeTakeFirstOrThrow();
  console.log(
    `ingestion   ${(text.length / 1024 / 1024).toFixed(1)} MB text -> ${row.chunk_count} chunks (800/400) in ${(ingestMs / 1000).toFixed(2)} s: ${(row.chunk_count / (ingestMs / 1000)).toFixed(0)} chunks/s (${vsFile.status})`,
  );

  // --- search at scale -----------------------------------------------------------------
  const embedder = new LexicalEmbedder(384);
  const index = passageIndex(store);
  const owner = await store.db.selectFrom('vector_stores').select('account_id').where('id', '=', ingestStore.id).executeTakeFirstOrThrow();
  for (const size of sizes) {
    const vs = await client.vectorStores.create({ name: `bench-${size}` });
    const holder = await client.files.create({ file: await toFile(Buffer.from('bench'), `bench-${size}.txt`), purpose: 'assistants' });
    await store.db
      .insertInto('vector_store_files')
      .values({ vector_store_id: vs.id, file_id: holder.id, account_id: owner.account_id, batch_id: null, status: 'completed', last_error: null, attributes: null, chunking: '{"max_chunk_size_tokens":800,"chunk_overlap_tokens":400}', usage_bytes: 0, chunk_count: size, job_id: null, created_at: Date.now(), seq: Date.now() * 1000 })
      .execute();
    const texts: string[] = [];
    const vectors: Float32Array[] = [];
    const tl = performance.now();
    for (let i = 0; i < size; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, size - i) }, () => passage(40 + Math.floor(rand() * 40)));
      const vs_ = await embedder.embed(batch);
      texts.push(...batch);
      vectors.push(...vs_);
      await store.db
        .insertInto('vector_store_chunks')
        .values(batch.map((t, j) => ({ account_id: owner.account_id, vector_store_id: vs.id, file_id: holder.id, seq: i + j, text: t, overlap_chars: 0, tokens: 60, bytes: t.length + 1536, embedding: vectorBytes(vs_[j]!) })))
        .execute();
    }
    await store.db.updateTable('vector_stores').set({ index_version: 1 }).where('id', '=', vs.id).execute();
    const loadS = (performance.now() - tl) / 1000;
    const ids = (await store.db.selectFrom('vector_store_chunks').select('id').where('vector_store_id', '=', vs.id).orderBy('id').execute()).map((r) => Number(r.id));

    // Queries: five words of a random passage, in another order.
    const qs = Array.from({ length: queries }, () => {
      const words = texts[Math.floor(rand() * texts.length)]!.replace('.', '').split(' ');
      return Array.from({ length: 5 }, () => words[Math.floor(rand() * words.length)]).join(' ');
    });
    await client.vectorStores.search(vs.id, { query: qs[0]! }); // warm (PostgreSQL loads its in-process index here)
    const lat: number[] = [];
    for (const q of qs) {
      const t = performance.now();
      await client.vectorStores.search(vs.id, { query: q, max_num_results: 10 });
      lat.push(performance.now() - t);
    }
    lat.sort((a, b) => a - b);
    // recall@10 of the vector index against exact search over the same vectors.
    let agree = 0;
    const sample = qs.slice(0, Math.min(50, qs.length));
    for (const q of sample) {
      const [qv] = await embedder.embed([q]);
      const got = new Set((await index.nearest([vs.id], qv!, 10, null)).map((h) => h.chunkId));
      const exact = vectors.map((v, i) => ({ i, s: dot(v, qv!) })).sort((a, b) => b.s - a.s).slice(0, 10);
      agree += exact.filter((e) => got.has(ids[e.i]!)).length;
    }
    console.log(
      `search ${String(size).padStart(6)} chunks  p50 ${percentile(lat, 50).toFixed(1)} ms  p99 ${percentile(lat, 99).toFixed(1)} ms  (${queries} queries over HTTP, hybrid)  recall@10 vs exact ${(agree / (sample.length * 10)).toFixed(3)}  [loaded in ${loadS.toFixed(1)} s]`,
    );
  }

  // --- embeddings requests/s is bench:embeddings -----------------------------------------
} finally {
  await store.close();
  await stopChild(api);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
