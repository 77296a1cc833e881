// The first-run and bootstrap-key steps on the selected database: what they create, that
// they do it once, and (PostgreSQL) that instances racing on one database create it once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scratchDatabase } from '../../test/helpers/test-server.ts';
import type { Config } from '../config.ts';
import { AdminTokens } from '../keys/admin-tokens.ts';
import { hashSecret } from '../keys/keys-service.ts';
import { openStore, type Store } from '../store/db.ts';
import { ensureBootstrapKey } from './bootstrap-key.ts';
import { firstRun } from './first-run.ts';

const onPostgres = process.env.TEST_DATABASE === 'postgres';
const settings = { bootstrapKey: undefined, bootstrapCredits: 100, adminToken: undefined };

async function withStores(count: number, fn: (stores: Store[]) => Promise<void>): Promise<void> {
  const scratch = await scratchDatabase();
  const database: Config['database'] = onPostgres ? { kind: 'postgres', url: scratch.url } : { kind: 'sqlite', file: scratch.url.slice('sqlite:'.length) };
  const stores: Store[] = [];
  try {
    for (let i = 0; i < count; i++) stores.push(await openStore(database));
    await fn(stores);
  } finally {
    for (const s of stores) await s.close();
    await scratch.cleanup();
  }
}

const balanceOf = async (store: Store, name: string) =>
  (await store.db.selectFrom('accounts').select('balance').where('name', '=', name).executeTakeFirstOrThrow()).balance / 1_000_000;

test('first run: account default with the starting credits, a key with every switch, an admin token; only once', () =>
  withStores(1, async ([store]) => {
    const db = store!.db;
    const run = await firstRun(db, settings);
    assert.ok(run.apiKey && run.adminToken);
    assert.deepEqual(run.account, { name: 'default', credits: 100 });
    const key = await db.selectFrom('api_keys').selectAll().where('key_hash', '=', hashSecret(run.apiKey)).executeTakeFirstOrThrow();
    // Every capability; the Moderate requests restriction is the operator's to turn on.
    assert.deepEqual(JSON.parse(key.permissions), { ...Object.fromEntries(Object.keys(JSON.parse(key.permissions)).map((p) => [p, true])), moderate: false });
    assert.equal(await new AdminTokens(db, undefined, 0).verify(run.adminToken), 'ok');
    const dump = JSON.stringify(await db.selectFrom('admin_tokens').selectAll().execute());
    assert.ok(!dump.includes(run.adminToken), 'only the hash is stored');

    assert.deepEqual(await firstRun(db, settings), {}, 'a second start creates and shows nothing');
    assert.equal(await balanceOf(store!, 'default'), 100);
    const grants = await db.selectFrom('credit_transactions').select('reason').execute();
    assert.deepEqual(grants, [{ reason: 'bootstrap credits' }]);
  }));

test('first run on a database already in use (it has keys) creates nothing', () =>
  withStores(1, async ([store]) => {
    const db = store!.db;
    await ensureBootstrapKey(db, 'sk-agent-existing-0123456789', 0);
    await db.deleteFrom('meta').execute(); // as if it predated first-run
    await db.updateTable('api_keys').set({ key_hash: 'other' }).execute(); // a key that is not the bootstrap key
    assert.deepEqual(await firstRun(db, settings), {});
    assert.equal(await new AdminTokens(db, undefined, 0).source(), 'none');
  }));

test('AGENT_API_BOOTSTRAP_KEY: its account gets the starting credits once, across restarts and a later first run', () =>
  withStores(1, async ([store]) => {
    const db = store!.db;
    const secret = 'sk-agent-bootstrap-credits-0123456789';
    await ensureBootstrapKey(db, secret, 25);
    await ensureBootstrapKey(db, secret, 25);
    const run = await firstRun(db, { ...settings, bootstrapKey: secret, bootstrapCredits: 25 });
    assert.equal(run.apiKey, undefined, 'the key came from the environment');
    assert.ok(run.adminToken);
    assert.equal(await balanceOf(store!, 'default'), 25);
    assert.equal((await db.selectFrom('api_keys').select('id').execute()).length, 1);
  }));

test('instances racing on one PostgreSQL database: one creates the key, the token and the grant', { skip: !onPostgres && 'PostgreSQL pass only' }, async () => {
  await withStores(4, async (stores) => {
    const runs = await Promise.all(stores.map((s) => firstRun(s.db, settings)));
    assert.equal(runs.filter((r) => r.apiKey).length, 1);
    assert.equal(runs.filter((r) => r.adminToken).length, 1);
    assert.equal(await balanceOf(stores[0]!, 'default'), 100);
  });
  await withStores(4, async (stores) => {
    const secret = 'sk-agent-bootstrap-race-0123456789';
    await Promise.all(stores.map((s) => ensureBootstrapKey(s.db, secret, 10)));
    const runs = await Promise.all(stores.map((s) => firstRun(s.db, { ...settings, bootstrapKey: secret })));
    assert.equal(runs.filter((r) => r.apiKey).length, 0, 'the key came from the environment');
    assert.equal(runs.filter((r) => r.adminToken).length, 1);
    assert.equal(await balanceOf(stores[0]!, 'default'), 10, 'granted once, by whichever came first');
    assert.equal((await stores[0]!.db.selectFrom('accounts').select('id').execute()).length, 1);
    assert.equal((await stores[0]!.db.selectFrom('api_keys').select('id').execute()).length, 1);
  });
});
