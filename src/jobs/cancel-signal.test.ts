// A cancel recorded through one instance's queue stops a job running on another at once,
// over Redis signals (TEST_REDIS_URL), not at the runner's next lease renewal: the lease
// here is a minute long, so renewals come every 20 s and only the signal can explain a
// stop within the few seconds waited. With Redis unreachable the cancel still lands, at
// the renewal (today's path).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { scratchDatabase } from '../../test/helpers/test-server.ts';
import { RedisSignals, type Signals } from '../cluster/signals.ts';
import { JobQueue } from './job-queue.ts';
import type { JobRunner } from './job-runner.ts';
import { recordingLog, testRunner, twoStores, waitFor } from './jobs.test-support.ts';
import { JobInterrupted, jobKind, type InterruptReason } from './types.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const noRedis = redisUrl ? false : 'TEST_REDIS_URL is not set (run with npm test, which starts a redis-server)';

async function twoInstances(fn: (w: { queueA: JobQueue; queueB: JobQueue; runner(queue: JobQueue, id: string, renewEveryMs?: number): JobRunner }) => Promise<void>, signalsFor: () => Signals) {
  const scratch = await scratchDatabase();
  const stores = await twoStores(scratch.url);
  const signals = [signalsFor(), signalsFor()];
  const runners: JobRunner[] = [];
  try {
    await Promise.all(signals.map((s) => s.ready()));
    await fn({
      queueA: new JobQueue(stores.first, signals[0]),
      queueB: new JobQueue(stores.second, signals[1]),
      runner: (queue, id, renewEveryMs) => {
        const r = testRunner(queue, id, { leaseMs: 60_000, ...(renewEveryMs ? { renewEveryMs } : {}) });
        runners.push(r);
        return r;
      },
    });
  } finally {
    await Promise.all(runners.map((r) => r.stop(500)));
    await Promise.all(signals.map((s) => s.close()));
    await stores.close();
    await scratch.cleanup();
  }
}

test('a cancel through instance B stops the job running on instance A at once, not at its lease renewal', { skip: noRedis }, async () => {
  const prefix = `test:${randomUUID()}:`;
  await twoInstances(
    async ({ queueA, queueB, runner }) => {
      const kind = jobKind<null, never, null>('test.cancel-signal');
      let reason: InterruptReason | undefined;
      let started = false;
      const a = runner(queueA, 'instance-a').handle(kind, async (ctx) => {
        started = true;
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        reason = (ctx.signal.reason as JobInterrupted).reason;
        ctx.signal.throwIfAborted();
        return null;
      });
      await a.start();
      const { id } = await queueA.enqueue(kind, null);
      await waitFor('A runs the job', () => started);
      assert.equal((await queueB.get(id))?.leaseOwner, 'instance-a');

      const asked = await queueB.cancel(id);
      assert.equal(asked?.status, 'running');
      assert.equal(asked?.cancelRequested, true);
      // At most 5 s; A's next renewal is 20 s away.
      await waitFor('A stopped the job', () => reason !== undefined, 500);
      assert.equal(reason, 'cancelled');
      await waitFor('the job ended cancelled', async () => (await queueB.get(id))?.status === 'cancelled', 500);
    },
    () => new RedisSignals({ url: redisUrl!, log: recordingLog(), prefix }),
  );
});

test('Redis unreachable: the cancel still lands, at the running instance\'s lease renewal', async () => {
  await twoInstances(
    async ({ queueA, queueB, runner }) => {
      const kind = jobKind<null, never, null>('test.cancel-no-redis');
      let started = false;
      // Renewals every 100 ms here: the fallback path, as it is without signals.
      const a = runner(queueA, 'instance-a', 100).handle(kind, async (ctx) => {
        started = true;
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        ctx.signal.throwIfAborted();
        return null;
      });
      await a.start();
      const { id } = await queueA.enqueue(kind, null);
      await waitFor('A runs the job', () => started);
      assert.equal((await queueB.cancel(id))?.status, 'running');
      await waitFor('the job ended cancelled', async () => (await queueB.get(id))?.status === 'cancelled');
    },
    () => new RedisSignals({ url: 'redis://127.0.0.1:1', log: recordingLog(), prefix: `test:${randomUUID()}:` }),
  );
});
