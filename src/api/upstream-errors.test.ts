// An upstream that echoes our request in its errors (some do, on a 400) must not put our
// upstream key, or any other configured secret, into what we pass on, log or store: the
// JSON error body, a stream's error event, a stored (background) response, the log lines.
// Our errors still say what failed: the upstream's status, its error type and code.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { startFakeUpstream, type FakeUpstream, type ReceivedRequest } from '../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { CapturedLog } from '../observability/observability.test-support.ts';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

// Characters that JSON, URL and form encodings each spell differently.
const KEY = 'sk-echo/Secret+Key=42"x';
const SECRET = 'agent-api-sealing-secret-0123456789';

/** Every spelling of a secret an echo may use. */
function spellings(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  return [secret, json, json.replaceAll('/', '\\/'), encodeURIComponent(secret), encodeURIComponent(secret).replaceAll('%20', '+'), secret.slice(0, 12)];
}

function assertClean(text: string, where: string): void {
  for (const secret of [KEY, ADMIN_TOKEN, SECRET]) {
    for (const form of spellings(secret)) assert.ok(!text.includes(form), `${where} holds a secret (${form}):\n${text.slice(0, 2000)}`);
  }
}

/** The echo a careless upstream puts in its error: our headers and body, in several encodings. */
function echo(req: ReceivedRequest): string {
  const auth = String(req.headers.authorization);
  return (
    `Invalid request ${JSON.stringify({ headers: req.headers, body: req.body })}` +
    ` (seen as ${encodeURIComponent(auth)}; escaped ${JSON.stringify(auth).replaceAll('/', '\\/')};` +
    ` admin ${ADMIN_TOKEN}; sealing ${SECRET}; control \u0007\u001b[31m; ${'padding '.repeat(100)})`
  );
}

const said = (req: ReceivedRequest) => JSON.stringify(req.body);

let upstream: FakeUpstream;
let server: TestServer;
const log = new CapturedLog();

before(async () => {
  upstream = await startFakeUpstream((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[]}');
      return;
    }
    if (said(req).includes('ECHO-JSON')) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: echo(req), type: 'invalid_request_error', param: null, code: 'context_length_exceeded' }, request: { headers: req.headers } }));
      return;
    }
    if (said(req).includes('ECHO-TEXT')) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`bad request, you sent: ${echo(req)}`);
      return;
    }
    if (said(req).includes('ECHO-STREAM')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = { id: 'chatcmpl-echo', object: 'chat.completion.chunk', created: 1, model: 'upstream-small' };
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Partial' }, finish_reason: null }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ ...base, error: { message: echo(req), type: 'BadRequestError', code: 'upstream_echo' }, choices: [] })}\n\ndata: [DONE]\n\n`);
      return;
    }
    res.writeHead(500);
    res.end();
  });
  server = await startTestServer(
    {
      UPSTREAM_BASE_URL: upstream.baseUrl,
      UPSTREAM_API_KEY: KEY,
      UPSTREAM_MODEL_AGENT: 'upstream-small',
      UPSTREAM_MAX_RETRIES: '0',
      AGENT_API_SECRET: SECRET,
      AGENT_API_JOBS_POLL_MS: '20',
      LOG_LEVEL: 'info',
    },
    { logStream: log },
  );
});
after(async () => {
  await server.close();
  await upstream.close();
});

async function post(key: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await server.fetch(path, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

/** A 502 in our words: the upstream's status, type and code; no secret, no echo. */
function assertOurError(text: string, where: string): string {
  assertClean(text, where);
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'upstream_error');
  assert.match(body.error.message, /\b400\b/, where);
  assert.match(body.error.message, /invalid_request_error/, where);
  assert.match(body.error.message, /context_length_exceeded/, where);
  assert.ok(!/[\u0000-\u001f\u007f]/.test(body.error.message), 'no control characters');
  assert.ok(body.error.message.length <= 400, `bounded: ${body.error.message.length} characters`);
  return body.error.message;
}

test('chat, text completions and embeddings: the JSON error names the status, type and code, and holds no secret', async () => {
  const { key } = await server.createKey({ permissions: { embeddings: true } });
  for (const stream of [false, true]) {
    const r = await post(key, '/v1/chat/completions', { model: 'agent', stream, messages: [{ role: 'user', content: 'ECHO-JSON' }] });
    assert.equal(r.status, 502);
    assertOurError(r.text, `chat (stream ${stream})`);
  }
  const c = await post(key, '/v1/completions', { model: 'agent', prompt: 'ECHO-JSON' });
  assert.equal(c.status, 502);
  assertOurError(c.text, 'completions');
  const e = await post(key, '/v1/embeddings', { model: 'text-embedding-3-small', input: 'ECHO-JSON' });
  assert.equal(e.status, 502);
  assertOurError(e.text, 'embeddings');
});

test('a body that is not JSON is never echoed: the status alone', async () => {
  const { key } = await server.createKey();
  const r = await post(key, '/v1/chat/completions', { model: 'agent', messages: [{ role: 'user', content: 'ECHO-TEXT' }] });
  assert.equal(r.status, 502);
  assertClean(r.text, 'chat');
  const message = (JSON.parse(r.text) as { error: { message: string } }).error.message;
  assert.match(message, /\b400\b/);
  assert.ok(!message.includes('you sent'), message);
});

test('an error mid-stream: the chat error chunk and the Responses error event and response.failed hold no secret', async () => {
  const { key } = await server.createKey();
  const chat = await post(key, '/v1/chat/completions', { model: 'agent', stream: true, messages: [{ role: 'user', content: 'ECHO-STREAM' }] });
  assert.equal(chat.status, 200);
  assertClean(chat.text, 'the chat stream');
  assert.match(chat.text, /"code":"upstream_error"/);
  assert.match(chat.text, /upstream_echo/, 'the upstream code is named');

  const responses = await post(key, '/v1/responses', { model: 'agent', stream: true, input: 'ECHO-STREAM' });
  assert.equal(responses.status, 200);
  assertClean(responses.text, 'the Responses stream');
  assert.match(responses.text, /event: error\n/);
  assert.match(responses.text, /event: response\.failed\n/);
  assert.match(responses.text, /BadRequestError: upstream_echo/);
});

test('a failed background response is stored in our words: GET /v1/responses/{id} holds no secret', async () => {
  const { key } = await server.createKey();
  const queued = await post(key, '/v1/responses', { model: 'agent', background: true, input: 'ECHO-JSON' });
  assert.equal(queued.status, 200, queued.text);
  const id = (JSON.parse(queued.text) as { id: string }).id;
  let text = '';
  for (let i = 0; i < 1500; i++) {
    text = await (await server.fetch(`/v1/responses/${id}`, { key })).text();
    if (/"status":"failed"/.test(text)) break;
    await delay(20);
  }
  const stored = JSON.parse(text) as { status: string; error: { code: string; message: string } };
  assert.equal(stored.status, 'failed', text);
  assertClean(text, 'the stored response');
  assert.equal(stored.error.code, 'upstream_error');
  assert.match(stored.error.message, /\b400\b.*invalid_request_error.*context_length_exceeded/);
  assertClean(await (await server.fetch(`/v1/responses/${id}?stream=true`, { key })).text(), 'the replayed response');
});

test('the failure warning names the status, type and code; the activity holds no secret', async () => {
  const { key } = await server.createKey();
  await post(key, '/v1/chat/completions', { model: 'agent', messages: [{ role: 'user', content: 'ECHO-JSON' }] });
  const warning = await log.find((r) => r.msg === 'upstream call failed' && r.status === 400 && r.upstream_code === 'context_length_exceeded');
  assert.equal(warning.upstream_type, 'invalid_request_error');
  assert.equal(warning.kind, 'status');
  const activity = await server.admin('GET', '/activity?limit=100');
  assertClean(JSON.stringify(activity.body), 'the activity');
});

test('/readyz says nothing of an upstream that echoes the key on /models', async () => {
  const echoing = await startFakeUpstream((req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: echo(req), code: 'invalid_api_key' } }));
  });
  const probed = await startTestServer({ UPSTREAM_BASE_URL: echoing.baseUrl, UPSTREAM_API_KEY: KEY, UPSTREAM_MODEL_AGENT: 'm' });
  try {
    const res = await probed.fetch('/readyz');
    assert.equal(res.status, 503);
    const text = await res.text();
    assertClean(text, '/readyz');
    assert.match(text, /answered 401/);
  } finally {
    await probed.close();
    await echoing.close();
  }
});

test('nothing the service logged while the echoes went by holds a secret', async () => {
  await log.find((r) => r.msg === 'upstream call failed');
  assert.match(log.text, /"level":30/, 'info lines were captured');
  assertClean(log.text, 'the log');
});
