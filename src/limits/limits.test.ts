// Limits end to end: requests per minute, key caps, the account's concurrency slots
// and its credits, each answering 429 insufficient_quota, with rate-limit headers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { createChatCompletion } from '../contract/endpoints/chat.ts';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

const slow = { ...createChatCompletion, operationId: 'testSlow', path: '/test/slow', billable: false } as const;

let server: TestServer;
const waiting: (() => void)[] = [];
const releaseAll = () => waiting.splice(0).forEach((r) => r());

before(async () => {
  server = await startTestServer(
    { AGENT_API_ACCOUNT_CONCURRENCY: '2' },
    {
      routes: (router) => {
        router.endpoint(slow, () => new Promise((resolve) => waiting.push(() => resolve({ ok: true }))));
      },
    },
  );
});
after(() => server.close());

const post = (path: string, key: string) =>
  server.fetch(path, {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'hi' }] }),
  });

async function expect429(res: Response) {
  assert.equal(res.status, 429);
  const body = (await res.json()) as { error: { type: string; code: string } };
  assert.equal(body.error.code, 'insufficient_quota');
  assert.equal(body.error.type, 'insufficient_quota');
}

test('requests per minute: headers count down, then 429; the SDK sees a RateLimitError', async () => {
  const { key } = await server.createKey({ rpm: 3 });
  for (let i = 1; i <= 3; i++) {
    const res = await server.fetch('/v1/models', { key });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-ratelimit-limit-requests'), '3');
    assert.equal(res.headers.get('x-ratelimit-remaining-requests'), String(3 - i));
    assert.match(res.headers.get('x-ratelimit-reset-requests') ?? '', /^\d+s$/);
    assert.equal(res.headers.get('x-ratelimit-limit-tokens'), null, 'no token headers without a token cap');
  }
  const refused = await server.fetch('/v1/models', { key });
  assert.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
  await expect429(refused);
  await assert.rejects(server.openai(key).models.list(), (e: unknown) => {
    assert.ok(e instanceof OpenAI.RateLimitError);
    assert.equal(e.code, 'insufficient_quota');
    return true;
  });
});

test('a request cap per day refuses the request past it, concurrent requests included', async () => {
  const { key } = await server.createKey({ limits: [{ metric: 'requests', period: 'day', max: 5 }] });
  const answers = await Promise.all(
    Array.from({ length: 12 }, () => server.fetch('/v1/models', { key }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { message: string } } }))),
  );
  let served = answers.filter((a) => a.status === 200).length;
  assert.ok(served <= 5);
  // The account runs 2 at once: a request refused a slot did not run and is not counted.
  for (const a of answers) if (a.status !== 200) assert.match(a.body.error?.message ?? '', /^(Usage limit reached|Too many concurrent requests)/);
  for (let i = 0; i < 10 && served < 5; i++) if ((await server.fetch('/v1/models', { key })).status === 200) served++;
  assert.equal(served, 5);
  const past = await server.fetch('/v1/models', { key });
  assert.equal(past.status, 429);
  assert.match(((await past.json()) as { error: { message: string } }).error.message, /^Usage limit reached/);
});

test('a request refused by a key cap gives back the slot it was admitted with', async () => {
  const account = await server.createAccount();
  const { key } = await server.createKey({ account_id: account.id, limits: [{ metric: 'requests', period: 'day', max: 1 }] });
  assert.equal((await server.fetch('/v1/models', { key })).status, 200);
  for (let i = 0; i < 4; i++) await expect429(await server.fetch('/v1/models', { key }));
  const { limits } = server.app.services;
  const slots = [await limits.acquire('slot', account.id, 2), await limits.acquire('slot', account.id, 2)];
  assert.ok(slots.every((s) => s !== null), 'both of the account\'s slots are free');
  for (const s of slots) await limits.release(s!);
});

test('a token cap adds the -tokens headers and refuses once settled usage reaches it', async () => {
  const created = await server.createKey({ limits: [{ metric: 'tokens', period: 'month', max: 1000 }] });
  const first = await server.fetch('/v1/models', { key: created.key });
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('x-ratelimit-limit-tokens'), '1000');
  assert.equal(first.headers.get('x-ratelimit-remaining-tokens'), '1000');
  assert.match(first.headers.get('x-ratelimit-reset-tokens') ?? '', /^\d+s$/);

  const record = await server.app.services.keys.get(created.id);
  await server.app.services.caps.record(record!, { tokens: 600, credits: 0, spend: 0 }, Date.now());
  const second = await server.fetch('/v1/models', { key: created.key });
  assert.equal(second.headers.get('x-ratelimit-remaining-tokens'), '400');
  await server.app.services.caps.record(record!, { tokens: 400, credits: 0, spend: 0 }, Date.now());
  await expect429(await server.fetch('/v1/models', { key: created.key }));
});

test('credit and spend caps refuse once reached', async () => {
  const created = await server.createKey({
    limits: [
      { metric: 'credits', period: 'week', max: 1.5 },
      { metric: 'spend', period: 'ever', max: 100 },
    ],
  });
  const record = (await server.app.services.keys.get(created.id))!;
  assert.equal((await server.fetch('/v1/models', { key: created.key })).status, 200);
  await server.app.services.caps.record(record, { tokens: 10, credits: 1_500_000, spend: 0 }, Date.now());
  await expect429(await server.fetch('/v1/models', { key: created.key }));
});

test('the account runs at most its concurrency at once; a finished request frees its slot', async () => {
  const account = await server.createAccount();
  const a = await server.createKey({ account_id: account.id });
  const b = await server.createKey({ account_id: account.id });
  const first = post('/v1/test/slow', a.key);
  const second = post('/v1/test/slow', b.key);
  while (waiting.length < 2) await new Promise((r) => setTimeout(r, 5));
  // Slots belong to the account: a third request on either key is refused.
  await expect429(await post('/v1/test/slow', a.key));
  // Other accounts are not affected.
  const other = await server.createKey();
  assert.equal((await server.fetch('/v1/models', { key: other.key })).status, 200);
  releaseAll();
  assert.equal((await first).status, 200);
  assert.equal((await second).status, 200);
  const third = post('/v1/test/slow', a.key);
  while (waiting.length < 1) await new Promise((r) => setTimeout(r, 5));
  releaseAll();
  assert.equal((await third).status, 200);
});

test('a client that goes away frees its slot', async () => {
  const account = await server.createAccount();
  const k = await server.createKey({ account_id: account.id });
  const controllers = [new AbortController(), new AbortController()];
  const pending = controllers.map((c) =>
    server
      .fetch('/v1/test/slow', {
        method: 'POST',
        key: k.key,
        signal: c.signal,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'x' }] }),
      })
      .catch(() => null),
  );
  while (waiting.length < 2) await new Promise((r) => setTimeout(r, 5));
  controllers.forEach((c) => c.abort());
  await Promise.all(pending);
  // Their handlers end (they would answer nobody), so `waiting` counts only what comes next.
  releaseAll();
  // The aborts reach the server asynchronously. Each try waits until it is answered or
  // runs (a loaded machine may take longer than any fixed pause to get it there).
  let status = 429;
  for (let i = 0; i < 50 && status === 429; i++) {
    const res = post('/v1/test/slow', k.key);
    let answered = false;
    const mark = () => (answered = true);
    res.then(mark, mark);
    while (!answered && waiting.length < 1) await new Promise((r) => setTimeout(r, 5));
    releaseAll();
    status = (await res).status;
    if (status === 429) await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(status, 200);
  releaseAll();
});

test('an account without credits gets 429 on an endpoint that runs a model, and is served once credited', async () => {
  const account = await server.createAccount(0);
  const { key } = await server.createKey({ account_id: account.id });
  await expect429(await post('/v1/chat/completions', key));
  // Endpoints that spend nothing still answer.
  assert.equal((await server.fetch('/v1/models', { key })).status, 200);
  assert.equal((await server.admin('POST', `/accounts/${account.id}/credits`, { amount: 5 })).status, 200);
  assert.equal((await post('/v1/chat/completions', key)).status, 200);
});
