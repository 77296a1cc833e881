// The service's sweeps run as recurring jobs, on the database the run selected: each
// kind has one row, and a run removes expired stored completions, releases holds a
// crashed instance left (charging nothing) and prunes long-finished jobs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestServer } from '../../test/helpers/test-server.ts';
import { pruneJobs, releaseStaleHolds, STALE_HOLD_MS, sweepStoredCompletions } from './housekeeping.ts';
import { FINISHED_JOB_RETENTION_MS, recurringKey } from './job-queue.ts';
import { waitFor } from './jobs.test-support.ts';

test('the sweeps run on the job runner: expired completions go, stale holds are released, old jobs pruned', async () => {
  const server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20' });
  try {
    const { db } = server.app.services.store;
    const { jobs } = server.app.services;
    // The first start queued one row per sweep and ran them.
    const kinds = [sweepStoredCompletions, releaseStaleHolds, pruneJobs].map((k) => k.name);
    await waitFor('the first runs', async () => {
      const rows = await db.selectFrom('jobs').selectAll().where('kind', 'in', kinds).execute();
      return rows.length === 3 && rows.every((r) => r.status === 'queued' && r.attempts === 0 && r.result !== null);
    });

    const now = Date.now();
    const account = await server.createAccount(10);
    await db
      .insertInto('chat_completions')
      .values([
        { id: 'chatcmpl-old', account_id: account.id, model: 'agent', created_at: 1, expires_at: now - 1, metadata: '{}', completion: '{}', messages: '[]' },
        { id: 'chatcmpl-new', account_id: account.id, model: 'agent', created_at: now, expires_at: now + 60_000, metadata: '{}', completion: '{}', messages: '[]' },
      ])
      .execute();
    // A hold a crashed instance took two hours ago, and one of a call in flight.
    await db.updateTable('accounts').set({ reserved: 3_000_000 }).where('id', '=', account.id).execute();
    await db
      .insertInto('credit_holds')
      .values([
        { run_id: 'req_crashed', request_id: 'req_crashed', account_id: account.id, key_id: null, amount: 2_000_000, created_at: now - STALE_HOLD_MS - 60_000, instance_id: 'gone' },
        { run_id: 'req_live', request_id: 'req_live', account_id: account.id, key_id: null, amount: 1_000_000, created_at: now, instance_id: 'gone' },
      ])
      .execute();
    const stale = await jobs.enqueue(sweepStoredCompletions, null, { dedupeKey: 'not-a-recurring-row', runAt: now + 3_600_000 });
    await jobs.cancel(stale.id);
    await db.updateTable('jobs').set({ updated_at: now - FINISHED_JOB_RETENTION_MS - 1 }).where('id', '=', stale.id).execute();

    for (const kind of [sweepStoredCompletions, releaseStaleHolds, pruneJobs]) assert.equal(await jobs.reschedule({ dedupeKey: recurringKey(kind) }, Date.now()), true);
    await waitFor('the expired completion is gone', async () => (await db.selectFrom('chat_completions').select('id').execute()).length === 1);
    await waitFor('the stale hold is released', async () => (await db.selectFrom('credit_holds').select('request_id').execute()).length === 1);
    await waitFor('the finished job is pruned', async () => (await jobs.get(stale.id)) === undefined);

    assert.deepEqual(await db.selectFrom('chat_completions').select('id').execute(), [{ id: 'chatcmpl-new' }]);
    assert.deepEqual(await db.selectFrom('credit_holds').select('request_id').execute(), [{ request_id: 'req_live' }]);
    const after = await db.selectFrom('accounts').selectAll().where('id', '=', account.id).executeTakeFirstOrThrow();
    assert.equal(after.reserved, 1_000_000);
    assert.equal(after.balance, 10_000_000, 'nothing charged');
    await waitFor('each sweep queued again', async () => {
      const rows = await db.selectFrom('jobs').selectAll().where('kind', 'in', kinds).execute();
      return rows.length === 3 && rows.every((r) => r.status === 'queued' && r.run_after > Date.now() + 30_000);
    });
  } finally {
    await server.close();
  }
});
