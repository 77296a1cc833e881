// Signals: in this process, and between two instances over Redis (TEST_REDIS_URL, which
// `npm test` sets): delivered once to every instance, the publisher's own at once;
// messages that are not ours ignored; Redis unreachable: publishing neither throws nor
// waits, and it is logged once; a reconnect runs the resync handlers.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LocalSignals, RedisSignals, type Signals, type SignalsLog, type Topic } from './signals.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const noRedis = redisUrl ? false : 'TEST_REDIS_URL is not set (run with npm test, which starts a redis-server)';

function recordingLog(): SignalsLog & { lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = [];
  return { lines, info: (_o, msg) => void lines.push({ level: 'info', msg }), warn: (_o, msg) => void lines.push({ level: 'warn', msg }) };
}

function collect(signals: Signals, topic: Topic): string[] {
  const got: string[] = [];
  signals.subscribe(topic, (id) => got.push(id));
  return got;
}

async function waitFor(what: string, check: () => boolean, attempts = 500): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for: ${what}`);
}

test('in process: delivered at once to every handler of the topic; a failing handler stops no other; unsubscribe', () => {
  const log = recordingLog();
  const signals = new LocalSignals(log);
  const cancels = collect(signals, 'job.cancel');
  const keys = collect(signals, 'key.changed');
  signals.subscribe('job.cancel', () => {
    throw new Error('boom');
  });
  const late: string[] = [];
  const stop = signals.subscribe('job.cancel', (id) => late.push(id));
  signals.publish('job.cancel', 'job_1');
  assert.deepEqual(cancels, ['job_1'], 'synchronously');
  assert.deepEqual(late, ['job_1']);
  assert.deepEqual(keys, []);
  assert.equal(log.lines.filter((l) => l.level === 'warn').length, 1);
  stop();
  signals.publish('job.cancel', 'job_2');
  assert.deepEqual(late, ['job_1']);
  assert.deepEqual(cancels, ['job_1', 'job_2']);
  assert.equal(signals.shared, false);
  // Not an id: not delivered, said in the log, never thrown.
  void signals.publish('key.changed', 'not an id\n');
  assert.deepEqual(keys, []);
  assert.equal(log.lines.at(-1)?.msg, 'a signal with a malformed id was not sent');
});

test('over Redis: every instance gets each signal once; the publisher its own at once, not again from Redis', { skip: noRedis }, async () => {
  const prefix = `test:${randomUUID()}:`;
  const a = new RedisSignals({ url: redisUrl!, log: recordingLog(), prefix });
  const b = new RedisSignals({ url: redisUrl!, log: recordingLog(), prefix });
  // Another deployment on the same Redis (another prefix) hears nothing of ours.
  const other = new RedisSignals({ url: redisUrl!, log: recordingLog(), prefix: `test:${randomUUID()}:` });
  try {
    await waitFor('subscribed', () => a.shared && b.shared && other.shared);
    const onA = collect(a, 'job.cancel');
    const onB = collect(b, 'job.cancel');
    const keysOnB = collect(b, 'key.changed');
    const onOther = collect(other, 'job.cancel');
    a.publish('job.cancel', 'job_x');
    assert.deepEqual(onA, ['job_x'], 'at once, before Redis carried it');
    await waitFor('B got it', () => onB.length > 0);
    b.publish('key.changed', 'key_y');
    await waitFor('B got its own key signal', () => keysOnB.length > 0);
    // A round trip through Redis after A's publish: had A's echo come back, it would be here by now.
    const probe = collect(a, 'key.changed');
    b.publish('key.changed', 'key_probe');
    await waitFor('A got the probe', () => probe.includes('key_probe'));
    assert.deepEqual(onA, ['job_x']);
    assert.deepEqual(onB, ['job_x']);
    assert.deepEqual(keysOnB, ['key_y', 'key_probe']);
    assert.deepEqual(onOther, []);
  } finally {
    await Promise.all([a.close(), b.close(), other.close()]);
  }
});

test('over Redis: messages that are not ours are ignored, and nothing breaks', { skip: noRedis }, async () => {
  const prefix = `test:${randomUUID()}:`;
  const log = recordingLog();
  const signals = new RedisSignals({ url: redisUrl!, log, prefix });
  const raw = new Redis(redisUrl!);
  try {
    await waitFor('subscribed', () => signals.shared);
    const got = collect(signals, 'job.cancel');
    const junk = [
      'not json',
      '"a string"',
      'null',
      '[]',
      JSON.stringify({ i: 42 }),
      JSON.stringify({ i: 'job 1; drop' }),
      JSON.stringify({ i: 'x'.repeat(201) }),
      JSON.stringify({ i: 'job_ok', pad: 'x'.repeat(600) }),
      '{"__proto__":{"polluted":true},"i":"__proto__"}',
    ];
    for (const m of junk) await raw.publish(`${prefix}job.cancel`, m);
    await raw.publish(`${prefix}unknown.topic`, JSON.stringify({ i: 'job_2' }));
    await raw.publish(`${prefix}job.cancel`, JSON.stringify({ i: 'job_good' }));
    await waitFor('the good one', () => got.includes('job_good'));
    // `__proto__` is a well-formed id: delivered as a string, nothing polluted.
    assert.deepEqual(got, ['__proto__', 'job_good']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  } finally {
    raw.disconnect();
    await signals.close();
  }
});

test('Redis unreachable: publishing neither throws nor waits, delivers here, and is logged once; close returns', async () => {
  const log = recordingLog();
  // Nothing listens on port 1.
  const signals = new RedisSignals({ url: 'redis://127.0.0.1:1', log, prefix: `test:${randomUUID()}:` });
  try {
    const got = collect(signals, 'key.changed');
    for (let i = 0; i < 5; i++) signals.publish('key.changed', `key_${i}`);
    assert.deepEqual(got, ['key_0', 'key_1', 'key_2', 'key_3', 'key_4']);
    await waitFor('the outage logged', () => log.lines.some((l) => l.level === 'warn'));
    await sleep(300); // several reconnect attempts
    signals.publish('key.changed', 'key_5');
    await sleep(50);
    assert.equal(log.lines.filter((l) => l.level === 'warn').length, 1, JSON.stringify(log.lines));
    assert.match(log.lines[0]!.msg, /lease renewal/);
    assert.equal(signals.shared, false);
  } finally {
    await signals.close();
  }
});

test('over Redis: a dropped subscriber connection comes back, resyncs, and hears signals again', { skip: noRedis }, async () => {
  const prefix = `test:${randomUUID()}:`;
  const name = `signals-test-${randomUUID().slice(0, 8)}`;
  const log = recordingLog();
  const a = new RedisSignals({ url: redisUrl!, log, prefix, name });
  const b = new RedisSignals({ url: redisUrl!, log: recordingLog(), prefix });
  const raw = new Redis(redisUrl!);
  try {
    await waitFor('subscribed', () => a.shared && b.shared);
    let resyncs = 0;
    a.onResync(() => resyncs++);
    const got = collect(a, 'key.changed');
    const list = (await raw.client('LIST')) as string;
    const id = list.split('\n').find((l) => l.includes(` name=${name}-sub `))?.match(/\bid=(\d+)/)?.[1];
    assert.ok(id, 'the subscriber connection is named');
    await raw.client('KILL', 'ID', id);
    await waitFor('resynced after the reconnect', () => resyncs > 0);
    b.publish('key.changed', 'key_after');
    await waitFor('heard after the reconnect', () => got.includes('key_after'));
    assert.equal(a.shared, true);
  } finally {
    raw.disconnect();
    await Promise.all([a.close(), b.close()]);
  }
});
