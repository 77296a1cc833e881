// Credits end to end: what a response reports in svc is what the balance lost; an
// account that cannot cover a request is refused and charged nothing; concurrent
// requests never overdraw; the activity row and the ledger agree.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import { toMicro } from '../accounts/money.ts';
import { applyLateCost } from './late-cost.ts';
import type { Reservation } from './ledger.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({ AGENT_API_ACCOUNT_CONCURRENCY: '100' });
});
after(() => server.close());

const balance = async (id: string) => (await server.admin('GET', `/accounts/${id}`)).body as { credits: number; reserved_credits: number };
const svcOf = (r: unknown) => (r as { svc: number }).svc;

test('balance before minus balance after equals the svc the responses reported, streamed or not', async () => {
  const account = await server.createAccount(5);
  const { key, id: keyId } = await server.createKey({ account_id: account.id });
  const client = server.openai(key);
  const before = (await balance(account.id)).credits;
  const a = await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Tell me about the sea' }] });
  const b = await client.chat.completions.create({ model: 'agent-think', messages: [{ role: 'user', content: 'What is 3 * 3?' }] });
  const c = await client.completions.create({ model: 'agent', prompt: 'Hello there', max_tokens: 10 });
  let streamed = 0;
  for await (const ch of await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })) {
    if (ch.usage) streamed = (ch.usage as unknown as { svc: number }).svc;
  }
  const charged = [svcOf(a), svcOf(b), svcOf(c), streamed];
  assert.ok(charged.every((x) => x > 0));
  assert.ok(svcOf(b) > svcOf(a), 'agent-think costs more');
  const after = await balance(account.id);
  assert.equal(toMicro(before) - toMicro(after.credits), charged.reduce((s, x) => s + toMicro(x), 0));
  assert.equal(after.reserved_credits, 0, 'nothing stays reserved');

  // The activity log records the same figures.
  const rows = (await server.admin('GET', `/activity?key_id=${keyId}`)).body.data as { credits_settled: number; credits_reserved: number; input_tokens: number; output_tokens: number; model: string }[];
  assert.equal(rows.length, 4);
  assert.equal(rows.reduce((s, r) => s + toMicro(r.credits_settled), 0), charged.reduce((s, x) => s + toMicro(x), 0));
  for (const r of rows) {
    assert.ok(r.credits_reserved >= r.credits_settled);
    assert.ok(r.input_tokens > 0 && r.output_tokens > 0);
  }
});

test('an account that cannot cover the estimate gets 429 and is charged nothing', async () => {
  const account = await server.createAccount(0.05);
  const { key, id: keyId } = await server.createKey({ account_id: account.id });
  await assert.rejects(server.openai(key).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => {
    assert.ok(e instanceof OpenAI.RateLimitError);
    assert.equal(e.code, 'insufficient_quota');
    return true;
  });
  const after = await balance(account.id);
  assert.equal(after.credits, 0.05);
  assert.equal(after.reserved_credits, 0);
  // A smaller output cap lowers the estimate: the same account can afford a short answer.
  const short = await server.openai(key).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
  assert.ok(svcOf(short) > 0);
  const rows = (await server.admin('GET', `/activity?key_id=${keyId}`)).body.data as { status: number; credits_settled: number }[];
  assert.deepEqual(rows.map((r) => [r.status, r.credits_settled > 0]), [[200, true], [429, false]]);
});

test('50 concurrent requests on an account that covers only a few never overdraw it; charged equals settled usage', async () => {
  // Each request reserves about 0.62 credits (its input plus 4096 output tokens at 100
  // credits a dollar); 0.625 credits cover it only while the balance lasts: a few requests.
  const account = await server.createAccount(0.625);
  const { key, id: keyId } = await server.createKey({ account_id: account.id });
  const client = server.openai(key);
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) => client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: `Write a long answer about topic ${i}` }] })),
  );
  const ok = results.filter((r): r is PromiseFulfilledResult<OpenAI.ChatCompletion> => r.status === 'fulfilled');
  const refused = results.filter((r) => r.status === 'rejected');
  assert.ok(ok.length >= 1, 'some were served');
  assert.ok(refused.length >= 1, 'some were refused');
  for (const r of refused) assert.equal((r as PromiseRejectedResult).reason.status, 429);
  const after = await balance(account.id);
  assert.ok(after.credits >= 0, `balance ${after.credits} never below zero`);
  assert.equal(after.reserved_credits, 0);
  const charged = ok.reduce((s, r) => s + toMicro(svcOf(r.value)), 0);
  assert.equal(toMicro(0.625) - toMicro(after.credits), charged, 'what was charged equals the settled usage');
  const rows = (await server.admin('GET', `/activity?key_id=${keyId}&limit=100`)).body.data as { credits_settled: number }[];
  assert.equal(rows.reduce((s, r) => s + toMicro(r.credits_settled), 0), charged);
  // The books explain the balance: grants minus charges.
  const db = server.app.services.store.db;
  const grants = await db.selectFrom('credit_transactions').select(['amount']).where('account_id', '=', account.id).execute();
  const charges = await db.selectFrom('credit_reservations').select(['charged', 'status']).where('account_id', '=', account.id).execute();
  assert.equal(charges.length, ok.length, 'one ledger entry per served request; refused ones leave none');
  assert.equal(grants.reduce((s, t) => s + Number(t.amount), 0) - charges.reduce((s, c) => s + Number(c.charged), 0), toMicro(after.credits));
});

test('a late provider cost corrects the same ledger entry and activity row', async () => {
  const account = await server.createAccount(1);
  const { key } = await server.createKey({ account_id: account.id });
  const res = await server.openai(key).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  const charged = toMicro(svcOf(res.data));
  // The provider later reports $0.001: 0.1 credits at 100 credits a dollar.
  assert.equal(await applyLateCost(server.app.services, res.request_id!, 0.001), true);
  assert.equal(toMicro((await balance(account.id)).credits), toMicro(1) - toMicro(0.1));
  const row = (await server.admin('GET', `/activity?request_id=${res.request_id}`)).body.data[0];
  assert.equal(row.credits_settled, 0.1);
  assert.equal(row.cost_usd, 0.001);
  assert.ok(charged < toMicro(0.1));
  const entry = await server.app.services.store.db.selectFrom('credit_reservations').selectAll().where('request_id', '=', res.request_id!).executeTakeFirstOrThrow();
  assert.equal(entry.charged, toMicro(0.1));
  assert.equal(await applyLateCost(server.app.services, 'req_unknown', 0.5), false);
});

test('a hold left by a crashed call is released by the stale sweep, charging nothing; settling it afterwards charges nothing', async () => {
  const account = await server.createAccount(2);
  const { ledger } = server.app.services;
  const held = await ledger.reserve(account.id, null, `req_stale_${Date.now()}`, toMicro(1.5));
  assert.ok(held);
  assert.equal((await balance(account.id)).reserved_credits, 1.5);
  // As if an hour had passed: every hold is now stale.
  assert.ok((await ledger.releaseStale(60 * 60_000, Date.now() + 2 * 60 * 60_000)) >= 1);
  const after = await balance(account.id);
  assert.equal(after.reserved_credits, 0);
  assert.equal(after.credits, 2);
  const entry = await server.app.services.store.db.selectFrom('credit_reservations').selectAll().where('request_id', '=', held.requestId).executeTakeFirstOrThrow();
  assert.equal(entry.status, 'released');
  assert.equal(entry.charged, 0);
  assert.equal(await ledger.settle(held, toMicro(1)), 0, 'the hold is gone: nothing more to charge');
  assert.equal((await balance(account.id)).credits, 2);
});

test('reservations made in one turn are taken in one batch: exactly what the balance covers, and a bad one fails alone', async () => {
  const account = await server.createAccount(1);
  const { ledger } = server.app.services;
  const id = (i: number) => `req_batch_${Date.now()}_${i}`;
  // 0.3 credits each: a balance of 1 covers three of ten.
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => ledger.reserve(account.id, null, id(i), toMicro(0.3))));
  const taken = results.filter((r) => r !== null);
  assert.equal(taken.length, 3);
  assert.equal((await balance(account.id)).reserved_credits, 0.9);
  // A request id already held cannot be held twice; the others in its turn are unaffected.
  const again = await Promise.allSettled([ledger.reserve(account.id, null, taken[0]!.requestId, 1), ledger.reserve(account.id, null, id(99), 1)]);
  assert.equal(again[0].status, 'rejected');
  assert.equal(again[1].status, 'fulfilled');
  assert.ok((again[1] as PromiseFulfilledResult<unknown>).value);
  // Settled together: each charge lands once.
  const charged = await Promise.all([...taken, (again[1] as PromiseFulfilledResult<Reservation>).value].map((r) => ledger.settle(r, toMicro(0.1))));
  assert.deepEqual(charged, [toMicro(0.1), toMicro(0.1), toMicro(0.1), 1]);
  const after = await balance(account.id);
  assert.equal(after.reserved_credits, 0);
  assert.equal(toMicro(after.credits), toMicro(1) - 3 * toMicro(0.1) - 1);
});
