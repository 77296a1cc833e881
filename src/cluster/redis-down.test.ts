// An instance whose REDIS_URL cannot be reached starts, serves and signals within itself
// as one without Redis does: a key revoked through its admin API is refused at once, a
// background response runs and is followed to its end; the outage is logged once, as a
// warning, and nothing crashes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as pause } from 'node:timers/promises';
import { CapturedLog } from '../observability/observability.test-support.ts';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import { SseReader } from '../api/responses/follow.test-support.ts';

const log = new CapturedLog();
let server: TestServer;

before(async () => {
  // Nothing listens on port 1. Limits fail open here (their default, closed, refuses with 503:
  // src/limits/redis-down.test.ts): this test is about the signals' fallback.
  server = await startTestServer({ REDIS_URL: 'redis://127.0.0.1:1', AGENT_API_LIMITS_ON_REDIS_FAILURE: 'open', AGENT_API_KEY_CACHE_MS: '60000', AGENT_API_JOBS_POLL_MS: '20', LOG_LEVEL: 'warn' }, { logStream: log });
});
after(() => server?.close());

test('Redis unreachable: the instance works as one without Redis, and says so once', async () => {
  assert.equal(server.app.services.signals.shared, false);
  const { id, key } = await server.createKey();
  assert.equal((await server.fetch('/v1/models', { key })).status, 200);

  const client = server.openai(key);
  const r = await client.responses.create({ model: 'agent', input: 'What is 2 + 3?', background: true });
  const events = await new SseReader(await server.fetch(`/v1/responses/${r.id}?stream=true`, { key })).until(() => false);
  assert.equal(events.at(-1)?.type, 'response.completed');
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));

  assert.equal((await server.admin('DELETE', `/keys/${id}`)).status, 200);
  assert.equal((await server.fetch('/v1/models', { key })).status, 401, 'refused at once: this instance dropped it from its cache');

  await pause(300); // reconnect attempts meanwhile
  const warnings = log.records.filter((l) => l.level === 40 && String(l.msg).startsWith('Redis signals are unavailable'));
  assert.equal(warnings.length, 1, log.text);
});
