// A crash with streams in flight: `kill -9` leaves their credit holds behind; the same
// instance, started again, releases them at once (not an hour later), charging nothing.
// The server runs as a real child process on the database the run selected.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { loadConfig } from '../config.ts';
import { openStore } from '../store/db.ts';
import { startFakeUpstream, type FakeUpstream } from '../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { adminAt, freePort, startChildApp } from '../../test/helpers/child-app.ts';
import { ADMIN_TOKEN, scratchDatabase } from '../../test/helpers/test-server.ts';

const STREAMS = 20;

let upstream: FakeUpstream;
let scratch: Awaited<ReturnType<typeof scratchDatabase>>;

before(async () => {
  // Streams that never finish on their own: one chunk, then nothing until the client leaves.
  upstream = await startFakeUpstream(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'hello ' }, finish_reason: null }] })}\n\n`);
  });
  scratch = await scratchDatabase();
});
after(async () => {
  await upstream.close();
  await scratch.cleanup();
});


function startServer(port: number, extraEnv: Record<string, string> = {}): Promise<ChildProcess> {
  return startChildApp(port, {
    DATA_DIR: scratch.dir,
    DATABASE_URL: scratch.url,
    AGENT_API_ADMIN_TOKEN: ADMIN_TOKEN,
    AGENT_API_INSTANCE_ID: 'crash-test-instance',
    AGENT_API_ACCOUNT_CONCURRENCY: '50',
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_MODEL_AGENT: 'upstream-small',
    UPSTREAM_MAX_RETRIES: '0',
    ...extraEnv,
  });
}

/** Opens `n` streams that stay under way (the fake upstream never ends them). */
async function openStreams(origin: string, key: string, n: number) {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const res = await fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'Write at length' }], stream: true }),
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      await reader.read();
      return reader;
    }),
  );
}

test("another instance releases a dead instance's holds once their lease runs out", async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const admin = adminAt(origin, ADMIN_TOKEN);
  const lease = { AGENT_API_HOLD_LEASE_MS: '1000' };
  let child = await startServer(port, { ...lease, AGENT_API_INSTANCE_ID: 'lease-dead' });
  const account = await admin('POST', '/accounts', { name: `lease-${Date.now()}`, credits: 10 });
  const { key } = await admin('POST', '/keys', { account_id: account.id, name: 'lease' });
  const readers = await openStreams(origin, key, 3);
  assert.ok((await admin('GET', `/accounts/${account.id}`)).reserved_credits > 0);
  child.kill('SIGKILL');
  await once(child, 'exit');
  for (const r of readers) await r.cancel().catch(() => undefined);

  // A different instance: it does not own those holds, so only their lease frees them.
  child = await startServer(port, { ...lease, AGENT_API_INSTANCE_ID: 'lease-alive' });
  try {
    let after = await admin('GET', `/accounts/${account.id}`);
    for (let i = 0; i < 200 && after.reserved_credits > 0; i++) {
      await delay(50);
      after = await admin('GET', `/accounts/${account.id}`);
    }
    assert.equal(after.reserved_credits, 0, 'released within a lease period or so, not an hour');
    assert.equal(after.credits, 10, 'and charged nothing');
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

test('holds of streams cut off by kill -9 are released when the instance starts again', async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const admin = adminAt(origin, ADMIN_TOKEN);

  let child = await startServer(port);
  const account = await admin('POST', '/accounts', { name: 'crash', credits: 100 });
  const { key } = await admin('POST', '/keys', { account_id: account.id, name: 'crash' });
  const readers = await Promise.all(
    Array.from({ length: STREAMS }, async () => {
      const res = await fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'Write at length' }], stream: true }),
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      await reader.read(); // the stream is under way
      return reader;
    }),
  );
  const inFlight = await admin('GET', `/accounts/${account.id}`);
  assert.ok(inFlight.reserved_credits > 0, 'the streams hold credits');

  child.kill('SIGKILL');
  await once(child, 'exit');
  for (const r of readers) await r.cancel().catch(() => undefined);

  const store = await openStore(loadConfig({ DATA_DIR: scratch.dir, DATABASE_URL: scratch.url }).database);
  try {
    const holds = await store.db.selectFrom('credit_holds').selectAll().where('account_id', '=', account.id).execute();
    assert.equal(holds.length, STREAMS, 'the crash left every hold behind');
    assert.ok(holds.every((h) => h.instance_id === 'crash-test-instance'));
  } finally {
    await store.close();
  }

  child = await startServer(port);
  try {
    const after = await admin('GET', `/accounts/${account.id}`);
    assert.equal(after.reserved_credits, 0, 'released at start, not after the stale-hold sweep');
    assert.equal(after.credits, 100, 'calls cut off by the crash are charged nothing');
    const store2 = await openStore(loadConfig({ DATA_DIR: scratch.dir, DATABASE_URL: scratch.url }).database);
    try {
      const entries = await store2.db.selectFrom('credit_reservations').selectAll().where('account_id', '=', account.id).execute();
      assert.equal(entries.length, STREAMS);
      assert.ok(entries.every((e) => e.status === 'released' && Number(e.charged) === 0));
    } finally {
      await store2.close();
    }
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

test("a live instance's renewals keep its holds; they run out once it stops renewing", async () => {
  const { startTestServer } = await import('../../test/helpers/test-server.ts');
  const server = await startTestServer({ AGENT_API_HOLD_LEASE_MS: '1000', AGENT_API_INSTANCE_ID: 'lease-renewing' });
  try {
    const { ledger } = server.app.services;
    const account = await server.createAccount(1);
    const held = await ledger.reserve(account.id, null, `req_lease_${Date.now()}`, 100_000);
    assert.ok(held);
    // Two lease periods pass while the renewal timer runs: the sweep finds nothing to release.
    await delay(2_200);
    assert.equal(await ledger.releaseStale(60 * 60_000), 0);
    ledger.stopLeaseRenewal();
    // Now the lease runs out and a sweep (this one, or the app's own) releases the hold.
    let reserved = (await server.admin('GET', `/accounts/${account.id}`)).body.reserved_credits;
    for (let i = 0; i < 100 && reserved > 0; i++) {
      await delay(50);
      await ledger.releaseStale(60 * 60_000);
      reserved = (await server.admin('GET', `/accounts/${account.id}`)).body.reserved_credits;
    }
    assert.equal(reserved, 0);
  } finally {
    await server.close();
  }
});
