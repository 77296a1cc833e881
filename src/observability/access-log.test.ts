// The access line (info, one per request: request id, method, route pattern, status,
// latency, key id, credits, error code; never a key, body, query or secret), the
// upstream failure warning, and LOG_LEVEL=warn turning the access line off.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import { CapturedLog, startChatUpstream, upstreamEnv, UPSTREAM_KEY, type ChatUpstream } from './observability.test-support.ts';

const QUESTION = 'What is the capital of France, Zanzibar-question?';

let upstream: ChatUpstream;
before(async () => {
  upstream = await startChatUpstream();
});
after(async () => {
  await upstream.close();
});

async function chat(server: TestServer, key: string, content: string): Promise<Response> {
  return server.fetch('/v1/chat/completions', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content }] }),
  });
}

describe('LOG_LEVEL=info', () => {
  const log = new CapturedLog();
  let server: TestServer;
  let key: { id: string; key: string };
  before(async () => {
    server = await startTestServer({ ...upstreamEnv(upstream), LOG_LEVEL: 'info' }, { logStream: log });
    key = await server.createKey();
  });
  after(() => server.close());

  test('a chat request: one info line with the route, status, latency, key id and credits', async () => {
    const res = await chat(server, key.key, QUESTION);
    assert.equal(res.status, 200);
    const requestId = res.headers.get('x-request-id');
    const line = await log.find((r) => r.msg === 'request' && r.request_id === requestId);
    assert.equal(line.level, 30, 'info');
    assert.equal(line.method, 'POST');
    assert.equal(line.route, '/v1/chat/completions');
    assert.equal(line.status, 200);
    assert.equal(typeof line.latency_ms, 'number');
    assert.equal(line.key_id, key.id);
    // 11 input and 7 output tokens at 1 and 2 USD per million, 100 credits per USD.
    assert.equal(line.credits, 0.0025);
    assert.equal(line.error_code, undefined);
    assert.equal(log.records.filter((r) => r.msg === 'request' && r.request_id === requestId).length, 1, 'one line per request');
  });

  test('the route is the pattern: no ids, no query string', async () => {
    const res = await server.fetch('/v1/chat/completions/chatcmpl-Zq81idvalue?api_key=hunter2&after=x', { key: key.key });
    assert.equal(res.status, 404);
    const line = await log.find((r) => r.msg === 'request' && r.request_id === res.headers.get('x-request-id'));
    assert.equal(line.route, '/v1/chat/completions/{completion_id}');
    assert.equal(line.status, 404);
    assert.equal(line.error_code, 'model_not_found');

    const unknown = await server.fetch('/no/such/place/Zq82idvalue?token=hunter3');
    const other = await log.find((r) => r.msg === 'request' && r.request_id === unknown.headers.get('x-request-id'));
    assert.equal(other.route, 'unmatched');
    assert.equal(other.key_id, undefined);

    const admin = await server.admin('GET', `/keys/${key.id}`);
    assert.equal(admin.status, 200);
    const adminLine = await log.find((r) => r.msg === 'request' && r.route === '/admin/v1/keys/{id}');
    assert.equal(adminLine.status, 200);
  });

  test('a failed upstream call: a warning naming the kind, status, host, model and request id', async () => {
    const res = await chat(server, key.key, 'please FAIL now');
    assert.equal(res.status, 502);
    const requestId = res.headers.get('x-request-id');
    const warn = await log.find((r) => r.msg === 'upstream call failed' && r.request_id === requestId);
    assert.equal(warn.level, 40, 'warn');
    assert.equal(warn.kind, 'status');
    assert.equal(warn.status, 500);
    assert.equal(warn.upstream, new URL(upstream.baseUrl).host);
    assert.equal(warn.model, 'upstream-small');
    assert.equal(warn.operation, 'chat');
    const line = await log.find((r) => r.msg === 'request' && r.request_id === requestId);
    assert.equal(line.status, 502);
    assert.equal(line.error_code, 'upstream_error');
    assert.equal(line.credits, 0, 'a call that failed before its first event is not charged');
  });

  test('nothing secret is ever logged: keys, tokens, bodies, query strings, ids from the URL', () => {
    for (const secret of [key.key, UPSTREAM_KEY, ADMIN_TOKEN, 'Zanzibar', 'hunter2', 'hunter3', 'Zq81idvalue', 'Zq82idvalue', 'upstream exploded', 'Paris']) {
      assert.equal(log.text.includes(secret), false, `the log contains ${secret}`);
    }
  });
});

describe('LOG_LEVEL=warn', () => {
  const log = new CapturedLog();
  let server: TestServer;
  let key: { id: string; key: string };
  before(async () => {
    server = await startTestServer({ ...upstreamEnv(upstream), LOG_LEVEL: 'warn' }, { logStream: log });
    key = await server.createKey();
  });
  after(() => server.close());

  test('no access line, the upstream warning still', async () => {
    const ok = await chat(server, key.key, QUESTION);
    assert.equal(ok.status, 200);
    const failed = await chat(server, key.key, 'FAIL again');
    assert.equal(failed.status, 502);
    await log.find((r) => r.msg === 'upstream call failed' && r.request_id === failed.headers.get('x-request-id'));
    // The finish step logs before it adds the activity row: once the rows are there, any line would be too.
    for (const res of [ok, failed]) {
      const rows = await server.admin('GET', `/activity?request_id=${res.headers.get('x-request-id')}`);
      assert.equal(rows.body.data.length, 1);
    }
    assert.equal(log.records.filter((r) => r.msg === 'request').length, 0);
  });
});
