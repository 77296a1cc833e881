// RedisLimits when Redis does not answer (a port nothing listens on): every check fails at
// once; `closed` refuses with a 503 naming Redis, `open` counts in this process (still
// exact there); /readyz's health says why. Needs no redis-server.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { ApiError } from '../errors.ts';
import { RedisLimits, type RedisFailureMode } from './redis-limits.ts';

let url: string;
const opened: RedisLimits[] = [];
const warnings: string[] = [];
const log = { warn: (_: object, msg: string) => void warnings.push(msg), info: () => undefined };

before(async () => {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  url = `redis://127.0.0.1:${(srv.address() as net.AddressInfo).port}`;
  await new Promise((resolve) => srv.close(resolve));
});
after(async () => {
  for (const l of opened) await l.close();
});

async function open(onFailure: RedisFailureMode): Promise<RedisLimits> {
  const limits = await RedisLimits.open({ url, onFailure, leaseMs: 30_000, instanceId: 'test', log });
  opened.push(limits);
  return limits;
}

const refusedForRedis = (err: unknown) => {
  assert.ok(err instanceof ApiError, String(err));
  assert.equal(err.status, 503);
  assert.equal(err.code, 'service_unavailable');
  assert.match(err.message, /Redis/);
  return true;
};

test('closed (the default): every check is a 503 naming Redis, at once; health says Redis is down', async () => {
  warnings.length = 0;
  const limits = await open('closed');
  await assert.rejects(limits.hitRequestsPerMinute('key_1', 10, Date.now()), refusedForRedis);
  await assert.rejects(limits.acquire('slot', 'acct_1', 6), refusedForRedis);
  await assert.rejects(limits.admit('key_1', 10, 'acct_1', 6, Date.now()), refusedForRedis);
  await assert.rejects(limits.acquire('socket', 'acct_1', 8), refusedForRedis);
  // Many at once: all refused, none waits for a connection.
  const results = await Promise.allSettled(Array.from({ length: 20 }, () => limits.acquire('slot', 'acct_1', 6)));
  assert.ok(results.every((r) => r.status === 'rejected' && refusedForRedis(r.reason)));
  const health = await limits.health();
  assert.equal(health.ok, false);
  assert.match(health.error ?? '', /connection failed|not connected|timed out/);
  assert.equal(health.error?.includes(url), false, 'the URL (it may hold a password) is not shown');
  assert.equal(warnings.filter((w) => /Redis is not answering/.test(w)).length, 1, 'said once, not per request');
});

test('open: counted in this process while Redis is down, exactly', async () => {
  const limits = await open('open');
  const windows = await Promise.all(Array.from({ length: 8 }, () => limits.hitRequestsPerMinute('key_2', 3, Date.now())));
  assert.equal(windows.filter((w) => w.allowed).length, 3);
  const admitted = await Promise.all(Array.from({ length: 4 }, () => limits.admit('key_3', 10, 'acct_2', 6, Date.now())));
  assert.ok(admitted.every((a) => a.window.allowed && a.slot));
  for (const a of admitted) await limits.release(a.slot!);
  const leases = (await Promise.all(Array.from({ length: 10 }, () => limits.acquire('slot', 'acct_2', 6)))).filter((l) => l !== null);
  assert.equal(leases.length, 6);
  await limits.release(leases[0]!);
  assert.notEqual(await limits.acquire('slot', 'acct_2', 6), null);
  assert.equal(await limits.acquire('slot', 'acct_2', 6), null);
  assert.equal((await limits.health()).ok, false, 'still unready: the counts are per instance');
});
