// Key changes reach every instance's key cache: two KeysServices on one database (as two
// instances have), each caching for a minute, with Redis signals (TEST_REDIS_URL). A key
// paused, updated or revoked through one is seen by the other as soon as Redis carries
// the signal, instead of when its cache expires; another key's cached entry is kept. A
// reconnect to Redis (signals may have been missed) empties the cache.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { scratchDatabase } from '../../test/helpers/test-server.ts';
import { LocalSignals, RedisSignals, type Signals } from '../cluster/signals.ts';
import { twoStores } from '../jobs/jobs.test-support.ts';
import { KeysService } from './keys-service.ts';
import { AccountsService } from '../accounts/accounts-service.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const noRedis = redisUrl ? false : 'TEST_REDIS_URL is not set (run with npm test, which starts a redis-server)';
const log = { info() {}, warn() {} };

/** Bounded: a signal crosses Redis in well under a millisecond; the cache would hold for a minute. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error(`not seen within 2 s: ${what}`);
}

type Db = ConstructorParameters<typeof KeysService>[0];

async function twoInstances(signalsFor: () => Signals, fn: (a: KeysService, b: KeysService, accountId: string, db: Db) => Promise<void>): Promise<void> {
  const scratch = await scratchDatabase();
  const stores = await twoStores(scratch.url);
  const signals = [signalsFor(), signalsFor()];
  try {
    await Promise.all(signals.map((s) => s.ready()));
    const account = await new AccountsService(stores.first.db).create(`acct-${randomUUID()}`, 10);
    await fn(new KeysService(stores.first.db, 60_000, signals[0]), new KeysService(stores.second.db, 60_000, signals[1]), account.id, stores.second.db);
  } finally {
    await Promise.all(signals.map((s) => s.close()));
    await stores.close();
    await scratch.cleanup();
  }
}

test('a key paused, updated or revoked through B is seen by A at once, not when its cache expires', { skip: noRedis }, async () => {
  const prefix = `test:${randomUUID()}:`;
  await twoInstances(
    () => new RedisSignals({ url: redisUrl!, log, prefix }),
    async (a, b, accountId) => {
      const { record, secret } = await b.create({ account_id: accountId, name: 'changing' });
      const other = await b.create({ account_id: accountId, name: 'untouched' });
      assert.equal((await a.authenticate(secret))?.paused, false);
      assert.equal((await a.authenticate(other.secret))?.name, 'untouched');

      await b.update(record.id, { paused: true });
      await eventually('A sees the pause', async () => (await a.authenticate(secret))?.paused === true);
      await b.update(record.id, { paused: false, rpm: 7 });
      await eventually('A sees the update', async () => (await a.authenticate(secret))?.rpm === 7);
      await b.revoke(record.id);
      await eventually('A sees the revocation', async () => (await a.authenticate(secret))?.revokedAt !== null);

      // The other key's entry was kept: a change to it in the database alone is not seen.
      await b.update(other.record.id, { name: 'renamed' });
      await eventually('A sees the rename', async () => (await a.authenticate(other.secret))?.name === 'renamed');
    },
  );
});

test('the cache is kept while no signal came: without one, another instance\'s change waits for expiry (the control)', async () => {
  // Two instances that cannot signal each other (each its own in-process signals).
  await twoInstances(
    () => new LocalSignals(log),
    async (a, b, accountId) => {
      const { record, secret } = await b.create({ account_id: accountId, name: 'k' });
      assert.equal((await a.authenticate(secret))?.revokedAt, null);
      assert.equal((await b.authenticate(secret))?.revokedAt, null);
      await b.revoke(record.id);
      await sleep(50);
      assert.equal((await a.authenticate(secret))?.revokedAt, null, 'A still has it cached');
      assert.notEqual((await b.authenticate(secret))?.revokedAt, null, 'B, which revoked it, sees it at once');
    },
  );
});

test('a reconnect to Redis empties the key cache (signals may have been missed meanwhile)', async () => {
  const signals = new LocalSignals(log);
  await twoInstances(
    () => signals,
    async (a, b, accountId, db) => {
      const { record, secret } = await b.create({ account_id: accountId, name: 'k' });
      assert.equal((await a.authenticate(secret))?.paused, false);
      // Changed in the database without a signal reaching A (as during an outage).
      await new KeysService(db, 0).update(record.id, { paused: true });
      assert.equal((await a.authenticate(secret))?.paused, false);
      (signals as unknown as { resync(): void }).resync();
      assert.equal((await a.authenticate(secret))?.paused, true);
    },
  );
});

test('revoking or updating a key that does not exist (any id a URL can carry) signals nothing and throws nothing', async () => {
  const signals = new LocalSignals(log);
  const heard: string[] = [];
  signals.subscribe('key.changed', (id) => heard.push(id));
  await twoInstances(
    () => signals,
    async (_a, b) => {
      assert.equal(await b.revoke('no such key: ü\n'), undefined);
      assert.equal(await b.update('key_missing', { paused: true }), undefined);
      assert.deepEqual(heard, []);
    },
  );
});
