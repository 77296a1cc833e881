// The file_search tool of /v1/responses over real vector stores (ingested files, the
// hybrid search), with the official openai SDK: streamed and not, results only with
// include, file_citation annotations on the file that answered; another account's, an
// unknown or an expired store id is refused before any model runs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { TestServer } from '../../../test/helpers/test-server.ts';
import { checkStream } from '../responses/event-checks.test-support.ts';
import { fileSearchClient, settled, startFileSearchServer } from './ingestion.test-support.ts';

let server: TestServer;
let client: OpenAI;
let other: OpenAI;
let storeId: string;
let garden: string;
before(async () => {
  server = await startFileSearchServer();
  client = await fileSearchClient(server);
  other = await fileSearchClient(server);
  const text = `# Growing tomatoes\n\nTomato plants need at least six hours of direct sunlight a day. Water them deeply twice a week so the roots grow down.`;
  garden = (await client.files.create({ file: await toFile(Buffer.from(text), 'garden.md'), purpose: 'assistants' })).id;
  const harbour = await client.files.create({ file: await toFile(Buffer.from('The harbour master keeps the tide tables. Ships enter two hours either side of high water.'), 'harbour.txt'), purpose: 'assistants' });
  storeId = (await client.vectorStores.create({ name: 'notes', file_ids: [garden, harbour.id] })).id;
  await settled(client, storeId);
});
after(() => server.close());

const QUESTION = 'How much sunlight do tomato plants need?';

test('streamed: file_search_call with results (include), then an answer citing the file', async () => {
  const events: any[] = [];
  const stream = await client.responses.create({
    model: 'agent',
    input: QUESTION,
    tools: [{ type: 'file_search', vector_store_ids: [storeId], max_num_results: 3 }],
    include: ['file_search_call.results'],
    stream: true,
  });
  for await (const e of stream) events.push(e);
  const final = checkStream(events);
  const types = events.map((e) => e.type);
  assert.ok(types.indexOf('response.file_search_call.searching') < types.indexOf('response.file_search_call.completed'));
  assert.ok(types.includes('response.output_text.annotation.added'));
  const [call, message] = final.output;
  assert.equal(call.type, 'file_search_call');
  assert.equal(call.status, 'completed');
  assert.deepEqual(call.queries, [QUESTION]);
  assert.equal(call.results[0].file_id, garden);
  assert.equal(call.results[0].filename, 'garden.md');
  assert.match(call.results[0].text, /six hours of direct sunlight/);
  const text: string = message.content[0].text;
  assert.match(text, /six hours of direct sunlight/);
  const citation = message.content[0].annotations[0];
  assert.deepEqual({ type: citation.type, file_id: citation.file_id, filename: citation.filename }, { type: 'file_citation', file_id: garden, filename: 'garden.md' });
  assert.equal([...text].slice(citation.index, citation.index + 3).join(''), '[1]');
});

test('not streamed: results hidden without include; the stored response is the same', async () => {
  const r = await client.responses.create({ model: 'agent', input: QUESTION, tools: [{ type: 'file_search', vector_store_ids: [storeId] }] });
  const call = r.output[0] as any;
  assert.equal(call.type, 'file_search_call');
  assert.equal(call.results, null);
  assert.match(r.output_text, /six hours of direct sunlight/);
  const annotations = (r.output[1] as any).content[0].annotations;
  assert.equal(annotations[0].file_id, garden);
  const stored = await client.responses.retrieve(r.id, { include: ['file_search_call.results'] });
  assert.equal((stored.output[0] as any).results[0].file_id, garden);
});

test("another account's, an unknown or an expired store id: refused naming tools[i].vector_store_ids[j] before any model runs, nothing charged", async () => {
  const ask = (c: OpenAI, ids: string[]) => c.responses.create({ model: 'agent', input: QUESTION, tools: [{ type: 'file_search', vector_store_ids: ids }] });
  const refused = (status: number, param: string) => (e: any) => e.status === status && e.param === param && e.type === 'invalid_request_error';
  await assert.rejects(ask(other, [storeId]), refused(404, 'tools[0].vector_store_ids[0]'), "another account's store looks unknown");
  const own = (await other.vectorStores.create({ name: 'mine' })).id;
  await assert.rejects(ask(other, [own, 'vs_unknown']), refused(404, 'tools[0].vector_store_ids[1]'));
  await assert.rejects(
    other.responses.create({ model: 'agent', input: QUESTION, tools: [{ type: 'file_search', vector_store_ids: [own, storeId] }], stream: true }),
    refused(404, 'tools[0].vector_store_ids[1]'),
    'a stream is refused before it starts',
  );
  // Expired: the row stays, the store cannot be searched.
  await server.app.services.store.db.updateTable('vector_stores').set({ expired_at: Date.now() }).where('id', '=', own).execute();
  await assert.rejects(ask(other, [own]), refused(400, 'tools[0].vector_store_ids[0]'));
  // The background path refuses the same way and stores nothing.
  await assert.rejects(
    other.responses.create({ model: 'agent', input: QUESTION, tools: [{ type: 'file_search', vector_store_ids: ['vs_unknown'] }], background: true }),
    refused(404, 'tools[0].vector_store_ids[0]'),
  );
  const db = server.app.services.store.db;
  const accountOfOther = await db.selectFrom('vector_stores').select('account_id').where('id', '=', own).executeTakeFirstOrThrow();
  const charges = await db.selectFrom('credit_reservations').select('request_id').where('account_id', '=', accountOfOther.account_id).execute();
  assert.deepEqual(charges, [], 'nothing reserved or charged');
  const stored = await db.selectFrom('responses').select('id').where('account_id', '=', accountOfOther.account_id).execute();
  assert.deepEqual(stored, [], 'no response stored');
});
