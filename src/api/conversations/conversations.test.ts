// Conversations with the official openai SDK, on the database the run selected: create
// with items and metadata, the 20-item limit, ids, paging, one item, deletion, another
// account's ids, and a response that continues a conversation (its input and output
// appended, the model seeing the earlier items).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type OpenAI from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let server: TestServer;
let client: OpenAI;
let other: OpenAI;
before(async () => {
  server = await startTestServer();
  client = server.openai((await server.createKey()).key);
  other = server.openai((await server.createKey()).key);
});
after(() => server.close());

const say = (text: string, id?: string) => ({ type: 'message' as const, role: 'user' as const, content: text, ...(id ? { id } : {}) });

test('create with items and metadata; retrieve; update metadata; 21 items refused', async () => {
  const c = await client.conversations.create({ items: [say('hello'), say('again', 'msg_mine_1')], metadata: { topic: 'greetings' } });
  assert.match(c.id, /^conv_/);
  assert.equal(c.object, 'conversation');
  assert.deepEqual(c.metadata, { topic: 'greetings' });
  assert.deepEqual(await client.conversations.retrieve(c.id), c);
  const updated = await client.conversations.update(c.id, { metadata: { topic: 'other' } });
  assert.deepEqual(updated.metadata, { topic: 'other' });
  const items = await client.conversations.items.list(c.id, { order: 'asc' });
  assert.equal(items.data.length, 2);
  assert.match(items.data[0]!.id!, /^msg_/);
  assert.equal(items.data[1]!.id, 'msg_mine_1');
  assert.deepEqual((items.data[0] as any).content, [{ type: 'input_text', text: 'hello' }]);
  await assert.rejects(client.conversations.create({ items: Array.from({ length: 21 }, (_, i) => say(`m${i}`)) }), (e: any) => e.status === 400 && e.param === 'items');
  await assert.rejects(client.conversations.items.create(c.id, { items: [say('dup', 'msg_mine_1')] }), (e: any) => e.status === 400 && e.param === 'items[0].id');
});

test('items: add, page both ways, retrieve and delete one; deleting the conversation deletes its items', async () => {
  const c = await client.conversations.create({});
  const added = await client.conversations.items.create(c.id, { items: Array.from({ length: 5 }, (_, i) => say(`line ${i}`, `msg_l${i}`)) });
  assert.deepEqual(added.data.map((i) => i.id), ['msg_l0', 'msg_l1', 'msg_l2', 'msg_l3', 'msg_l4']);
  const desc = await client.conversations.items.list(c.id, { limit: 2 });
  assert.deepEqual(desc.data.map((i) => i.id), ['msg_l4', 'msg_l3']);
  assert.equal(desc.has_more, true);
  const next = await client.conversations.items.list(c.id, { limit: 2, after: 'msg_l3' });
  assert.deepEqual(next.data.map((i) => i.id), ['msg_l2', 'msg_l1']);
  const asc = await client.conversations.items.list(c.id, { order: 'asc', after: 'msg_l2' });
  assert.deepEqual(asc.data.map((i) => i.id), ['msg_l3', 'msg_l4']);
  assert.equal((await client.conversations.items.retrieve('msg_l2', { conversation_id: c.id })).id, 'msg_l2');
  const after = await client.conversations.items.delete('msg_l2', { conversation_id: c.id });
  assert.equal(after.id, c.id);
  await assert.rejects(client.conversations.items.retrieve('msg_l2', { conversation_id: c.id }), (e: any) => e.status === 404);
  await assert.rejects(client.conversations.items.list(c.id, { include: ['foo' as never] }), (e: any) => e.status === 400 && e.param === 'include');
  const deleted = await client.conversations.delete(c.id);
  assert.deepEqual(deleted, { id: c.id, object: 'conversation.deleted', deleted: true });
  await assert.rejects(client.conversations.retrieve(c.id), (e: any) => e.status === 404);
  await assert.rejects(client.conversations.items.list(c.id), (e: any) => e.status === 404);
});

test("another account's conversation and items are 404 everywhere", async () => {
  const c = await client.conversations.create({ items: [say('secret', 'msg_s1')] });
  await assert.rejects(other.conversations.retrieve(c.id), (e: any) => e.status === 404);
  await assert.rejects(other.conversations.update(c.id, { metadata: {} }), (e: any) => e.status === 404);
  await assert.rejects(other.conversations.items.list(c.id), (e: any) => e.status === 404);
  await assert.rejects(other.conversations.items.retrieve('msg_s1', { conversation_id: c.id }), (e: any) => e.status === 404);
  await assert.rejects(other.conversations.items.create(c.id, { items: [say('x')] }), (e: any) => e.status === 404);
  await assert.rejects(other.conversations.items.delete('msg_s1', { conversation_id: c.id }), (e: any) => e.status === 404);
  await assert.rejects(other.conversations.delete(c.id), (e: any) => e.status === 404);
  await assert.rejects(other.responses.create({ model: 'agent', conversation: c.id, input: 'hi' }), (e: any) => e.status === 404 && e.param === 'conversation');
  assert.equal((await client.conversations.items.list(c.id)).data.length, 1);
});

test('a response continues a conversation: the model sees its items; input and output are appended', async () => {
  const c = await client.conversations.create({ items: [say('Say exactly: blue whale')] });
  const first = await client.responses.create({ model: 'agent', conversation: c.id, input: 'What is 3 + 4?' });
  assert.deepEqual((first as any).conversation, { id: c.id });
  assert.match(first.output_text, /\b7\b/);
  const items = await client.conversations.items.list(c.id, { order: 'asc' });
  assert.deepEqual(items.data.map((i: any) => [i.type, i.role]), [['message', 'user'], ['message', 'user'], ['message', 'assistant']]);
  assert.equal(items.data[2]!.id, first.output[0]!.id);
  // The second turn reads the whole conversation, as {id} too.
  const second = await client.responses.create({ model: 'agent', conversation: { id: c.id }, input: 'thanks' });
  assert.equal(second.status, 'completed');
  assert.equal((await client.conversations.items.list(c.id)).data.length, 5);
  await assert.rejects(client.responses.create({ model: 'agent', conversation: c.id, previous_response_id: first.id, input: 'x' }), (e: any) => e.status === 400);
  await assert.rejects(client.responses.create({ model: 'agent', conversation: c.id, input: [say('dup', items.data[0]!.id!)] }), (e: any) => e.status === 400 && e.param === 'input[0].id');
});
