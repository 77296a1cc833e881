// The periodic job runner: runs on its interval, never two runs at once, a failing run
// is logged and the next tick runs again, stop() waits for a run in progress.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { startSweeper } from './expiry-sweep.ts';

const quietLog = () => {
  const errors: unknown[] = [];
  return { errors, log: { error: (obj: unknown) => void errors.push(obj) } };
};

test('runs repeatedly and never overlaps a slow run', async () => {
  let active = 0;
  let maxActive = 0;
  let runs = 0;
  const { log, errors } = quietLog();
  const sweeper = startSweeper({
    intervalMs: 5,
    log,
    run: async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(30);
      active--;
      runs++;
    },
  });
  // Runs take 6 intervals each: many ticks land while one is in progress.
  const deadline = Date.now() + 5000;
  while (runs < 3 && Date.now() < deadline) await sleep(5);
  await sweeper.stop();
  assert.ok(runs >= 3, `runs: ${runs}`);
  assert.equal(maxActive, 1);
  assert.equal(active, 0, 'stop() waited for the run in progress');
  const after = runs;
  await sleep(30);
  assert.equal(runs, after, 'no run after stop()');
  assert.deepEqual(errors, []);
});

test('a failing run is logged and the next tick runs again', async () => {
  let calls = 0;
  const { log, errors } = quietLog();
  const sweeper = startSweeper({
    intervalMs: 5,
    log,
    run: async () => {
      calls++;
      if (calls === 1) throw new Error('database away');
      return 3;
    },
  });
  const deadline = Date.now() + 5000;
  while (calls < 2 && Date.now() < deadline) await sleep(5);
  await sweeper.stop();
  assert.ok(calls >= 2, `calls: ${calls}`);
  assert.equal(errors.length, 1);
  assert.match(String((errors[0] as { err: Error }).err), /database away/);
});

test('runNow runs at once, joins a run in progress, and the timer does not hold the process', async () => {
  let calls = 0;
  let release!: () => void;
  const sweeper = startSweeper({
    intervalMs: 60_000,
    log: quietLog().log,
    run: () => {
      calls++;
      return new Promise<void>((r) => (release = r));
    },
  });
  const first = sweeper.runNow();
  const second = sweeper.runNow();
  assert.equal(calls, 1);
  release();
  await Promise.all([first, second]);
  await sweeper.stop();
  // An unref'd 60 s interval would otherwise keep this test file alive for a minute.
});
