// Two instances on one PostgreSQL database and one Redis (TEST_REDIS_URL), with leases
// and key caches of a minute, so that only a signal can explain what either sees at once:
// a background response running on A, cancelled through B, stops within a second (its
// upstream request is cut; A's lease renewal is 20 s away); a key paused, unpaused and
// revoked through B's admin API is refused or admitted by A on the very next request; a
// background response running on A is followed live through B, and resumed through A
// after a drop, with no event twice and none missing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as pause } from 'node:timers/promises';
import type OpenAI from 'openai';
import { gatedUpstream, SseReader, type Ev, type GatedUpstream } from '../api/responses/follow.test-support.ts';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const skip = !redisUrl
  ? 'TEST_REDIS_URL is not set (run with npm test, which starts a redis-server)'
  : process.env.TEST_DATABASE !== 'postgres'
    ? 'two instances share a database on PostgreSQL only'
    : false;

// Streams words until released (the last test releases it).
let upstream: GatedUpstream;
let a: TestServer;
let b: TestServer;

before(async () => {
  if (skip) return;
  upstream = await gatedUpstream();
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

test('a background response running on A is followed live through B, and resumed through A after a drop', { skip }, async (t) => {
  const { key } = await a.createKey();
  const { id } = await a.openai(key).responses.create({ model: 'agent', input: 'write at length', background: true, max_output_tokens: 8000 });
  const follow = async (server: TestServer, after?: number) =>
    new SseReader(await server.fetch(`/v1/responses/${id}?stream=true${after === undefined ? '' : `&starting_after=${after}`}`, { key }));
  const within = <T>(p: Promise<T>, what: string) => Promise.race([p, pause(15_000).then(() => assert.fail(`${what}: nothing within 15 s while the response runs`))]);

  const onB = await within(follow(b), 'the stream opening on B');
  const seen: Ev[] = [];
  // How long after the upstream sent a word B's follower had it.
  const lags: number[] = [];
  while (lags.length < 15) {
    const e = await within(onB.next(), 'an event on B');
    assert.ok(e, 'the stream went on');
    seen.push(e);
    const word = e.type === 'response.output_text.delta' ? String(e.delta).trim() : undefined;
    if (word && upstream.sentAt.has(word)) lags.push(performance.now() - upstream.sentAt.get(word)!);
  }
  await onB.cancel();
  const job = await a.app.services.store.db.selectFrom('jobs').select(['lease_owner', 'status']).where('kind', '=', 'responses.background').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
  assert.deepEqual(job, { lease_owner: 'instance-a', status: 'running' }, 'A runs it, still');
  lags.sort((x, y) => x - y);
  t.diagnostic(`an event reached B's follower ${lags[Math.floor(lags.length / 2)]!.toFixed(0)} ms (median; max ${lags.at(-1)!.toFixed(0)} ms) after the upstream sent it to A`);

  const last = seen.at(-1)!.sequence_number;
  const onA = await within(follow(a, last), 'the stream opening on A');
  const next = await within(onA.next(), 'the event after the last one seen');
  assert.equal(next?.sequence_number, last + 1);
  upstream.release();
  const all = [...seen, next!, ...(await onA.until(() => false))];
  assert.deepEqual(all.map((e) => e.sequence_number), all.map((_, i) => i), 'numbered from 0, none twice, none missing');
  const final = all.at(-1)!;
  assert.equal(final.type, 'response.completed');
  const text = all.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  assert.equal(final.response.output[0].content[0].text, text);
  // And B replays the very same events now that it has ended.
  assert.deepEqual(await (await follow(b)).until(() => false), all);
});
