// Redis stopped mid-run (a redis-server of this test's own, killed with SIGKILL): no
// request runs unlimited. By default (closed) every request that needs a limit is refused
// with a 503 naming Redis, WebSockets too, and /readyz says Redis is down; a request
// already running finishes. Redis back, requests run again. With `open`, requests run on
// limits counted in each instance, still enforced there.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import type { AppOptions } from '../app.ts';
import { createChatCompletion } from '../contract/endpoints/chat.ts';
import { OwnRedis, redisServerBinary } from './redis-server.test-support.ts';

const binary = redisServerBinary();
const skip = binary ? false : 'redis-server is not installed';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits (a loaded machine may be slow) until `n` requests run in the slow handler; fails rather than hangs. */
async function untilRunning(n: number): Promise<void> {
  for (let i = 0; i < 3_000 && waiting.length < n; i++) await pause(10);
  assert.equal(waiting.length, n, `${n} requests running`);
}
const slow = { ...createChatCompletion, operationId: 'testSlow', path: '/test/slow', billable: false } as const;

let redis: OwnRedis;
const waiting: (() => void)[] = [];
const withSlowRoute: AppOptions = {
  routes: (router) => router.endpoint(slow, () => new Promise((resolve) => waiting.push(() => resolve({ ok: true })))),
};

before(async () => {
  if (binary) redis = await OwnRedis.start(binary);
});
after(async () => {
  waiting.splice(0).forEach((r) => r());
  await redis?.stop();
});

interface ErrorBody {
  error: { code: string; message: string };
}

const chat = (server: TestServer, key: string) =>
  server.fetch('/v1/chat/completions', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });

function upgradeStatus(server: TestServer, key: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${server.baseURL.replace('http', 'ws')}/responses`, { headers: { authorization: `Bearer ${key}` } });
    ws.once('open', () => (ws.close(), resolve(101)));
    ws.once('unexpected-response', (_req, res) => (res.resume(), resolve(res.statusCode!)));
    ws.once('error', () => resolve(0));
  });
}

async function untilStatus(request: () => Promise<Response>, status: number): Promise<Response> {
  let res = await request();
  for (let i = 0; i < 200 && res.status !== status; i++) {
    await pause(50);
    res = await request();
  }
  return res;
}

describe('closed (the default)', { skip }, () => {
  let server: TestServer;
  before(async () => {
    if (!redis) return;
    server = await startTestServer({ REDIS_URL: redis.url }, withSlowRoute);
  });
  after(() => server?.close());

  test('Redis killed: every request is a 503 naming Redis, none runs; /readyz says so; back once Redis is', async () => {
    const { key } = await server.createKey({ rpm: 1000 });
    assert.equal((await chat(server, key)).status, 200);
    let ready = await server.fetch('/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(((await ready.json()) as { redis: unknown }).redis, { ok: true });

    // One request is running when Redis goes.
    const running = server.fetch('/v1/test/slow', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await untilRunning(1);
    await redis.kill();

    const answers = await Promise.all([...Array.from({ length: 12 }, () => chat(server, key)), ...Array.from({ length: 4 }, () => server.fetch('/v1/models', { key }))]);
    for (const res of answers) {
      assert.equal(res.status, 503);
      const body = (await res.json()) as ErrorBody;
      assert.equal(body.error.code, 'service_unavailable');
      assert.match(body.error.message, /Redis/);
    }
    assert.equal(await upgradeStatus(server, key), 503, 'a WebSocket is refused at the upgrade too');

    ready = await server.fetch('/readyz');
    assert.equal(ready.status, 503);
    const readyBody = (await ready.json()) as ErrorBody & { status: string; redis: { ok: boolean; error?: string } };
    assert.equal(readyBody.status, 'unavailable');
    assert.equal(readyBody.redis.ok, false);
    assert.match(readyBody.redis.error ?? '', /connection failed|not connected|timed out/);
    assert.match(readyBody.error.message, /Redis/);

    // The request already running finishes (its slot lapses with Redis's data).
    waiting.splice(0).forEach((r) => r());
    assert.equal((await running).status, 200);
    // No refused request ran: each is logged as a 503, none charged.
    let refused: { status: number; credits_reserved: number }[] = [];
    for (let i = 0; i < 100 && refused.length < 16; i++) {
      await pause(20);
      refused = ((await server.admin('GET', '/activity?limit=100')).body.data as typeof refused).filter((r) => r.status === 503);
    }
    assert.equal(refused.length, 16);
    assert.ok(refused.every((r) => Number(r.credits_reserved) === 0));

    await redis.restart();
    assert.equal((await untilStatus(() => chat(server, key), 200)).status, 200);
    assert.equal((await untilStatus(() => server.fetch('/readyz'), 200)).status, 200);
  });
});

describe('open', { skip }, () => {
  let server: TestServer;
  before(async () => {
    if (!redis) return;
    await redis.kill();
    await redis.restart();
    server = await startTestServer({ REDIS_URL: redis.url, AGENT_API_LIMITS_ON_REDIS_FAILURE: 'open', AGENT_API_ACCOUNT_CONCURRENCY: '2' }, withSlowRoute);
  });
  after(() => server?.close());

  test('Redis killed: requests run on limits counted in this instance, still enforced; /readyz still says Redis is down', async () => {
    const { key } = await server.createKey({ rpm: 3 });
    assert.equal((await server.fetch('/v1/models', { key })).status, 200, 'counted in Redis: 1 of 3');
    await redis.kill();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await server.fetch('/v1/models', { key })).status);
    // A fresh window in this process: 3 more, then refused.
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);

    const other = await server.createKey();
    const post = () =>
      server.fetch('/v1/test/slow', {
        method: 'POST',
        key: other.key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'hi' }] }),
      });
    const running = [post(), post()];
    await untilRunning(2);
    assert.equal((await post()).status, 429, 'the account concurrency still holds');
    waiting.splice(0).forEach((r) => r());
    for (const r of running) assert.equal((await r).status, 200);

    const ready = await server.fetch('/readyz');
    assert.equal(ready.status, 503);
    assert.equal(((await ready.json()) as { redis: { ok: boolean } }).redis.ok, false);
    await redis.restart();
  });
});
