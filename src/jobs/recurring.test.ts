// Recurring jobs (the periodic sweeps run on them; they replace the in-process sweeper):
// a kind runs every interval on one instance at a time, never overlapping; a failing run
// is logged and the next one follows; a run can be brought forward; start pulls in a run
// scheduled past a shorter interval; stopped runners run nothing more.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { scratchDatabase } from '../../test/helpers/test-server.ts';
import type { Store } from '../store/db.ts';
import { JobQueue, recurringKey } from './job-queue.ts';
import type { JobRunner, RunnerOptions } from './job-runner.ts';
import { recordingLog, testRunner, twoStores, waitFor } from './jobs.test-support.ts';
import { jobKind } from './types.ts';

async function withRunners(fn: (w: { store: Store; queue: JobQueue; runner(id: string, options?: Partial<RunnerOptions>, store?: Store): JobRunner }) => Promise<void>) {
  const scratch = await scratchDatabase();
  const stores = await twoStores(scratch.url);
  const runners: JobRunner[] = [];
  try {
    await fn({
      store: stores.first,
      queue: new JobQueue(stores.first),
      runner: (id, options, store = stores.second) => {
        const r = testRunner(new JobQueue(store), id, options);
        runners.push(r);
        return r;
      },
    });
  } finally {
    await Promise.all(runners.map((r) => r.stop(200)));
    await stores.close();
    await scratch.cleanup();
  }
}

test('runs repeatedly, on one instance at a time, and never overlaps a slow run', async () => {
  await withRunners(async (w) => {
    const sweep = jobKind<null, never, number>('test.sweep');
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const run = async () => {
      maxActive = Math.max(maxActive, ++active);
      await sleep(20);
      active--;
      return ++runs;
    };
    // Two instances, each ready to run it; runs take four intervals.
    const a = w.runner('a', {}, w.store).recurring(sweep, 5, run);
    const b = w.runner('b').recurring(sweep, 5, run);
    await Promise.all([a.start(), b.start()]);
    await waitFor('three runs', () => runs >= 3);
    await Promise.all([a.stop(), b.stop()]);
    assert.equal(maxActive, 1);
    assert.equal(active, 0, 'stop() waited for the run in progress');
    const rows = await w.store.db.selectFrom('jobs').selectAll().where('kind', '=', 'test.sweep').execute();
    assert.equal(rows.length, 1, 'one row per recurring kind');
    assert.equal(rows[0]!.status, 'queued');
    assert.equal(rows[0]!.dedupe_key, recurringKey(sweep));
    const after = runs;
    await sleep(30);
    assert.equal(runs, after, 'no run after stop()');
  });
});

test('a failing run is logged and the next run follows', async () => {
  await withRunners(async (w) => {
    const sweep = jobKind<null, never, number>('test.failing-sweep');
    let calls = 0;
    const log = recordingLog();
    const runner = w.runner('a', { log }).recurring(sweep, 5, async () => {
      calls++;
      if (calls === 1) throw new Error('database away');
      return 3;
    });
    await runner.start();
    await waitFor('a second run', () => calls >= 2);
    await runner.stop();
    const errors = log.lines.filter((l) => l.level === 'error');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.msg, 'test.failing-sweep failed');
    assert.match(String(errors[0]!.obj.err), /database away/);
    const row = await w.store.db.selectFrom('jobs').selectAll().where('kind', '=', 'test.failing-sweep').executeTakeFirstOrThrow();
    assert.equal(row.last_error, null, 'a good run clears the error');
    assert.equal(row.attempts, 0, 'attempts start again each run');
  });
});

test('the first start runs it at once; a run can be brought forward; start pulls in a run past a shorter interval', async () => {
  await withRunners(async (w) => {
    const sweep = jobKind<null, never, number>('test.hourly');
    const hour = 60 * 60_000;
    let calls = 0;
    const first = w.runner('a').recurring(sweep, hour, async () => ++calls);
    await first.start();
    await waitFor('the first run', () => calls === 1);
    assert.equal(await w.queue.reschedule({ dedupeKey: recurringKey(sweep) }, Date.now()), true);
    // Another instance's queue moved it: this runner finds it by polling (its timers do not hold the process, waitFor's do).
    await waitFor('the second run', () => calls === 2);
    await waitFor('queued an hour on', async () => {
      const job = await w.queue.get(await idOf(w.store, sweep.name));
      return job?.status === 'queued' && job.runAfter > Date.now() + hour / 2;
    });
    await first.stop();

    await w.store.db.updateTable('jobs').set({ run_after: Date.now() + 10 * hour }).where('kind', '=', sweep.name).execute();
    const before = Date.now();
    const second = w.runner('b').recurring(sweep, hour, async () => ++calls);
    await second.start();
    const row = await w.store.db.selectFrom('jobs').selectAll().where('kind', '=', sweep.name).executeTakeFirstOrThrow();
    assert.ok(row.run_after <= Date.now() + hour && row.run_after >= before + hour, 'at most one interval away');
    assert.equal(calls, 2);
  });
});

async function idOf(store: Store, kind: string): Promise<string> {
  return (await store.db.selectFrom('jobs').select('id').where('kind', '=', kind).executeTakeFirstOrThrow()).id;
}
