// GET /metrics: Prometheus text with the request, token, credit, upstream, stream and
// activity-queue figures moving as requests run; the optional bearer token.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import { sample, startChatUpstream, upstreamEnv, USAGE, type ChatUpstream } from './observability.test-support.ts';

const TOKEN = 'metrics-token-0123456789';

let upstream: ChatUpstream;
let server: TestServer;
let key: { id: string; key: string };
before(async () => {
  upstream = await startChatUpstream();
  // Activity rows stay queued (no timed flush) so the queue depth can be seen.
  server = await startTestServer({ ...upstreamEnv(upstream), AGENT_API_METRICS_TOKEN: TOKEN, AGENT_API_ACTIVITY_FLUSH_MS: '600000' });
  key = await server.createKey();
});
after(async () => {
  await server.close();
  await upstream.close();
});

async function scrape(): Promise<string> {
  const res = await server.fetch('/metrics', { key: TOKEN });
  assert.equal(res.status, 200);
  return res.text();
}

/** Scrapes until `ready` holds (the finish step records after the response went out). */
async function scrapeUntil(ready: (text: string) => boolean): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const text = await scrape();
    if (ready(text)) return text;
    await delay(5);
  }
  throw new Error('the metrics never got there');
}

describe('GET /metrics', () => {
  test('needs the bearer token when AGENT_API_METRICS_TOKEN is set (401 in the error shape otherwise)', async () => {
    for (const token of [undefined, 'wrong', `${TOKEN}x`, key.key]) {
      const res = await server.fetch('/metrics', token ? { key: token } : {});
      assert.equal(res.status, 401);
      const body = (await res.json()) as { error: { code: string; type: string } };
      assert.equal(body.error.code, 'invalid_api_key');
    }
    const res = await server.fetch('/metrics', { key: TOKEN });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.ok(sample(text, 'process_cpu_user_seconds_total') !== undefined, 'process metrics');
    assert.equal(sample(text, 'sse_streams_open'), 0);
  });

  test('a streamed chat through the openai SDK: open streams up and back to 0; requests, tokens, credits, upstream', async () => {
    const release = upstream.hold();
    const stream = await server.openai(key.key).chat.completions.create({
      model: 'agent',
      messages: [{ role: 'user', content: 'Capital of France?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = stream[Symbol.asyncIterator]();
    assert.equal((await chunks.next()).done, false);
    assert.equal(sample(await scrape(), 'sse_streams_open'), 1, 'the stream is open');
    release();
    let usage: unknown;
    for (let c = await chunks.next(); !c.done; c = await chunks.next()) usage = c.value.usage ?? usage;
    assert.ok(usage, 'the stream finished with its usage chunk');

    const text = await scrapeUntil((t) => sample(t, 'http_requests_total', { route: '/v1/chat/completions', status: '200' }) === 1);
    assert.equal(sample(text, 'sse_streams_open'), 0, 'and closed again');
    assert.equal(sample(text, 'http_request_duration_seconds_count', { route: '/v1/chat/completions', method: 'POST' }), 1);
    assert.equal(sample(text, 'model_tokens_total', { model: 'agent', type: 'input' }), USAGE.prompt_tokens);
    assert.equal(sample(text, 'model_tokens_total', { model: 'agent', type: 'output' }), USAGE.completion_tokens);
    // 11 input and 7 output tokens at 1 and 2 USD per million, 100 credits per USD.
    assert.equal(sample(text, 'credits_settled_total'), 0.0025);
    assert.ok((sample(text, 'credits_reserved_total') ?? 0) > 0.0025, 'the reservation covers the output cap');
    assert.equal(sample(text, 'upstream_requests_total', { model: 'upstream-small', operation: 'chat', outcome: 'ok' }), 1);
    assert.equal(sample(text, 'upstream_first_byte_seconds_count', { model: 'upstream-small', operation: 'chat' }), 1);
    assert.equal(sample(text, 'upstream_request_duration_seconds_count', { outcome: 'ok' }), 1);
    assert.equal(sample(text, 'activity_log_queue_depth'), 1, 'the row waits for its batch');
    assert.ok(sample(text, 'http_requests_total', { route: '/metrics', method: 'GET', status: '401' })! >= 1);
  });

  test('upstream failures by kind and status; the activity queue drains on a flush', async () => {
    const failed = await server.fetch('/v1/chat/completions', {
      method: 'POST',
      key: key.key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'FAIL' }] }),
    });
    assert.equal(failed.status, 502);
    let text = await scrapeUntil((t) => sample(t, 'http_requests_total', { route: '/v1/chat/completions', status: '502' }) === 1);
    assert.equal(sample(text, 'upstream_errors_total', { kind: 'status', status: '500' }), 1);
    assert.equal(sample(text, 'upstream_requests_total', { outcome: 'error' }), 1);
    assert.equal(sample(text, 'activity_log_queue_depth'), 2);
    await server.app.services.activity.flush();
    text = await scrape();
    assert.equal(sample(text, 'activity_log_queue_depth'), 0);
  });

  test('labels are route patterns: ids and unknown paths do not make new series', async () => {
    for (const id of ['chatcmpl-a1', 'chatcmpl-b2', 'chatcmpl-c3']) await server.fetch(`/v1/chat/completions/${id}?x=${id}`, { key: key.key });
    for (const path of ['/nope/1', '/nope/2']) await server.fetch(path);
    const text = await scrapeUntil((t) => sample(t, 'http_requests_total', { route: 'unmatched' }) === 2);
    assert.equal(sample(text, 'http_requests_total', { route: '/v1/chat/completions/{completion_id}', method: 'GET', status: '404' }), 3);
    assert.equal(/chatcmpl-|nope/.test(text), false);
  });

  test('every series carries the instance id, so several instances stay apart', async () => {
    const text = await scrape();
    const instance = server.config.instanceId;
    assert.ok(sample(text, 'http_requests_total', { instance }) !== undefined, 'a request series with the instance label');
    assert.ok(sample(text, 'process_cpu_user_seconds_total', { instance }) !== undefined, 'a default series with it');
    assert.ok(!text.split('\n').some((l) => l.startsWith('http_requests_total{') && !l.includes(`instance="${instance}"`)));
  });

  test('is not part of the published contract', async () => {
    const doc = await (await server.fetch('/v1/openapi.json')).text();
    assert.equal(doc.includes('/metrics'), false);
  });
});

test('without AGENT_API_METRICS_TOKEN, /metrics is open', async () => {
  const open = await startTestServer();
  try {
    const res = await open.fetch('/metrics');
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^# TYPE http_requests_total counter$/m);
  } finally {
    await open.close();
  }
});
