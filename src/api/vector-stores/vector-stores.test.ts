// Vector stores with the official openai SDK, on the database the run selected: stores,
// files, file batches (with cancel), content, search with every filter operator and a
// score threshold, expiry, and another account seeing none of it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { TestServer } from '../../../test/helpers/test-server.ts';
import { fileSearchClient, settled, startFileSearchServer } from './ingestion.test-support.ts';
import { VectorStores } from './vector-stores-store.ts';

let server: TestServer;
let client: OpenAI;
let other: OpenAI;
before(async () => {
  server = await startFileSearchServer();
  client = await fileSearchClient(server);
  other = await fileSearchClient(server);
});
after(() => server.close());

const upload = async (c: OpenAI, name: string, text: string | Buffer) => c.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' });

const GARDEN = `# Growing tomatoes\n\nTomato plants need at least six hours of direct sunlight a day. Water them deeply twice a week so the roots grow down.\n\nPinch off the suckers that sprout between the stem and the branches.`;
const HARBOUR = `The harbour master keeps the tide tables for the port. Ships may enter the harbour two hours either side of high water.`;

test('a store with file_ids: indexed, counted, listed, updated, deleted; content is the text', async () => {
  const a = await upload(client, 'garden.md', GARDEN);
  const b = await upload(client, 'harbour.txt', HARBOUR);
  const created = await client.vectorStores.create({ name: 'notes', file_ids: [a.id, b.id], metadata: { team: 'docs' }, expires_after: { anchor: 'last_active_at', days: 7 } });
  assert.match(created.id, /^vs_/);
  assert.equal(created.object, 'vector_store');
  assert.equal(created.name, 'notes');
  assert.equal(created.file_counts.total, 2);
  const store = await settled(client, created.id);
  assert.equal(store.status, 'completed');
  assert.deepEqual(store.file_counts, { in_progress: 0, completed: 2, failed: 0, cancelled: 0, total: 2 });
  assert.ok(store.usage_bytes > GARDEN.length, 'passages and vectors are counted');
  assert.deepEqual(store.expires_after, { anchor: 'last_active_at', days: 7 });
  assert.equal(store.expires_at, store.last_active_at! + 7 * 86_400);
  assert.deepEqual(store.metadata, { team: 'docs' });

  const files = await client.vectorStores.files.list(created.id);
  assert.deepEqual(files.data.map((f) => f.id).sort(), [a.id, b.id].sort());
  const file = await client.vectorStores.files.retrieve(a.id, { vector_store_id: created.id });
  assert.equal(file.status, 'completed');
  assert.equal(file.last_error, null);
  assert.deepEqual(file.chunking_strategy, { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } });
  const content = [];
  for await (const part of client.vectorStores.files.content(a.id, { vector_store_id: created.id })) content.push(part.text);
  assert.equal(content.join('').trim(), GARDEN.replace(/\n\n+/g, '\n\n').trim());

  const updated = await client.vectorStores.update(created.id, { name: 'renamed', metadata: { team: 'ops' }, expires_after: null });
  assert.equal(updated.name, 'renamed');
  assert.deepEqual(updated.metadata, { team: 'ops' });
  assert.equal(updated.expires_at, null);
  const listed = await client.vectorStores.list();
  assert.ok(listed.data.some((s) => s.id === created.id));
  const deleted = await client.vectorStores.delete(created.id);
  assert.deepEqual(deleted, { id: created.id, object: 'vector_store.deleted', deleted: true });
  await assert.rejects(client.vectorStores.retrieve(created.id), (e: any) => e.status === 404 && e.param === 'vector_store_id');
  assert.equal((await client.files.retrieve(a.id)).id, a.id, 'the uploaded file stays');
});

test('search finds the passage, list queries fuse, max_num_results and score_threshold apply; hybrid_search refused', async () => {
  const a = await upload(client, 'garden.md', GARDEN);
  const b = await upload(client, 'harbour.txt', HARBOUR);
  const store = await client.vectorStores.create({ file_ids: [a.id, b.id] });
  await settled(client, store.id);
  const found = await client.vectorStores.search(store.id, { query: 'how much sun does a tomato plant need' });
  assert.equal(found.data[0]!.file_id, a.id);
  assert.equal(found.data[0]!.filename, 'garden.md');
  assert.match(found.data[0]!.content[0]!.text, /six hours of direct sunlight/);
  assert.ok(found.data[0]!.score > 0 && found.data[0]!.score <= 1);
  const both = await client.vectorStores.search(store.id, { query: ['tomato sunlight', 'when can ships enter the port'], max_num_results: 2 });
  assert.deepEqual(both.data.map((r) => r.file_id).sort(), [a.id, b.id].sort());
  const one = await client.vectorStores.search(store.id, { query: 'tide tables', max_num_results: 1 });
  assert.equal(one.data.length, 1);
  assert.equal(one.data[0]!.file_id, b.id);
  const strict = await client.vectorStores.search(store.id, { query: 'quantum chromodynamics lattice', ranking_options: { score_threshold: 0.5 } });
  assert.deepEqual(strict.data, []);
  const raw = await server.fetch(`/v1/vector_stores/${store.id}/search`, {
    method: 'POST',
    key: (client as any).apiKey,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'x', ranking_options: { hybrid_search: { embedding_weight: 1, text_weight: 1 } } }),
  });
  assert.equal(raw.status, 400);
  assert.equal(((await raw.json()) as any).error.param, 'ranking_options.hybrid_search');
});

test('attributes: every filter operator, nested and / or; update replaces them', async () => {
  const store = await client.vectorStores.create({ name: 'reports' });
  const docs = [
    { name: 'r2021.txt', attributes: { year: 2021, region: 'eu', final: true } },
    { name: 'r2022.txt', attributes: { year: 2022, region: 'us', final: false } },
    { name: 'r2023.txt', attributes: { year: 2023, region: 'eu', final: false } },
  ];
  const ids: Record<string, string> = {};
  for (const d of docs) {
    const f = await upload(client, d.name, `Annual report about rainfall and river levels, year ${d.attributes.year}.`);
    ids[d.attributes.year] = f.id;
    const added = await client.vectorStores.files.create(store.id, { file_id: f.id, attributes: d.attributes, chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 50 } } });
    assert.deepEqual(added.attributes, d.attributes);
  }
  await settled(client, store.id);
  const years = async (filters: any) => (await client.vectorStores.search(store.id, { query: 'rainfall report', filters })).data.map((r) => r.attributes!.year).sort();
  assert.deepEqual(await years({ type: 'eq', key: 'region', value: 'eu' }), [2021, 2023]);
  assert.deepEqual(await years({ type: 'ne', key: 'region', value: 'eu' }), [2022]);
  assert.deepEqual(await years({ type: 'gt', key: 'year', value: 2021 }), [2022, 2023]);
  assert.deepEqual(await years({ type: 'gte', key: 'year', value: 2022 }), [2022, 2023]);
  assert.deepEqual(await years({ type: 'lt', key: 'year', value: 2022 }), [2021]);
  assert.deepEqual(await years({ type: 'lte', key: 'year', value: 2022 }), [2021, 2022]);
  assert.deepEqual(await years({ type: 'in', key: 'year', value: [2021, 2023] }), [2021, 2023]);
  assert.deepEqual(await years({ type: 'nin', key: 'year', value: [2021, 2023] }), [2022]);
  assert.deepEqual(await years({ type: 'eq', key: 'final', value: true }), [2021]);
  assert.deepEqual(
    await years({ type: 'or', filters: [{ type: 'eq', key: 'region', value: 'us' }, { type: 'and', filters: [{ type: 'eq', key: 'region', value: 'eu' }, { type: 'gte', key: 'year', value: 2023 }] }] }),
    [2022, 2023],
  );
  const wide = { type: 'or', filters: Array.from({ length: 65 }, (_, i) => ({ type: 'eq', key: 'year', value: i })) };
  await assert.rejects(client.vectorStores.search(store.id, { query: 'x', filters: wide as any }), (e: any) => e.status === 400 && String(e.param).startsWith('filters'));
  let deep: any = { type: 'eq', key: 'year', value: 1 };
  for (let i = 0; i < 9; i++) deep = { type: 'and', filters: [deep] };
  await assert.rejects(client.vectorStores.search(store.id, { query: 'x', filters: deep }), (e: any) => e.status === 400 && String(e.param).startsWith('filters'));
  const changed = await client.vectorStores.files.update(ids['2021']!, { vector_store_id: store.id, attributes: { year: 2031, region: 'apac' } });
  assert.deepEqual(changed.attributes, { year: 2031, region: 'apac' });
  assert.deepEqual(await years({ type: 'eq', key: 'region', value: 'apac' }), [2031]);
  const page = await client.vectorStores.files.list(store.id, { filter: 'completed', limit: 2 });
  assert.equal(page.data.length, 2);
  assert.equal(page.has_more, true);
  const rest = await client.vectorStores.files.list(store.id, { filter: 'completed', after: page.data[1]!.id });
  assert.equal(rest.data.length, 1);
  assert.deepEqual((await client.vectorStores.files.list(store.id, { filter: 'failed' })).data, []);
  const removed = await client.vectorStores.files.delete(ids['2022']!, { vector_store_id: store.id });
  assert.deepEqual(removed, { id: ids['2022'], object: 'vector_store.file.deleted', deleted: true });
  assert.deepEqual(await years({ type: 'eq', key: 'region', value: 'us' }), []);
  await assert.rejects(client.vectorStores.files.create(store.id, { file_id: ids['2022']!, attributes: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i])) }), (e: any) => e.status === 400 && e.param === 'attributes');
});

test('file batches: file_ids or files, listed, counted; cancel stops the unfinished files', async () => {
  const store = await client.vectorStores.create({});
  const uploads = [];
  for (let i = 0; i < 3; i++) uploads.push(await upload(client, `b${i}.txt`, `Batch document ${i} about lighthouses and their keepers.`));
  const batch = await client.vectorStores.fileBatches.create(store.id, { file_ids: uploads.map((u) => u.id), attributes: { source: 'batch' } });
  assert.match(batch.id, /^vsfb_/);
  assert.equal(batch.object, 'vector_store.files_batch');
  assert.equal(batch.file_counts.total, 3);
  await settled(client, store.id);
  const done = await client.vectorStores.fileBatches.retrieve(batch.id, { vector_store_id: store.id });
  assert.equal(done.status, 'completed');
  assert.equal(done.file_counts.completed, 3);
  const files = await client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id });
  assert.equal(files.data.length, 3);
  assert.deepEqual(files.data[0]!.attributes, { source: 'batch' });

  const more = [];
  // One at a time: an account runs at most 6 requests at once.
  for (let i = 0; i < 12; i++) more.push(await upload(client, `c${i}.txt`, `Cancelled document ${i}. ${'Lighthouse lamp oil and clockwork. '.repeat(2000)}`));
  const second = await client.vectorStores.fileBatches.create(store.id, { files: more.map((u, i) => ({ file_id: u.id, attributes: { n: i } })) });
  const cancelled = await client.vectorStores.fileBatches.cancel(second.id, { vector_store_id: store.id });
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(cancelled.file_counts.in_progress, 0);
  assert.ok(cancelled.file_counts.cancelled > 0, 'files not yet indexed are cancelled');
  await settled(client, store.id);
  const after = await client.vectorStores.fileBatches.retrieve(second.id, { vector_store_id: store.id });
  assert.equal(after.status, 'cancelled');
  assert.equal(after.file_counts.cancelled + after.file_counts.completed, 12);
  const cancelledIds = new Set((await client.vectorStores.fileBatches.listFiles(second.id, { vector_store_id: store.id, filter: 'cancelled', limit: 100 })).data.map((f) => f.id));
  const hits = await client.vectorStores.search(store.id, { query: 'lighthouse lamp oil clockwork', max_num_results: 50 });
  assert.ok(hits.data.every((h) => !cancelledIds.has(h.file_id)), 'a cancelled file is not searched');
  const rows = await server.app.services.store.db.selectFrom('vector_store_chunks').select('file_id').where('file_id', 'in', [...cancelledIds]).execute();
  assert.equal(rows.length, 0, 'a cancelled file keeps no passages');
  await assert.rejects(client.vectorStores.fileBatches.create(store.id, {} as any), (e: any) => e.status === 400);
});

test('a store idle past its expiry expires: passages go, search and adding files are refused', async () => {
  const f = await upload(client, 'e.txt', 'Expiring note about glaciers.');
  const store = await client.vectorStores.create({ file_ids: [f.id], expires_after: { anchor: 'last_active_at', days: 1 } });
  await settled(client, store.id);
  const db = server.app.services.store.db;
  await db.updateTable('vector_stores').set({ last_active_at: Date.now() - 2 * 86_400_000 }).where('id', '=', store.id).execute();
  assert.equal(await new VectorStores(db).expire(), 1);
  const expired = await client.vectorStores.retrieve(store.id);
  assert.equal(expired.status, 'expired');
  await assert.rejects(client.vectorStores.search(store.id, { query: 'glaciers' }), (e: any) => e.status === 400 && e.param === 'vector_store_id');
  await assert.rejects(client.vectorStores.files.create(store.id, { file_id: f.id }), (e: any) => e.status === 400);
  const left = await db.selectFrom('vector_store_chunks').select('id').where('vector_store_id', '=', store.id).execute();
  assert.equal(left.length, 0);
});

test('another account sees none of it', async () => {
  const f = await upload(client, 'secret.txt', 'The vault code is written on the blue card.');
  const store = await client.vectorStores.create({ file_ids: [f.id] });
  await settled(client, store.id);
  const batch = await client.vectorStores.fileBatches.create(store.id, { file_ids: [f.id] });
  await assert.rejects(other.vectorStores.retrieve(store.id), (e: any) => e.status === 404);
  await assert.rejects(other.vectorStores.search(store.id, { query: 'vault code' }), (e: any) => e.status === 404);
  await assert.rejects(other.vectorStores.files.retrieve(f.id, { vector_store_id: store.id }), (e: any) => e.status === 404);
  await assert.rejects(other.vectorStores.files.list(store.id), (e: any) => e.status === 404);
  await assert.rejects(other.vectorStores.fileBatches.retrieve(batch.id, { vector_store_id: store.id }), (e: any) => e.status === 404);
  await assert.rejects(other.vectorStores.delete(store.id), (e: any) => e.status === 404);
  assert.ok(!(await other.vectorStores.list()).data.some((s) => s.id === store.id));
  // Their own store cannot take this account's file.
  const theirs = await other.vectorStores.create({});
  await assert.rejects(other.vectorStores.files.create(theirs.id, { file_id: f.id }), (e: any) => e.status === 400 && e.param === 'file_id');
  await assert.rejects(other.vectorStores.create({ file_ids: [f.id] }), (e: any) => e.status === 400 && e.param === 'file_ids[0]');
  // A key without the File search switch.
  const plain = server.openai((await server.createKey()).key);
  await assert.rejects(plain.vectorStores.list(), (e: any) => e.status === 403);
});
