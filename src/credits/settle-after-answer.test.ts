// PostgreSQL: a call's answer does not wait for its settlement's commit (issue 25: one
// synchronous commit on the path, the reservation's), yet nothing is lost or overdrawn.
// The settlement is held back in the database (the ledger table locked from outside) to
// open the window between the answer and the commit: the hold still counts as reserved,
// every read this process makes of the balance, the ledger or the activity log waits for
// the charge it answered, and a write that fails is tried again. SQLite orders its
// writes instead (one connection): nothing to hold back there.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import { toMicro } from '../accounts/money.ts';
import { accountCredits } from '../api/gateway/account-view.ts';
import type { KeyRecord } from '../keys/keys-service.ts';

const postgres = process.env.TEST_DATABASE === 'postgres';
const skip = postgres ? false : 'PostgreSQL only: SQLite commits a queued write before any later statement';

let server: TestServer;
let url: string;
before(async () => {
  if (!postgres) return;
  server = await startTestServer({ AGENT_API_ACCOUNT_CONCURRENCY: '100' });
  url = (server.config.database as { url: string }).url;
});
after(async () => {
  await server?.close();
});

/** A connection of the test's own, outside the app. */
async function connect(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

/** Holds back every settlement: the ledger's entries cannot be written until `release` (reservations and reads go on). */
async function holdBackSettlements(): Promise<{ release: () => Promise<void> }> {
  const client = await connect();
  await client.query('begin');
  await client.query('lock table credit_reservations in exclusive mode');
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      await client.query('commit');
      await client.end();
    },
  };
}

/** Settles `p` within a generous bound, or says it did not (the old code's answer waited for the commit held back). */
const within = <T>(p: Promise<T>, ms = 30_000) => Promise.race([p, delay(ms).then(() => 'timed out' as const)]);

/** Which of `reads` have resolved after a moment (they should all still wait). */
async function resolvedOf(reads: Promise<unknown>[]): Promise<number> {
  let resolved = 0;
  for (const r of reads) void r.then(() => resolved++, () => resolved++);
  await delay(300);
  return resolved;
}

test('the answer goes out before the settlement commits; its hold still counts; reads wait for the charge', { skip }, async () => {
  const account = await server.createAccount(10);
  const { key, id: keyId } = await server.createKey({ account_id: account.id });
  const { ledger } = server.app.services;
  const direct = await connect();
  const held = await holdBackSettlements();
  try {
    const answer = await within(server.openai(key).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Tell me about the sea' }] }).withResponse());
    assert.notEqual(answer, 'timed out', 'answered while its settlement could not commit');
    if (answer === 'timed out') return;
    const svc = toMicro((answer.data as unknown as { svc: number }).svc);
    assert.ok(svc > 0);
    const requestId = answer.response.headers.get('x-request-id')!;

    // Not committed: the hold is there and the account still holds it.
    const holds = await direct.query('select amount from credit_holds where request_id = $1', [requestId]);
    assert.equal(holds.rowCount, 1, 'the settlement has not committed');
    const row = (await direct.query('select balance, reserved from accounts where id = $1', [account.id])).rows[0] as { balance: string; reserved: string };
    assert.equal(Number(row.balance), toMicro(10), 'nothing charged yet');
    assert.equal(Number(row.reserved), Number(holds.rows[0].amount), 'the hold still counts as reserved');
    // So nothing more than balance - reserved can be taken meanwhile.
    const available = Number(row.balance) - Number(row.reserved);
    assert.equal(await ledger.reserve(account.id, null, `req_more_${Date.now()}`, available + 1), null, 'the held credits cannot be spent twice');

    // Every read this process makes of what was charged waits for the commit.
    const reads = [
      server.admin('GET', `/accounts/${account.id}`),
      server.admin('GET', '/accounts'),
      ledger.available(account.id),
      accountCredits(server.app.services, { accountId: account.id } as KeyRecord),
      server.admin('GET', `/activity?key_id=${keyId}`),
    ] as const;
    assert.equal(await resolvedOf([...reads]), 0, 'no read answers before the charge is committed');
    await held.release();

    const [one, list, spendable, credits, activity] = await Promise.all(reads);
    assert.equal(toMicro(one.body.credits), toMicro(10) - svc, 'the account read shows the charge');
    assert.equal(one.body.reserved_credits, 0);
    assert.equal(toMicro(list.body.data.find((a: { id: string }) => a.id === account.id).credits), toMicro(10) - svc);
    assert.equal(spendable, toMicro(10) - svc);
    assert.ok(credits.data.total_usage > 0);
    assert.equal(activity.body.data.length, 1);
    assert.equal(toMicro(activity.body.data[0].credits_settled), svc, 'the activity row carries the charge');
    const entry = await direct.query('select status, charged, input_tokens, output_tokens from credit_reservations where request_id = $1', [requestId]);
    assert.equal(entry.rows[0].status, 'settled');
    assert.equal(Number(entry.rows[0].charged), svc);
  } finally {
    await held.release().catch(() => undefined);
    await direct.end();
  }
});

test('a settlement whose write fails after the answer is tried again, and charged once', { skip }, async () => {
  const account = await server.createAccount(10);
  const { key } = await server.createKey({ account_id: account.id });
  const direct = await connect();
  const held = await holdBackSettlements();
  try {
    const answer = await within(server.openai(key).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'hi' }] }));
    assert.notEqual(answer, 'timed out');
    if (answer === 'timed out') return;
    const svc = toMicro((answer as unknown as { svc: number }).svc);
    // The settlement's connection is cut while it waits (a database restart, a network
    // failure): its write fails.
    let cut = 0;
    for (let i = 0; i < 1_500 && cut === 0; i++) {
      const waiting = await direct.query("select pid from pg_stat_activity where query like '%ledger_settle%' and wait_event_type = 'Lock' and pid <> pg_backend_pid()");
      for (const { pid } of waiting.rows) cut += (await direct.query('select pg_terminate_backend($1) as ok', [pid])).rows[0].ok ? 1 : 0;
      if (cut === 0) await delay(20);
    }
    assert.ok(cut > 0, 'the settlement was waiting, and its connection was cut');
    await held.release();
    // Tried again a second later: charged once, the hold gone.
    let after = (await server.admin('GET', `/accounts/${account.id}`)).body;
    for (let i = 0; i < 300 && after.reserved_credits > 0; i++) {
      await delay(50);
      after = (await server.admin('GET', `/accounts/${account.id}`)).body;
    }
    assert.equal(after.reserved_credits, 0);
    assert.equal(toMicro(after.credits), toMicro(10) - svc, 'charged what the answer reported, once');
    const entries = await direct.query('select charged from credit_reservations where account_id = $1', [account.id]);
    assert.deepEqual(entries.rows.map((e) => Number(e.charged)), [svc]);
  } finally {
    await held.release().catch(() => undefined);
    await direct.end();
  }
});
