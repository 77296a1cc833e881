// DELETE /v1/files/{id} removes the file from every vector store that holds it, as the
// reference does: its rows (file_counts and usage_bytes drop), its passages from both
// indexes (so they no longer take the candidate slots of a search), its ingestion if it
// is still running. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { TestServer } from '../../../test/helpers/test-server.ts';
import { fileSearchClient, settled, startFileSearchServer } from './ingestion.test-support.ts';
import { VectorStores } from './vector-stores-store.ts';

let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startFileSearchServer();
  client = await fileSearchClient(server);
});
after(() => server.close());

const QUERY = 'tomato sunlight watering schedule';
const SMALL_CHUNKS = { type: 'static' as const, static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 0 } };

const upload = async (name: string, text: string) => (await client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' })).id;

test('a deleted file leaves every store: rows, counts, usage and passages; a search with max_num_results 5 finds the remaining file', async () => {
  // 80 passages that are nothing but the query: before the fix they filled every candidate slot.
  const flood = await upload('flood.txt', Array.from({ length: 80 }, () => `${QUERY}. `.repeat(20)).join('\n\n'));
  const kept = await upload('notes.md', `# Garden notes\n\nThe ${QUERY} is pinned in the shed, next to the harbour tide tables and the bicycle repair list.`);
  const first = (await client.vectorStores.create({ name: 'one', file_ids: [flood, kept], chunking_strategy: SMALL_CHUNKS })).id;
  const second = (await client.vectorStores.create({ name: 'two', file_ids: [flood], chunking_strategy: SMALL_CHUNKS })).id;
  const before1 = await settled(client, first);
  await settled(client, second);
  assert.equal(before1.file_counts.completed, 2);
  const keptOnly = (await client.vectorStores.files.retrieve(kept, { vector_store_id: first })).usage_bytes;

  const found = await client.vectorStores.search(first, { query: QUERY, max_num_results: 5 });
  assert.ok(found.data.every((r) => r.file_id === flood), 'the flood outranks the notes while it is there');

  assert.deepEqual(await client.files.delete(flood), { id: flood, object: 'file', deleted: true });

  const after1 = await client.vectorStores.retrieve(first);
  assert.deepEqual(after1.file_counts, { in_progress: 0, completed: 1, failed: 0, cancelled: 0, total: 1 });
  assert.equal(after1.usage_bytes, keptOnly);
  const after2 = await client.vectorStores.retrieve(second);
  assert.equal(after2.file_counts.total, 0);
  assert.equal(after2.usage_bytes, 0);
  assert.deepEqual((await client.vectorStores.files.list(first)).data.map((f) => f.id), [kept]);
  await assert.rejects(client.vectorStores.files.retrieve(flood, { vector_store_id: second }), (e: any) => e.status === 404);

  const db = server.app.services.store.db;
  assert.deepEqual(await db.selectFrom('vector_store_chunks').select('id').where('file_id', '=', flood).execute(), [], 'no passage of the deleted file is left');
  assert.deepEqual(await db.selectFrom('vector_store_files').select('vector_store_id').where('file_id', '=', flood).execute(), []);

  const now = await client.vectorStores.search(first, { query: QUERY, max_num_results: 5 });
  assert.deepEqual(now.data.map((r) => r.file_id), [kept], 'the remaining file is found');
  const none = await client.vectorStores.search(second, { query: QUERY, max_num_results: 5 });
  assert.deepEqual(none.data, []);
});

test('a file deleted while it is being indexed: the ingestion stops and leaves nothing behind', async () => {
  const big = await upload('big.txt', Array.from({ length: 3_000 }, (_, i) => `Paragraph ${i}: ${QUERY} and the harbour master's tide tables.`).join('\n\n'));
  const store = (await client.vectorStores.create({ name: 'racing', file_ids: [big], chunking_strategy: SMALL_CHUNKS })).id;
  await client.files.delete(big);
  const now = await settled(client, store);
  assert.equal(now.file_counts.total, 0);
  assert.equal(now.usage_bytes, 0);
  // Whatever the job wrote before it saw the removal is purged by it; give it its turn.
  const db = server.app.services.store.db;
  for (let i = 0; i < 400; i++) {
    const job = await db.selectFrom('jobs').select('status').where('kind', '=', 'vector_stores.ingest').where('payload', 'like', `%${big}%`).executeTakeFirst();
    if (!job || !['queued', 'running'].includes(job.status)) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.deepEqual(await db.selectFrom('vector_store_chunks').select('id').where('file_id', '=', big).execute(), []);
  assert.deepEqual(await db.selectFrom('vector_store_files').select('status').where('file_id', '=', big).execute(), []);
});

test("deleting a file another account holds in its store is 404 and changes nothing there", async () => {
  const other = await fileSearchClient(server);
  const mine = await upload('mine.txt', `${QUERY} for my garden.`);
  const store = (await client.vectorStores.create({ name: 'mine', file_ids: [mine] })).id;
  await settled(client, store);
  await assert.rejects(other.files.delete(mine), (e: any) => e.status === 404);
  assert.equal((await client.vectorStores.retrieve(store)).file_counts.completed, 1);
});

test('the vector store sweep removes what files deleted before this fix left in stores', async () => {
  const gone = await upload('gone.txt', `${QUERY} in the old greenhouse.`);
  const store = (await client.vectorStores.create({ name: 'older', file_ids: [gone] })).id;
  await settled(client, store);
  const db = server.app.services.store.db;
  // What DELETE /files did before: the upload's row and nothing else.
  await db.deleteFrom('files').where('id', '=', gone).execute();
  assert.equal((await client.vectorStores.retrieve(store)).file_counts.total, 1, 'left behind');
  await new VectorStores(db).expire();
  assert.equal((await client.vectorStores.retrieve(store)).file_counts.total, 0);
  assert.deepEqual(await db.selectFrom('vector_store_chunks').select('id').where('file_id', '=', gone).execute(), []);
});

test('attaching a file while it, or its store, is deleted answers 200 or 404, never a 500 (the fuzz gate found one)', async () => {
  const store = (await client.vectorStores.create({ name: 'racing' })).id;
  const statuses = new Set<number>();
  const status = (p: Promise<unknown>) => p.then(() => 200, (e: { status?: number }) => e.status ?? 0);
  for (let i = 0; i < 12; i++) {
    const file = await upload(`race-${i}.txt`, `race ${i}`);
    const target = i % 3 === 2 ? (await client.vectorStores.create({ name: `racing ${i}` })).id : store;
    const [attached] = await Promise.all([
      status(client.vectorStores.files.create(target, { file_id: file })),
      // Deleting the file, or the store, races the attach's read-back.
      i % 3 === 2 ? status(client.vectorStores.delete(target)) : status(client.files.delete(file)),
    ]);
    statuses.add(attached);
  }
  assert.ok([...statuses].every((s) => s === 200 || s === 404 || s === 400), `statuses: ${[...statuses].join(', ')}`);
});
