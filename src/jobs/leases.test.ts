// Leases on the database the run selected: a job whose runner stopped renewing is
// reclaimed by another once the lease expires and the first runner's late outcome is
// not recorded; a refused renewal aborts the handler; a restart requeues what the
// previous process of the instance left running and a checkpointing handler resumes;
// shutdown hands a stopped job back without counting the attempt.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scratchDatabase } from '../../test/helpers/test-server.ts';
import type { Store } from '../store/db.ts';
import { JobQueue } from './job-queue.ts';
import type { JobRunner, RunnerOptions } from './job-runner.ts';
import { gate, recordingLog, testRunner, twoStores, waitFor } from './jobs.test-support.ts';
import { JobInterrupted, jobKind, type InterruptReason, type JobContext } from './types.ts';

interface World {
  store: Store;
  store2: Store;
  queue: JobQueue;
  runner(instanceId: string, options?: Partial<RunnerOptions>, queue?: JobQueue): JobRunner;
}

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  const scratch = await scratchDatabase();
  const stores = await twoStores(scratch.url);
  const runners: JobRunner[] = [];
  try {
    await fn({
      store: stores.first,
      store2: stores.second,
      queue: new JobQueue(stores.first),
      runner: (id, options, q) => {
        const r = testRunner(q ?? new JobQueue(stores.first), id, options);
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

function waitForAbort(signal: AbortSignal): Promise<InterruptReason> {
  return new Promise((resolve) => {
    const done = () => resolve((signal.reason as JobInterrupted).reason);
    if (signal.aborted) done();
    else signal.addEventListener('abort', done, { once: true });
  });
}

test('a job whose runner stopped renewing is reclaimed after its lease expires; the late outcome is not recorded', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<null, never, string>('test.lease-expiry');
    const stuck = gate();
    let deadSignal: AbortSignal | undefined;
    const deadLog = recordingLog();
    // "dead": renews never (an instance that froze) and polls rarely; its handler ignores its signal.
    const dead = w.runner('dead', { leaseMs: 150, renewEveryMs: 3_600_000, pollMs: 60_000, log: deadLog }, w.queue).handle(kind, async (ctx) => {
      deadSignal = ctx.signal;
      await stuck.promise;
      return 'from the dead runner';
    });
    await dead.start();
    const { id } = await w.queue.enqueue(kind, null);
    await waitFor('the dead runner holds the job', () => deadSignal !== undefined);
    assert.equal((await w.queue.get(id))?.leaseOwner, 'dead');

    const alive = w.runner('alive', { leaseMs: 2_000 }, new JobQueue(w.store2)).handle(kind, async () => 'from the live runner');
    await alive.start();
    await waitFor('the live runner finished the job', async () => (await w.queue.get(id))?.status === 'succeeded');
    const job = await w.queue.get(id);
    assert.equal(job?.result, 'from the live runner');
    assert.equal(job?.attempts, 2, 'the expired claim counted as an attempt');
    assert.equal(job?.lastError, "lease expired: instance dead stopped renewing it");

    stuck.open();
    await waitFor('the dead runner gave up', () => dead.active === 0);
    const after = await w.queue.get(id);
    assert.equal(after?.result, 'from the live runner', 'the late completion did not overwrite');
    assert.equal(after?.status, 'succeeded');
    assert.ok(deadLog.lines.some((l) => l.msg.includes('its outcome is not recorded')));
  });
});

test('a lease expired on the last attempt fails the job', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<null>('test.lease-exhausted', { maxAttempts: 1 });
    const stuck = gate();
    let started = false;
    const dead = w.runner('dead', { leaseMs: 100, renewEveryMs: 3_600_000, pollMs: 60_000 }, w.queue).handle(kind, async () => {
      started = true;
      await stuck.promise;
    });
    await dead.start();
    const { id } = await w.queue.enqueue(kind, null);
    await waitFor('claimed', () => started);
    const other = w.runner('other', {}, new JobQueue(w.store2)).handle(kind, async () => assert.fail('must not run again'));
    await other.start();
    await waitFor('failed', async () => (await w.queue.get(id))?.status === 'failed');
    assert.equal((await w.queue.get(id))?.lastError, 'lease expired: instance dead stopped renewing it');
    stuck.open();
  });
});

test('a refused renewal aborts the handler and nothing more is written', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<null>('test.lease-stolen');
    let reason: InterruptReason | undefined;
    const runner = w.runner('a', { leaseMs: 2_000, renewEveryMs: 10 }).handle(kind, async (ctx) => {
      reason = await waitForAbort(ctx.signal);
      ctx.signal.throwIfAborted();
    });
    await runner.start();
    const { id } = await w.queue.enqueue(kind, null);
    await waitFor('running', async () => (await w.queue.get(id))?.leaseOwner === 'a');
    // As if another instance held it now (its lease having expired and been reclaimed).
    await w.store2.db.updateTable('jobs').set({ lease_owner: 'thief', attempts: 2 }).where('id', '=', id).execute();
    await waitFor('the handler was aborted', () => reason !== undefined);
    assert.equal(reason, 'lease-lost');
    await waitFor('the handler returned', () => runner.active === 0);
    const job = await w.queue.get(id);
    assert.equal(job?.status, 'running');
    assert.equal(job?.leaseOwner, 'thief');
    assert.equal(job?.lastError, null);
  });
});

test('at start, the jobs the previous process of this instance left running are requeued and complete', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<null, never, string>('test.restart');
    const far = Date.now() + 3_600_000;
    const mine = await w.queue.enqueue(kind, null);
    const theirs = await w.queue.enqueue(kind, null);
    // As a crash leaves them: running, leases far from expiry.
    await w.store.db.updateTable('jobs').set({ status: 'running', lease_owner: 'me', lease_until: far, attempts: 1 }).where('id', '=', mine.id).execute();
    await w.store.db.updateTable('jobs').set({ status: 'running', lease_owner: 'someone-else', lease_until: far, attempts: 1 }).where('id', '=', theirs.id).execute();
    const log = recordingLog();
    const runner = w.runner('me', { log }).handle(kind, async (ctx) => `attempt ${ctx.attempt}`);
    await runner.start();
    await waitFor('completed', async () => (await w.queue.get(mine.id))?.status === 'succeeded');
    const job = await w.queue.get(mine.id);
    assert.equal(job?.result, 'attempt 2');
    assert.equal(job?.lastError, 'the previous process of instance me stopped while running it');
    assert.equal((await w.queue.get(theirs.id))?.status, 'running', "another instance's live lease is left alone");
    assert.ok(log.lines.some((l) => l.msg === 'requeued the jobs the previous process of this instance was running' && l.obj.jobs === 1));
  });
});

/** Processes lines 0..9, checkpointing after each; attempt 1 freezes after line 4 (a crash). */
function lineProcessor(processed: number[], frozen: Promise<void>) {
  return async (ctx: JobContext<{ lines: number }, { next: number }>) => {
    for (let line = ctx.progress?.next ?? 0; line < ctx.payload.lines; line++) {
      ctx.signal.throwIfAborted();
      processed.push(line);
      await ctx.checkpoint({ next: line + 1 });
      if (ctx.attempt === 1 && line === 4) await frozen;
    }
    return processed.length;
  };
}

test('after a crash, the restarted instance resumes a checkpointing job where it stopped', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<{ lines: number }, { next: number }, number>('test.checkpoint');
    const processed: number[] = [];
    const frozen = gate();
    const crashed = w.runner('inst', {}, w.queue).handle(kind, lineProcessor(processed, frozen.promise));
    await crashed.start();
    const { id } = await w.queue.enqueue(kind, { lines: 10 });
    // The fifth line is pushed before its checkpoint is written: wait for both.
    await waitFor('five lines done', async () => processed.length === 5 && ((await w.queue.get(id))?.progress as { next?: number } | undefined)?.next === 5);
    assert.deepEqual((await w.queue.get(id))?.progress, { next: 5 });
    // The handler ignores the shutdown signal, as a frozen process would: its lease is kept.
    await crashed.stop(20);
    assert.equal((await w.queue.get(id))?.status, 'running');

    const restarted = w.runner('inst', {}, new JobQueue(w.store2)).handle(kind, lineProcessor(processed, frozen.promise));
    await restarted.start();
    await waitFor('done', async () => (await w.queue.get(id))?.status === 'succeeded');
    assert.deepEqual(processed, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'each line once, resumed at 5');
    assert.equal((await w.queue.get(id))?.attempts, 2);

    // The frozen attempt wakes up, stops (its signal was aborted at shutdown), and what it leaves is not recorded.
    frozen.open();
    await waitFor('the old handler stopped', () => crashed.active === 0);
    assert.deepEqual(processed, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual((await w.queue.get(id))?.progress, { next: 10 });
  });
});

test('shutdown hands a stopped job back at once, without counting the attempt, and the next runner resumes it', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<null, { done: number }, number>('test.shutdown');
    let reason: InterruptReason | undefined;
    const first = w.runner('one', {}, w.queue).handle(kind, async (ctx) => {
      await ctx.checkpoint({ done: 3 });
      reason = await waitForAbort(ctx.signal);
      ctx.signal.throwIfAborted();
      return 0;
    });
    await first.start();
    const { id } = await w.queue.enqueue(kind, null);
    await waitFor('checkpointed', async () => (await w.queue.get(id))?.progress !== null);
    await first.stop();
    assert.equal(reason, 'shutdown');
    const released = await w.queue.get(id);
    assert.equal(released?.status, 'queued');
    assert.equal(released?.attempts, 0);
    assert.equal(released?.leaseOwner, null);

    const second = w.runner('two', {}, new JobQueue(w.store2)).handle(kind, async (ctx) => (ctx.progress?.done ?? 0) + 1);
    await second.start();
    await waitFor('done', async () => (await w.queue.get(id))?.status === 'succeeded');
    const job = await w.queue.get(id);
    assert.equal(job?.result, 4);
    assert.equal(job?.attempts, 1);
  });
});
