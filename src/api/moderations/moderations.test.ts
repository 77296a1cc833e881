// POST /v1/moderations with the official openai SDK on the offline engine: a text, a list
// (one result each), text parts (one result), every model id, the reference's body
// (validated against its schema) with all 13 categories and `svc`; a text-moderation
// model with an image refused naming the part (images: image-moderation.test.ts); no key switch needed;
// thresholds from configuration; batch lines.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { MODERATION_CATEGORIES } from '../../contract/endpoints/moderations.ts';
import { MODERATION_MODELS } from '../../contract/models.ts';
import { validateAgainst } from '../responses/event-checks.test-support.ts';

let server: TestServer;
let key: string;
before(async () => {
  server = await startTestServer({ MODERATION_THRESHOLDS: 'harassment=0.95' });
  key = (await server.createKey({})).key;
});
after(() => server.close());

test('a text: the reference body, all 13 categories, flagged at the thresholds, svc; no switch needed', async () => {
  const res = await server.openai(key).moderations.create({ input: 'I am going to kill you.' }).withResponse();
  const body = res.data as any;
  validateAgainst('CreateModerationResponse', body);
  assert.match(body.id, /^modr-/);
  assert.equal(body.model, 'omni-moderation-latest');
  assert.equal(body.results.length, 1);
  const [r] = body.results;
  assert.deepEqual(Object.keys(r.categories).sort(), [...MODERATION_CATEGORIES].sort());
  assert.deepEqual(Object.keys(r.category_scores).sort(), [...MODERATION_CATEGORIES].sort());
  assert.deepEqual(r.category_applied_input_types.violence, ['text']);
  assert.equal(r.flagged, true);
  assert.equal(r.categories['violence'], true);
  assert.equal(r.categories['harassment/threatening'], true);
  // harassment's threshold is 0.95 here (MODERATION_THRESHOLDS): scored high, not flagged.
  assert.ok(r.category_scores.harassment >= 0.5 && r.category_scores.harassment < 0.95);
  assert.equal(r.categories.harassment, false);
  assert.equal(typeof body.svc, 'number');
  assert.ok(res.response.headers.get('x-request-id'));
});

test('a list: one result per text, in order; clean text is not flagged; text parts are one input', async () => {
  const client = server.openai(key);
  const list = await client.moderations.create({ input: ['Please kill the process on port 8080.', 'How do I make meth at home?', 'What a lovely morning.'] });
  assert.deepEqual(list.results.map((r) => r.flagged), [false, true, false]);
  assert.equal(list.results[1]!.categories.illicit, true);
  const parts = await client.moderations.create({ model: 'omni-moderation-latest', input: [{ type: 'text', text: 'hello' }, { type: 'text', text: 'I want to end my life.' }] });
  assert.equal(parts.results.length, 1);
  assert.equal(parts.results[0]!.categories['self-harm/intent'], true);
});

test('every moderation model id answers as itself', async () => {
  for (const model of MODERATION_MODELS) {
    const r = await server.openai(key).moderations.create({ model, input: 'fine' });
    assert.equal(r.model, model);
    assert.equal(r.results[0]!.flagged, false);
  }
});

test('refused: an image for a text-moderation model, an unknown model, an empty list', async () => {
  const client = server.openai(key);
  const image = { type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } };
  await assert.rejects(client.moderations.create({ model: 'text-moderation-latest', input: [image] }), (e: any) => e.status === 400 && e.error?.param === 'input[0]');
  await assert.rejects(client.moderations.create({ model: 'omni-moderation-9', input: 'x' }), (e: any) => e.status === 404 || e.status === 400);
  await assert.rejects(client.moderations.create({ input: [] }), (e: any) => e.status === 400 && e.error?.param === 'input');
});

test('batch lines: /v1/moderations answered like the endpoint', async () => {
  const { key: batchKey } = await server.createKey({ permissions: { files: true } });
  const client = server.openai(batchKey);
  const lines = ['You are a worthless idiot.', 'Nice weather today.'].map((input, i) => JSON.stringify({ custom_id: `m${i}`, method: 'POST', url: '/v1/moderations', body: { input } }));
  const file = await client.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'm.jsonl'), purpose: 'batch' });
  let batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/moderations', completion_window: '24h' });
  for (let i = 0; i < 600 && !['completed', 'failed'].includes(batch.status); i++) {
    await new Promise((r) => setTimeout(r, 50));
    batch = await client.batches.retrieve(batch.id);
  }
  assert.equal(batch.status, 'completed');
  const out = (await (await client.files.content(batch.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
  const byId = Object.fromEntries(out.map((o) => [o.custom_id, o.response.body]));
  assert.equal(byId.m0.results[0].categories.harassment, false, 'harassment threshold 0.95 here');
  assert.ok(byId.m0.results[0].category_scores.harassment > 0.5);
  assert.equal(byId.m1.results[0].flagged, false);
});
