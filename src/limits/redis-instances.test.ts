// Servers started with REDIS_URL count their limits in Redis, exactly across instances:
// on PostgreSQL two servers on one database and one Redis; on SQLite (one instance per
// database) one server. Either way a third party on the same Redis (`peer`, another
// instance's limits) takes part of each count, so what the servers allow proves the count
// is Redis's: a key with RPM 10 gets exactly 10 successes, the account's 6 slots and
// 8 sockets are shared, the next one refused on any instance.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import type { AppOptions } from '../app.ts';
import { createChatCompletion } from '../contract/endpoints/chat.ts';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import type { Lease } from './limits.ts';
import { RedisLimits } from './redis-limits.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const skip = redisUrl ? false : 'TEST_REDIS_URL is not set: run through `npm test`, which starts a redis-server (or install redis-server)';
const slow = { ...createChatCompletion, operationId: 'testSlow', path: '/test/slow', billable: false } as const;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits (a loaded machine may be slow) until `n` requests run in the slow handler; fails rather than hangs. */
async function untilRunning(n: number): Promise<void> {
  for (let i = 0; i < 3_000 && waiting.length < n; i++) await pause(10);
  assert.equal(waiting.length, n, `${n} requests running`);
}

let servers: TestServer[] = [];
let peer: RedisLimits;
const waiting: (() => void)[] = [];
const releaseAll = () => waiting.splice(0).forEach((r) => r());

const withSlowRoute: AppOptions = {
  routes: (router) => router.endpoint(slow, () => new Promise((resolve) => waiting.push(() => resolve({ ok: true })))),
};

before(async () => {
  if (skip) return;
  const env = { REDIS_URL: redisUrl!, AGENT_API_ACCOUNT_CONCURRENCY: '6' };
  const a = await startTestServer({ ...env, AGENT_API_INSTANCE_ID: 'a' }, withSlowRoute);
  servers = [a];
  const db = a.config.database;
  if (db.kind === 'postgres') servers.push(await startTestServer({ ...env, DATABASE_URL: db.url, AGENT_API_INSTANCE_ID: 'b' }, withSlowRoute));
  peer = await RedisLimits.open({ url: redisUrl!, onFailure: 'closed', leaseMs: 30_000, instanceId: 'peer', log: { warn: () => undefined, info: () => undefined } });
});
after(async () => {
  releaseAll();
  await peer?.close();
  for (const s of servers.reverse()) await s.close();
});

const on = (i: number) => servers[i % servers.length]!;

const slowPost = (server: TestServer, key: string) =>
  server.fetch('/v1/test/slow', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'hi' }] }),
  });

test('a key with RPM 10 gets exactly 10 successes across the instances (and a peer counted in the same window)', { skip }, async () => {
  const created = await on(0).createKey({ rpm: 10 });
  // The peer (a third instance) takes 2 of the 10.
  for (let i = 0; i < 2; i++) assert.equal((await peer.hitRequestsPerMinute(created.id, 10, Date.now())).allowed, true);
  // In waves of 4 at once, under the account's 6 slots (a request refused a slot is counted in the window too).
  const statuses: number[] = [];
  for (let wave = 0; wave < 6; wave++) {
    statuses.push(...(await Promise.all(Array.from({ length: 4 }, (_, i) => on(i).fetch('/v1/models', { key: created.key }).then((r) => r.status)))));
  }
  assert.equal(statuses.filter((s) => s === 200).length, 8, statuses.join());
  assert.equal(statuses.filter((s) => s === 429).length, 16, statuses.join());
  assert.equal((await peer.hitRequestsPerMinute(created.id, 10, Date.now())).allowed, false, 'the window is full in Redis');
});

test("the account's 6 slots are shared: with 6 running, the 7th is refused on every instance; one finished frees one", { skip }, async () => {
  const account = await on(0).createAccount();
  const { key } = await on(0).createKey({ account_id: account.id });
  const held: Lease[] = [];
  // The peer holds 2 slots; 4 requests run, spread over the instances.
  for (let i = 0; i < 2; i++) held.push((await peer.acquire('slot', account.id, 6))!);
  const running = Array.from({ length: 4 }, (_, i) => slowPost(on(i), key));
  await untilRunning(4);
  for (let i = 0; i < servers.length; i++) {
    const refused = await slowPost(on(i), key);
    assert.equal(refused.status, 429, `instance ${i}`);
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, /concurrent/);
  }
  assert.equal(await peer.acquire('slot', account.id, 6), null, 'the peer sees all 6 taken');
  // The peer gives one back: one more request runs (on the last instance).
  await peer.release(held.pop()!);
  const seventh = slowPost(on(servers.length - 1), key);
  await untilRunning(5);
  assert.equal((await slowPost(on(0), key)).status, 429);
  releaseAll();
  for (const r of [...running, seventh]) assert.equal((await r).status, 200);
  // Every request gave its slot back in Redis: the peer can take the 5 the servers held.
  const back: Lease[] = [];
  for (let i = 0; i < 20 && back.length < 5; i++) {
    const l = await peer.acquire('slot', account.id, 6);
    if (l) back.push(l);
    else await pause(20);
  }
  assert.equal(back.length, 5);
  for (const l of [...back, ...held]) await peer.release(l);
});

/** Opens a Responses WebSocket: the socket, or the status the upgrade was refused with. */
function openSocket(server: TestServer, key: string): Promise<WebSocket | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${server.baseURL.replace('http', 'ws')}/responses`, { headers: { authorization: `Bearer ${key}` } });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    ws.once('error', () => resolve(0));
  });
}

test("the account's 8 sockets are shared: 12 opened at once over the instances and a peer holding one, exactly 7 open; the next refused on each", { skip }, async () => {
  const account = await on(0).createAccount();
  const { key } = await on(0).createKey({ account_id: account.id });
  const held = (await peer.acquire('socket', account.id, 8))!;
  const attempts = await Promise.all(Array.from({ length: 12 }, (_, i) => openSocket(on(i), key)));
  const open = attempts.filter((a): a is WebSocket => typeof a !== 'number');
  assert.equal(open.length, 7);
  assert.deepEqual(attempts.filter((a) => typeof a === 'number'), [429, 429, 429, 429, 429]);
  for (let i = 0; i < servers.length; i++) assert.equal(await openSocket(on(i), key), 429, `instance ${i}`);
  // A socket closed frees its lease: another opens (the close reaches the server asynchronously).
  open.pop()!.close();
  let again: WebSocket | number = 429;
  for (let i = 0; i < 100 && again === 429; i++) {
    await pause(20);
    again = await openSocket(on(0), key);
  }
  assert.ok(again instanceof WebSocket, `got ${String(again)}`);
  open.push(again);
  for (const ws of open) ws.close();
  await peer.release(held);
});
