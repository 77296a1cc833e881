// The cached probe behind /readyz: one check at a time, reused for its period, on a
// clock the test moves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CachedProbe } from './cached-probe.ts';

function controlled() {
  let calls = 0;
  let finish: ((err?: Error) => void) | undefined;
  const check = () => {
    calls++;
    return new Promise<void>((resolve, reject) => (finish = (err) => (err ? reject(err) : resolve())));
  };
  return { check, calls: () => calls, finish: (err?: Error) => finish!(err) };
}

test('callers during a check share it; the result is reused until the period is over', async () => {
  let now = 1_000;
  const c = controlled();
  const probe = new CachedProbe(c.check, 10_000, () => now);
  const waiting = [probe.get(), probe.get(), probe.get()];
  assert.equal(c.calls(), 1);
  c.finish();
  for (const r of await Promise.all(waiting)) assert.deepEqual(r, { ok: true, checkedAt: 1_000 });

  now += 9_999;
  assert.deepEqual(await probe.get(), { ok: true, checkedAt: 1_000 });
  assert.equal(c.calls(), 1, 'still fresh');

  now += 1;
  const next = probe.get();
  assert.equal(c.calls(), 2, 'the period is over: a new check');
  c.finish(new Error('answered 503'));
  assert.deepEqual(await next, { ok: false, checkedAt: 11_000, error: 'answered 503' });
  assert.deepEqual(await probe.get(), { ok: false, checkedAt: 11_000, error: 'answered 503' });
  assert.equal(c.calls(), 2);
});

test('the period counts from the start of a check, so a slow check does not stretch it', async () => {
  let now = 0;
  const c = controlled();
  const probe = new CachedProbe(c.check, 10_000, () => now);
  const first = probe.get();
  now = 4_000; // the check took 4 s
  c.finish();
  await first;
  now = 10_000;
  void probe.get();
  assert.equal(c.calls(), 2);
});
