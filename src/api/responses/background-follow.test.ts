// Following a background response while it runs (GET /responses/{id}?stream=true): its
// events arrive as the model writes them, not when it has finished (the upstream here
// streams until the test lets it end, so the response is provably still running); a
// client that drops and comes back with `starting_after` gets the rest, with no event
// twice and none missing; once it has ended, a replay gives the very same events.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as pause } from 'node:timers/promises';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { gatedUpstream, SseReader, type Ev, type GatedUpstream } from './follow.test-support.ts';

let upstream: GatedUpstream;
let server: TestServer;

before(async () => {
  upstream = await gatedUpstream();
  server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20', UPSTREAM_BASE_URL: upstream.baseUrl, UPSTREAM_MODEL_AGENT: 'up', UPSTREAM_MAX_RETRIES: '0' });
});
after(async () => {
  await server.close();
  await upstream.close();
});

/** At most `ms` for `p`; a follower that only answers at the end never would. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, pause(ms).then(() => assert.fail(`${what}: nothing within ${ms} ms while the response runs`))]);
}

test('a running background response is followed live, resumed after a drop without duplicates or gaps, and replayed the same once ended', async () => {
  const { key } = await server.createKey();
  const client = server.openai(key);
  const { id } = await client.responses.create({ model: 'agent', input: 'write at length', background: true, max_output_tokens: 8000 });
  const follow = async (after?: number) =>
    new SseReader(await server.fetch(`/v1/responses/${id}?stream=true${after === undefined ? '' : `&starting_after=${after}`}`, { key }));

  const first = await within(follow(), 15_000, 'the stream opening');
  const seen = await within(first.until((e) => e.type === 'response.output_text.delta'), 15_000, 'a text delta');
  assert.deepEqual(seen.slice(0, 2).map((e) => e.type), ['response.created', 'response.in_progress']);
  const firstDelta = seen.at(-1)!.sequence_number;
  seen.push(...(await within(first.until((e) => e.sequence_number >= firstDelta + 3), 15_000, 'more deltas')));
  await first.cancel();
  assert.equal((await client.responses.retrieve(id)).status, 'in_progress', 'still running: these came live');

  const last = seen.at(-1)!.sequence_number;
  const second = await within(follow(last), 15_000, 'the stream opening');
  const next = await within(second.next(), 15_000, 'the event after the last one seen');
  assert.equal(next?.sequence_number, last + 1);
  upstream.release();
  const rest = [next!, ...(await second.until(() => false))];
  const all: Ev[] = [...seen, ...rest];

  assert.deepEqual(all.map((e) => e.sequence_number), all.map((_, i) => i), 'numbered from 0, none twice, none missing');
  const final = all.at(-1)!;
  assert.equal(final.type, 'response.completed');
  assert.equal(final.response.status, 'completed');
  const text = all.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  assert.equal(final.response.output[0].content[0].text, text);
  assert.match(text, /^word0 word1 word2 /);

  // Ended: the same events again, from the start.
  const replay = await (await follow()).until(() => false);
  assert.deepEqual(replay, all);
  assert.deepEqual(await (await follow(final.sequence_number - 1)).until(() => false), [final]);
});
