// Two instances on one PostgreSQL database and one Redis (TEST_REDIS_URL), with leases
// and key caches of a minute, so that only a signal can explain what either sees at once:
// a background response running on A, cancelled through B, stops within a second (its
// upstream request is cut; A's lease renewal is 20 s away); a key paused, unpaused and
// revoked through B's admin API is refused or admitted by A on the very next request.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as pause } from 'node:timers/promises';
import type OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const skip = !redisUrl
  ? 'TEST_REDIS_URL is not set (run with npm test, which starts a redis-server)'
  : process.env.TEST_DATABASE !== 'postgres'
    ? 'two instances share a database on PostgreSQL only'
    : false;

let upstream: FakeUpstream;
let a: TestServer;
let b: TestServer;

before(async () => {
  if (skip) return;
  upstream = await startFakeUpstream(async (_req, res) => {
    // A long stream: one word every 20 ms for a minute, unless the caller goes away.
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < 3000 && !res.destroyed; i++) {
      res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] })}\n\n`);
      await pause(20);
    }
    res.end();
  });
  const env = {
    REDIS_URL: redisUrl!,
    AGENT_API_JOB_LEASE_MS: '60000',
    AGENT_API_KEY_CACHE_MS: '60000',
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_MODEL_AGENT: 'up',
    UPSTREAM_MAX_RETRIES: '0',
  };
  a = await startTestServer({ ...env, AGENT_API_INSTANCE_ID: 'instance-a', AGENT_API_JOBS_POLL_MS: '20' });
  const db = a.config.database;
  // B looks for due jobs once a minute: the background response is A's.
  b = await startTestServer({
    ...env,
    DATABASE_URL: db.kind === 'postgres' ? db.url : '',
    AGENT_API_BLOB_DIR: a.config.blobDir,
    AGENT_API_INSTANCE_ID: 'instance-b',
    AGENT_API_JOBS_POLL_MS: '60000',
  });
});
after(async () => {
  await b?.close();
  await a?.close();
  await upstream?.close();
});

async function poll(client: OpenAI, id: string, until: (s: string) => boolean) {
  let r = await client.responses.retrieve(id);
  for (let i = 0; i < 1500 && !until(r.status!); i++) {
    await pause(20);
    r = await client.responses.retrieve(id);
  }
  return r;
}

test('a background response running on A, cancelled through B, stops within a second', { skip }, async (t) => {
  const { key } = await a.createKey();
  const onA = a.openai(key);
  const onB = b.openai(key);
  const queued = await onA.responses.create({ model: 'agent', input: 'write a long story', background: true, max_output_tokens: 8000 });
  await poll(onA, queued.id, (s) => s === 'in_progress');
  for (let i = 0; i < 500 && upstream.requests.length === 0; i++) await pause(10);
  const call = upstream.requests.at(-1)!;
  const job = await a.app.services.store.db.selectFrom('jobs').selectAll().where('kind', '=', 'responses.background').where('status', '=', 'running').executeTakeFirstOrThrow();
  assert.equal(job.lease_owner, 'instance-a', 'A runs it');

  const asked = performance.now();
  assert.equal((await onB.responses.cancel(queued.id)).status, 'cancelled');
  const stopped = await Promise.race([call.closed.then(() => performance.now() - asked), pause(5_000).then(() => undefined)]);
  assert.ok(stopped !== undefined, "A did not stop the response's model call (its lease renewal is 20 s away)");
  t.diagnostic(`the model call on A stopped ${stopped.toFixed(1)} ms after the cancel was asked through B`);
  assert.ok(stopped < 1_000, `stopped ${stopped.toFixed(0)} ms after the cancel was asked`);
  // A's runner recorded the job's end: cancelled, long before a renewal.
  for (let i = 0; i < 250 && (await a.app.services.jobs.get(job.id))?.status === 'running'; i++) await pause(20);
  assert.equal((await a.app.services.jobs.get(job.id))?.status, 'cancelled');
  assert.equal((await onA.responses.retrieve(queued.id)).status, 'cancelled');
});

test('a key paused, unpaused and revoked through B is refused or admitted by A on the very next request', { skip }, async () => {
  const { id, key } = await b.createKey();
  const onA = (path: string) => a.fetch(path, { key });
  assert.equal((await onA('/v1/models')).status, 200, 'A has the key cached now');

  assert.equal((await b.admin('PATCH', `/keys/${id}`, { paused: true })).status, 200);
  assert.equal((await onA('/v1/models')).status, 403);
  assert.equal((await b.admin('PATCH', `/keys/${id}`, { paused: false })).status, 200);
  assert.equal((await onA('/v1/models')).status, 200);
  assert.equal((await b.admin('DELETE', `/keys/${id}`)).status, 200);
  const refused = await onA('/v1/models');
  assert.equal(refused.status, 401);
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /revoked/);
});
