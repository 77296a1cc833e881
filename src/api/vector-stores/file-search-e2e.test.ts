// The file_search tool of /v1/responses over real vector stores (ingested files, the
// hybrid search), with the official openai SDK: streamed and not, results only with
// include, file_citation annotations on the file that answered; another account's store
// ids find nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { checkStream } from '../responses/event-checks.test-support.ts';
import { settled } from './ingestion.test-support.ts';

let server: TestServer;
let client: OpenAI;
let other: OpenAI;
let storeId: string;
let garden: string;
before(async () => {
  server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20' });
  client = server.openai((await server.createKey({ permissions: { file_search: true, files: true } })).key);
  other = server.openai((await server.createKey({ permissions: { file_search: true, files: true } })).key);
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

test("another account's store ids find nothing", async () => {
  const r = await other.responses.create({ model: 'agent', input: QUESTION, tools: [{ type: 'file_search', vector_store_ids: [storeId] }], include: ['file_search_call.results'] });
  assert.deepEqual((r.output[0] as any).results, []);
  assert.doesNotMatch(r.output_text, /six hours/);
});
