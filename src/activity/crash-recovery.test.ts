// A crash under load: `kill -9` drops the activity rows still buffered in memory, charged
// calls included. The instance, started again, rebuilds them from the ledger (its durable
// entries), so the activity log again equals the ledger: one row per entry, the same
// credits. Another instance on the same database leaves them to their owner, and
// recovering again writes nothing twice. The server runs as a real child process.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { loadConfig } from '../config.ts';
import { openStore } from '../store/db.ts';
import { recoverActivity } from './recover.ts';
import { startFakeUpstream, type FakeUpstream } from '../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { adminAt, freePort, startChildApp } from '../../test/helpers/child-app.ts';
import { ADMIN_TOKEN, scratchDatabase } from '../../test/helpers/test-server.ts';

let upstream: FakeUpstream;
let scratch: Awaited<ReturnType<typeof scratchDatabase>>;

before(async () => {
  // Answers after 0 to 15 ms, so calls are in flight at any moment.
  upstream = await startFakeUpstream(async (_req, res) => {
    await delay(Math.floor(Math.random() * 15));
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'an answer' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 120, completion_tokens: 80, total_tokens: 200 },
      }),
    );
  });
  scratch = await scratchDatabase();
});
after(async () => {
  await upstream.close();
  await scratch.cleanup();
});

function startServer(port: number, instance: string): Promise<ChildProcess> {
  return startChildApp(port, {
    DATA_DIR: scratch.dir,
    DATABASE_URL: scratch.url,
    AGENT_API_ADMIN_TOKEN: ADMIN_TOKEN,
    AGENT_API_INSTANCE_ID: instance,
    AGENT_API_ACCOUNT_CONCURRENCY: '50',
    // Rows stay in memory until 500 are waiting (or a minute passes): a crash loses many.
    AGENT_API_ACTIVITY_FLUSH_MS: '60000',
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_MODEL_AGENT: 'upstream-small',
    UPSTREAM_PRICE_INPUT_PER_MTOK: '3',
    UPSTREAM_PRICE_OUTPUT_PER_MTOK: '15',
    UPSTREAM_MAX_RETRIES: '0',
  });
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await once(child, 'exit');
}

/** The account's ledger entries and activity rows, read straight from the database. */
async function books(accountId: string) {
  const store = await openStore(loadConfig({ DATA_DIR: scratch.dir, DATABASE_URL: scratch.url }).database);
  try {
    const entries = await store.db.selectFrom('credit_reservations').selectAll().where('account_id', '=', accountId).execute();
    const rows = await store.db.selectFrom('activity').selectAll().where('account_id', '=', accountId).execute();
    const charged = entries.reduce((n, e) => n + Number(e.charged), 0);
    const logged = rows.reduce((n, r) => n + Number(r.credits_settled), 0);
    return { entries, rows, charged, logged };
  } finally {
    await store.close();
  }
}

/** What an instance's start runs to rebuild its rows. */
async function recoverWith(instance: string): Promise<number> {
  const store = await openStore(loadConfig({ DATA_DIR: scratch.dir, DATABASE_URL: scratch.url }).database);
  try {
    return await recoverActivity(store, instance);
  } finally {
    await store.close();
  }
}

test('after kill -9 under load, the restarted instance rebuilds the lost activity rows from the ledger, once', async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const admin = adminAt(origin, ADMIN_TOKEN);
  const instance = 'activity-crash';
  let child = await startServer(port, instance);
  try {
    const account = await admin('POST', '/accounts', { name: `activity-crash-${Date.now()}`, credits: 100 });
    const { key } = await admin('POST', '/keys', { account_id: account.id, name: 'load' });

    // Charged calls from 8 clients until the server dies under them.
    let answered = 0;
    let dead = false;
    const client = async () => {
      while (!dead) {
        try {
          const res = await fetch(`${origin}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'Say something' }], max_tokens: 100 }),
          });
          await res.arrayBuffer();
          if (res.status === 200) answered++;
        } catch {
          return; // the server is gone
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    for (let i = 0; i < 2_000 && answered < 150; i++) await delay(10);
    assert.ok(answered >= 150, `the load ran (${answered} answered)`);
    await stop(child, 'SIGKILL');
    dead = true;
    await Promise.all(clients);

    const crashed = await books(account.id);
    assert.ok(crashed.charged > 0);
    assert.ok(crashed.rows.length < crashed.entries.length, `the crash lost buffered rows (${crashed.rows.length} rows, ${crashed.entries.length} ledger entries)`);

    // Another instance starting on the same database leaves the dead one's rows to it
    // (its start runs this; the dead instance's rows might as well be in a live one's memory).
    assert.equal(await recoverWith('activity-crash-other'), 0);
    assert.equal((await books(account.id)).rows.length, crashed.rows.length, 'another instance recovered nothing of it');

    // The instance itself, started again: the log equals the ledger.
    child = await startServer(port, instance);
    const recovered = await books(account.id);
    assert.ok(recovered.charged >= crashed.charged);
    assert.equal(recovered.logged, recovered.charged, 'sum(activity.credits_settled) == sum(credit_reservations.charged)');
    const byId = new Map(recovered.rows.map((r) => [r.request_id, r]));
    assert.equal(recovered.rows.length, recovered.entries.length, 'one row per ledger entry');
    for (const e of recovered.entries) {
      const row = byId.get(e.request_id);
      assert.ok(row, `request ${e.request_id} has its activity row`);
      assert.equal(Number(row.credits_settled), Number(e.charged));
    }
    const rebuilt = recovered.rows.filter((r) => r.error_code === 'recovered_after_crash');
    assert.equal(rebuilt.length, recovered.rows.length - crashed.rows.length, 'every new row is marked recovered');
    for (const r of rebuilt) {
      assert.equal(r.status, 0);
      assert.equal(r.endpoint, '/v1/chat/completions');
      assert.equal(r.model, 'agent');
      assert.equal(r.key_id, byId.get(r.request_id)!.key_id);
      // A charged call's tokens come from the ledger entry too.
      if (Number(r.credits_settled) > 0) assert.deepEqual([Number(r.input_tokens), Number(r.output_tokens)], [120, 80]);
    }

    // Recovering again (a second start) writes nothing twice.
    await stop(child, 'SIGTERM');
    assert.equal(await recoverWith(instance), 0);
    const again = await books(account.id);
    assert.equal(again.rows.length, recovered.rows.length);
    assert.equal(again.logged, again.charged);
  } finally {
    await stop(child, 'SIGTERM');
  }
});
