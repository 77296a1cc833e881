// The activity log's mark (recover.ts): never past a call that reserved credits and whose
// row is not written yet, however old its request id (a slow upload, a batch line that
// waited for a slot), so the next start rebuilds its row once, and only its row.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../config.ts';
import { Ledger } from '../credits/ledger.ts';
import { newId } from '../ids.ts';
import { openStore, type Store } from '../store/db.ts';
import { scratchDatabase } from '../../test/helpers/test-server.ts';
import { ActivityLog, type ActivityRow } from './activity-log.ts';
import { idTime, recoverActivity, RECOVERED } from './recover.ts';

const INSTANCE = 'mark-test';
const silent = { error() {}, warn() {}, info() {}, debug() {} } as unknown as FastifyBaseLogger;

let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
let store: Store;
before(async () => {
  scratch = await scratchDatabase();
  store = await openStore(loadConfig({ DATA_DIR: scratch.dir, DATABASE_URL: scratch.url }).database);
  await store.db.insertInto('accounts').values({ id: 'acct_mark', name: 'mark', balance: 1_000_000_000, reserved: 0, created_at: 1 }).execute();
});
after(async () => {
  await store.close();
  await scratch.cleanup();
});

const savedMark = async () => Number((await store.db.selectFrom('meta').select('value').where('key', '=', `activity_mark:${INSTANCE}`).executeTakeFirstOrThrow()).value);
/** A request id made at `at` (ids.ts: the time, a sequence, random characters). */
const idAt = (at: number) => `req_${at.toString(36).padStart(9, '0')}0000old0call0000`;
const row = (id: string, credits: number): ActivityRow => ({
  request_id: id,
  created_at: Date.now(),
  account_id: 'acct_mark',
  key_id: null,
  method: 'POST',
  endpoint: '/v1/chat/completions',
  model: 'agent',
  status: 200,
  error_code: null,
  client_request_id: null,
  end_user: null,
  safety_identifier: null,
  input_tokens: 5,
  output_tokens: 3,
  credits_reserved: 1_000,
  credits_settled: credits,
  cost_usd: 0,
  latency_ms: 1,
});

test('the mark stays behind an old call that reserved until its row is written; the next start rebuilds that row alone', async () => {
  const ledger = new Ledger(store, silent, INSTANCE, 60_000);
  const log = new ActivityLog(store, silent, 20, INSTANCE);
  const facts = { endpoint: '/v1/chat/completions', model: 'agent' };
  const usage = { inputTokens: 5, outputTokens: 3, costUsd: 0 };
  // A call whose id is two minutes old (a slow upload) reserves now.
  const old = idAt(Date.now() - 120_000);
  try {
    assert.equal(await log.recover([]), 0);

    // The mark moves back first.
    const owed = log.expect(old);
    assert.ok(owed, 'a call older than the saved mark waits for it to move back');
    await owed;
    assert.ok((await savedMark()) <= idTime(old));
    const held = (await ledger.reserve('acct_mark', null, old, 1_000, facts))!;
    assert.ok(held);

    // Other calls run to the end and are logged; the mark is saved again meanwhile.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 10; i++) {
        const id = newId('req_');
        assert.equal(log.expect(id), undefined, 'a new call costs no write');
        const r = (await ledger.reserve('acct_mark', null, id, 1_000, facts))!;
        const charged = await ledger.settle(r, 400, usage);
        log.add(row(id, charged));
      }
      await log.flush();
      await delay(1_100);
    }
    await log.flush();
    assert.ok((await savedMark()) <= idTime(old), 'not past the open call');

    // The old call settles (committed: on PostgreSQL after its answer); the process dies before its row is written.
    assert.equal(await ledger.settle(held, 700, usage), 700);
    await ledger.settling();
  } finally {
    ledger.stopLeaseRenewal();
  }

  // The next start: only the lost row is rebuilt, from the ledger entry.
  assert.equal(await recoverActivity(store, INSTANCE), 1);
  const rows = await store.db.selectFrom('activity').selectAll().where('account_id', '=', 'acct_mark').execute();
  assert.equal(rows.length, 31);
  const rebuilt = rows.find((r) => r.request_id === old)!;
  assert.equal(rebuilt.error_code, RECOVERED);
  assert.equal(Number(rebuilt.credits_settled), 700);
  assert.deepEqual([Number(rebuilt.input_tokens), Number(rebuilt.output_tokens)], [5, 3]);
  assert.equal(rows.filter((r) => r.error_code === RECOVERED).length, 1);
  assert.equal(await recoverActivity(store, INSTANCE), 0, 'and never twice');
  await log.close();
});
