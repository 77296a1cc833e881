// Stored chat completions end to end with the official openai SDK: completions are
// seeded through StoredCompletions.save (as POST /chat/completions with store: true does),
// then listed (order, cursor, filters, auto-pagination), retrieved, updated, deleted and
// their messages listed; another account's ids and expired ids are 404 like unknown ones.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { newCompletionId } from './completion-object.ts';
import { StoredCompletions, STORED_COMPLETION_TTL_MS } from './stored-completions.ts';

let server: TestServer;
let stored: StoredCompletions;

before(async () => {
  // The app registers the stored-completion routes itself; the test seeds through its own
  // StoredCompletions over the same database.
  server = await startTestServer();
  stored = new StoredCompletions(server.app.services.store.db);
});
after(() => server.close());

const HELLO = [{ role: 'user', content: 'hello' }];

async function seed(accountId: string, opts: { model?: string; metadata?: Record<string, string> | null; messages?: unknown[]; createdMs?: number } = {}) {
  const completion = {
    id: newCompletionId(),
    object: 'chat.completion',
    created: Math.floor((opts.createdMs ?? Date.now()) / 1000),
    model: opts.model ?? 'agent',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there.', refusal: null, annotations: [] }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6, svc: 0.01 },
    service_tier: 'default',
    system_fingerprint: 'agent-api',
    svc: 0.01,
  };
  await stored.save({ accountId, completion, requestMessages: opts.messages ?? HELLO, metadata: opts.metadata ?? null });
  return completion;
}

async function isNotFound(p: Promise<unknown>) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof OpenAI.NotFoundError, String(e));
    assert.equal(e.code, 'model_not_found');
    assert.equal(e.type, 'invalid_request_error');
    return true;
  });
}

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

test('retrieve answers the completion as returned, with metadata ({} when none)', async () => {
  const { key, account_id } = await server.createKey();
  const client = server.openai(key);
  const plain = await seed(account_id);
  const tagged = await seed(account_id, { model: 'agent-think', metadata: { project: 'x', run: '7' } });

  const got = await client.chat.completions.retrieve(plain.id);
  assert.deepEqual(got, { ...plain, metadata: {} });
  const got2 = await client.chat.completions.retrieve(tagged.id);
  assert.equal(got2.model, 'agent-think');
  assert.deepEqual((got2 as unknown as { metadata: unknown }).metadata, { project: 'x', run: '7' });
  await isNotFound(client.chat.completions.retrieve('chatcmpl-doesnotexist'));
});

test('list: asc by default, desc, limit, after cursor, first_id/last_id/has_more', async () => {
  const { key, account_id } = await server.createKey();
  const client = server.openai(key);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await seed(account_id)).id);

  const first = await client.chat.completions.list({ limit: 2 });
  assert.deepEqual(first.data.map((c) => c.id), ids.slice(0, 2));
  assert.equal(first.has_more, true);
  const body = (await (await server.fetch('/v1/chat/completions?limit=2', { key })).json()) as Record<string, unknown>;
  assert.equal(body.object, 'list');
  assert.equal(body.first_id, ids[0]);
  assert.equal(body.last_id, ids[1]);

  const second = await client.chat.completions.list({ limit: 2, after: ids[1] });
  assert.deepEqual(second.data.map((c) => c.id), ids.slice(2, 4));
  const last = await client.chat.completions.list({ limit: 2, after: ids[3] });
  assert.deepEqual(last.data.map((c) => c.id), ids.slice(4));
  assert.equal(last.has_more, false);

  const desc = await client.chat.completions.list({ order: 'desc', limit: 3, after: ids[4] });
  assert.deepEqual(desc.data.map((c) => c.id), [ids[3], ids[2], ids[1]]);
  assert.equal(desc.has_more, true);

  const empty = await (await server.fetch(`/v1/chat/completions?after=${ids[4]}`, { key })).json();
  assert.deepEqual(empty, { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
});

test('auto-pagination walks more than 100 completions in both orders', async () => {
  const { key, account_id } = await server.createKey();
  const client = server.openai(key);
  const ids: string[] = [];
  for (let i = 0; i < 130; i++) ids.push((await seed(account_id, { metadata: { n: String(i % 2) } })).id);

  assert.deepEqual((await all(client.chat.completions.list({ limit: 100 }))).map((c) => c.id), ids);
  assert.deepEqual((await all(client.chat.completions.list({ limit: 7, order: 'desc' }))).map((c) => c.id), [...ids].reverse());
  // Filtered pages: the cursor and the filter work together.
  const odd = await all(client.chat.completions.list({ limit: 9, metadata: { n: '1' } }));
  assert.deepEqual(odd.map((c) => c.id), ids.filter((_, i) => i % 2 === 1));
});

test('list filters by model and by every metadata pair given', async () => {
  const { key, account_id } = await server.createKey();
  const client = server.openai(key);
  const a = await seed(account_id, { model: 'agent', metadata: { team: 'red', env: 'prod' } });
  const b = await seed(account_id, { model: 'agent-think', metadata: { team: 'red', env: 'dev' } });
  const c = await seed(account_id, { model: 'agent', metadata: { team: 'blue' } });
  const d = await seed(account_id, { model: 'agent' });
  const ids = async (q: OpenAI.Chat.ChatCompletionListParams) => (await all(client.chat.completions.list(q))).map((x) => x.id);

  assert.deepEqual(await ids({}), [a.id, b.id, c.id, d.id]);
  assert.deepEqual(await ids({ model: 'agent' }), [a.id, c.id, d.id]);
  assert.deepEqual(await ids({ model: 'agent-think' }), [b.id]);
  assert.deepEqual(await ids({ model: 'gpt-4o' }), []);
  assert.deepEqual(await ids({ metadata: { team: 'red' } }), [a.id, b.id]);
  assert.deepEqual(await ids({ metadata: { team: 'red', env: 'prod' } }), [a.id]);
  assert.deepEqual(await ids({ metadata: { team: 'red' }, model: 'agent-think' }), [b.id]);
  assert.deepEqual(await ids({ metadata: { team: 'green' } }), []);
  assert.deepEqual(await ids({ metadata: { env: 'prod', nothere: 'x' } }), []);
});

test('update replaces metadata wholesale; the list filters see the new pairs', async () => {
  const { key, account_id } = await server.createKey();
  const client = server.openai(key);
  const c = await seed(account_id, { metadata: { old: '1', keep: 'no' } });

  const updated = await client.chat.completions.update(c.id, { metadata: { fresh: 'yes' } });
  assert.equal(updated.id, c.id);
  assert.deepEqual((updated as unknown as { metadata: unknown }).metadata, { fresh: 'yes' });
  assert.deepEqual(updated.choices, c.choices);
  const again = await client.chat.completions.retrieve(c.id);
  assert.deepEqual(again, { ...c, metadata: { fresh: 'yes' } });
  assert.deepEqual((await all(client.chat.completions.list({ metadata: { old: '1' } }))).length, 0);
  assert.deepEqual((await all(client.chat.completions.list({ metadata: { fresh: 'yes' } }))).map((x) => x.id), [c.id]);

  const cleared = await client.chat.completions.update(c.id, { metadata: null });
  assert.deepEqual((cleared as unknown as { metadata: unknown }).metadata, {});
  await isNotFound(client.chat.completions.update('chatcmpl-doesnotexist', { metadata: { a: 'b' } }));
});

test('update validates metadata like the contract: a too-long value or 17 entries is 400 with param', async () => {
  const { key, account_id } = await server.createKey();
  const client = server.openai(key);
  const c = await seed(account_id, { metadata: { a: 'b' } });
  await assert.rejects(client.chat.completions.update(c.id, { metadata: { k: 'v'.repeat(513) } }), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.code, 'invalid_request');
    assert.equal(e.type, 'invalid_request_error');
    assert.equal(e.param, 'metadata.k');
    return true;
  });
  const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
  await assert.rejects(client.chat.completions.update(c.id, { metadata: many }), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.param, 'metadata');
    return true;
  });
  // The body is required by the contract.
  const res = await server.fetch(`/v1/chat/completions/${c.id}`, { key, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { error: { param: string } }).error.param, 'metadata');
  // Nothing changed.
  assert.deepEqual((await client.chat.completions.retrieve(c.id) as unknown as { metadata: unknown }).metadata, { a: 'b' });
});

test('delete answers the deletion object; the completion and its messages are gone', async () => {
  const { key, account_id } = await server.createKey();
  const client = server.openai(key);
  const c = await seed(account_id, { metadata: { x: 'y' } });
  const other = await seed(account_id);

  assert.deepEqual(await client.chat.completions.delete(c.id), { id: c.id, object: 'chat.completion.deleted', deleted: true });
  await isNotFound(client.chat.completions.retrieve(c.id));
  await isNotFound(client.chat.completions.delete(c.id));
  await isNotFound(client.chat.completions.messages.list(c.id));
  assert.deepEqual((await all(client.chat.completions.list())).map((x) => x.id), [other.id]);
  const pairs = await server.app.services.store.db.selectFrom('chat_completion_metadata').selectAll().where('completion_id', '=', c.id).execute();
  assert.deepEqual(pairs, []);
});

test('messages: the request messages in the reference store-message shape, paged', async () => {
  const { key, account_id } = await server.createKey();
  const client = server.openai(key);
  const parts = [
    { type: 'text', text: 'What is ' },
    { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
    { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
    { type: 'text', text: 'this?' },
  ];
  const toolCalls = [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{}' } }];
  const messages = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', name: 'ann', content: parts },
    { role: 'assistant', content: null, tool_calls: toolCalls },
    { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
  ];
  const c = await seed(account_id, { messages });

  const page = await client.chat.completions.messages.list(c.id);
  assert.deepEqual(page.data, [
    { id: `${c.id}-0`, role: 'system', content: 'Be brief.', name: null, content_parts: null },
    { id: `${c.id}-1`, role: 'user', content: 'What is this?', name: 'ann', content_parts: [parts[0], parts[1], parts[3]] },
    { id: `${c.id}-2`, role: 'assistant', content: null, name: null, tool_calls: toolCalls, content_parts: null },
    { id: `${c.id}-3`, role: 'tool', content: 'a cat', name: null, tool_call_id: 'call_1', content_parts: null },
  ]);
  assert.equal(page.has_more, false);

  const firstTwo = await client.chat.completions.messages.list(c.id, { limit: 2 });
  assert.deepEqual(firstTwo.data.map((m) => m.id), [`${c.id}-0`, `${c.id}-1`]);
  assert.equal(firstTwo.has_more, true);
  const rest = await client.chat.completions.messages.list(c.id, { limit: 2, after: `${c.id}-1` });
  assert.deepEqual(rest.data.map((m) => m.id), [`${c.id}-2`, `${c.id}-3`]);
  assert.equal(rest.has_more, false);
  const desc = await all(client.chat.completions.messages.list(c.id, { limit: 1, order: 'desc' }));
  assert.deepEqual(desc.map((m) => m.id), [3, 2, 1, 0].map((i) => `${c.id}-${i}`));

  await assert.rejects(client.chat.completions.messages.list(c.id, { after: 'chatcmpl-other-1' }), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.param, 'after');
    return true;
  });
});

test("another account's completions are 404 like unknown ids and never listed", async () => {
  const owner = await server.createKey();
  const stranger = await server.createKey();
  const mine = await seed(owner.account_id, { metadata: { team: 'red' } });
  const theirs = await seed(stranger.account_id, { metadata: { team: 'red' } });
  const client = server.openai(stranger.key);

  await isNotFound(client.chat.completions.retrieve(mine.id));
  await isNotFound(client.chat.completions.update(mine.id, { metadata: { hijacked: 'yes' } }));
  await isNotFound(client.chat.completions.delete(mine.id));
  await isNotFound(client.chat.completions.messages.list(mine.id));
  for (const q of [{}, { metadata: { team: 'red' } }, { model: 'agent' }, { after: 'chatcmpl-' }, { order: 'desc' as const }]) {
    assert.deepEqual((await all(client.chat.completions.list(q))).map((x) => x.id), [theirs.id]);
  }

  // The answer is exactly that of an unknown id.
  const unknown = 'chatcmpl-' + mine.id.slice('chatcmpl-'.length).split('').reverse().join('');
  const bodyFor = async (id: string) => {
    const res = await server.fetch(`/v1/chat/completions/${id}`, { key: stranger.key });
    return { status: res.status, body: JSON.stringify(await res.json()).replaceAll(id, '<id>') };
  };
  assert.deepEqual(await bodyFor(mine.id), await bodyFor(unknown));

  // The owner's completion is untouched.
  const still = await server.openai(owner.key).chat.completions.retrieve(mine.id);
  assert.deepEqual((still as unknown as { metadata: unknown }).metadata, { team: 'red' });
});

test('expired completions are invisible at once and removed by the sweep', async () => {
  const { key, account_id } = await server.createKey();
  const client = server.openai(key);
  const now = Date.now();
  const expired = await seed(account_id, { createdMs: now - STORED_COMPLETION_TTL_MS - 60_000, metadata: { gone: 'yes' } });
  const old = await seed(account_id, { createdMs: now - STORED_COMPLETION_TTL_MS - 1000 });
  const fresh = await seed(account_id, { createdMs: now - STORED_COMPLETION_TTL_MS + 3_600_000, metadata: { gone: 'yes' } });

  await isNotFound(client.chat.completions.retrieve(expired.id));
  await isNotFound(client.chat.completions.update(expired.id, { metadata: {} }));
  await isNotFound(client.chat.completions.messages.list(expired.id));
  await isNotFound(client.chat.completions.delete(old.id));
  assert.deepEqual((await all(client.chat.completions.list())).map((x) => x.id), [fresh.id]);
  assert.deepEqual((await all(client.chat.completions.list({ metadata: { gone: 'yes' } }))).map((x) => x.id), [fresh.id]);

  const db = server.app.services.store.db;
  assert.equal(await stored.sweepExpired(now), 2);
  assert.equal(await stored.sweepExpired(now), 0);
  const rows = await db.selectFrom('chat_completions').select('id').where('id', 'in', [expired.id, old.id, fresh.id]).execute();
  assert.deepEqual(rows.map((r) => r.id), [fresh.id]);
  const pairs = await db.selectFrom('chat_completion_metadata').select('completion_id').where('completion_id', '=', expired.id).execute();
  assert.deepEqual(pairs, []);
  assert.equal((await client.chat.completions.retrieve(fresh.id)).id, fresh.id);
});
