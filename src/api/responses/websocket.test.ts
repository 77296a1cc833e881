// The Responses WebSocket (GET /v1/responses with an upgrade), driven with `ws`: the
// same events as SSE, charged and logged like a POST; unstored responses continued
// within the session only; errors as error events on a socket that stays open; the
// refusals at the upgrade; a socket closed mid-answer stops the model.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { toMicro } from '../../accounts/money.ts';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { CapturedLog } from '../../observability/observability.test-support.ts';
import { checkStream } from './event-checks.test-support.ts';
import { asCreateMessage, connect } from './websocket.test-support.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The status the upgrade was refused with, and the error body. */
function refused(server: TestServer, key: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.baseURL.replace('http', 'ws')}/responses`, { headers: { authorization: `Bearer ${key}` } });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    ws.on('open', () => reject(new Error('the upgrade was accepted')));
    ws.on('error', () => undefined);
  });
}

describe('the Responses WebSocket on the offline engine', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  test('a turn: the SSE events in order, numbered from 0; the response is stored, charged and logged like a POST', async () => {
    const account = await server.createAccount(10);
    const { key } = await server.createKey({ account_id: account.id });
    const { ws, turn } = await connect(server, key);
    const events = await turn({ model: 'agent-think', input: 'What is 6 * 7?' });
    const final = checkStream(events);
    assert.equal(final.status, 'completed');
    const { output_text: _, ...stored } = (await server.openai(key).responses.retrieve(final.id)) as any;
    assert.deepEqual(stored, final);
    let acct = (await server.admin('GET', `/accounts/${account.id}`)).body;
    for (let i = 0; i < 100 && acct.reserved_credits > 0; i++) acct = (await pause(10), (await server.admin('GET', `/accounts/${account.id}`)).body);
    assert.equal(toMicro(10) - toMicro(acct.credits), toMicro(final.svc));
    await pause(50);
    const rows = (await server.admin('GET', '/activity?limit=50')).body.data as { account_id: string; endpoint: string; method: string; status: number }[];
    assert.ok(rows.some((r) => r.account_id === account.id && r.endpoint === '/v1/responses' && r.method === 'POST' && r.status === 200));
    ws.close();
  });

  test('store: false continues within the session, not from another socket; stored ones from anywhere', async () => {
    const { key } = await server.createKey();
    const a = await connect(server, key);
    const first = (await a.turn({ model: 'agent', input: 'hello', store: false })).at(-1).response;
    assert.equal(first.store, false);
    const second = (await a.turn({ model: 'agent', input: 'again', previous_response_id: first.id })).at(-1);
    assert.equal(second.type, 'response.completed');
    assert.equal(second.response.previous_response_id, first.id);
    const b = await connect(server, key);
    const [error] = await b.turn({ model: 'agent', input: 'again', previous_response_id: first.id });
    assert.equal(error.type, 'error');
    assert.equal(error.status, 404);
    assert.equal(error.error.param, 'previous_response_id');
    const stored = (await b.turn({ model: 'agent', input: 'from b', previous_response_id: second.response.id })).at(-1);
    assert.equal(stored.type, 'response.completed', 'a stored response continues from any socket');
    a.ws.close();
    b.ws.close();
  });

  test('errors are error events and the socket stays usable', async () => {
    const { key } = await server.createKey();
    const { ws, turn, next } = await connect(server, key);
    const [bad] = await turn({ model: 'agent', input: 'hi', temperature: 9 });
    assert.deepEqual([bad.type, bad.status, bad.error.param], ['error', 400, 'temperature']);
    const [bg] = await turn({ model: 'agent', input: 'hi', background: true });
    assert.deepEqual([bg.type, bg.status, bg.error.param], ['error', 400, 'background']);
    ws.send(JSON.stringify({ type: 'response.steer', input: 'faster' }));
    const steer = await next();
    assert.deepEqual([steer.type, steer.status, steer.error.param], ['error', 400, 'type']);
    ws.send('not json');
    assert.equal((await next()).status, 400);
    // A second create while one runs is refused; the first still finishes.
    ws.send(JSON.stringify({ type: 'response.create', model: 'agent', input: 'Summarize: ' + 'trains and rivers. '.repeat(50) }));
    ws.send(JSON.stringify({ type: 'response.create', model: 'agent', input: 'second' }));
    const seen: any[] = [];
    for (let e = await next(); ; e = await next()) {
      seen.push(e);
      if (e.type === 'response.completed') break;
    }
    assert.ok(seen.some((e) => e.type === 'error' && /already running/.test(e.error.message)));
    assert.equal((await turn({ model: 'agent', input: 'What is 1 + 1?' })).at(-1).type, 'response.completed');
    ws.close();
  });

  test('refused at the upgrade: a bad key 401; a GET without an upgrade 405 with Allow; a ninth socket 429', async () => {
    const bad = await refused(server, 'sk-agent-nope');
    assert.equal(bad.status, 401);
    assert.equal(bad.body.error.code, 'invalid_api_key');
    const { key } = await server.createKey();
    const get = await server.fetch('/v1/responses', { key });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    assert.equal((await get.json()).error.code, 'method_not_allowed');
    const sockets = await Promise.all(Array.from({ length: 8 }, () => connect(server, key)));
    const ninth = await refused(server, key);
    assert.equal(ninth.status, 429);
    for (const s of sockets) s.ws.close();
  });

  test('12 sockets opened at once: exactly 8 open, the rest 429; a closed one frees its place', async () => {
    const { key } = await server.createKey();
    const attempts = await Promise.allSettled(Array.from({ length: 12 }, () => connect(server, key)));
    const open = attempts.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
    assert.equal(open.length, 8);
    assert.equal((await refused(server, key)).status, 429);
    open.pop()!.ws.close();
    let again: Awaited<ReturnType<typeof connect>> | null = null;
    for (let i = 0; i < 100 && !again; i++) again = await connect(server, key).catch(async () => (await pause(20), null));
    assert.ok(again, 'a ninth opens once one closed');
    for (const s of [...open, again]) s.ws.close();
  });
});

describe('a message goes through the JSON parser a POST body takes', () => {
  const LIMIT = 65_536;
  const log = new CapturedLog();
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ AGENT_API_BODY_LIMIT_BYTES: String(LIMIT), LOG_LEVEL: 'debug' }, { logStream: log });
  });
  after(() => server.close());

  const base = '{"model":"agent","input":"hi"';
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
  const refusedBodies: [string, Buffer][] = [
    ['a __proto__ key', bytes(`${base},"__proto__":{"x":1}}`)],
    ['a \\u-escaped __proto__ key', bytes(`${base},"metadata":{"\\u005f_proto__":{"x":"1"}}}`)],
    ['constructor.prototype', bytes(`${base},"constructor":{"prototype":{"x":1}}}`)],
    ['nesting 500 deep', bytes(`${base},"text":${'['.repeat(500)}${']'.repeat(500)}}`)],
    ['invalid UTF-8', bytes(`${base},"user":"`, [0xff, 0xfe], '"}')],
    ['an encoded surrogate', bytes(`${base},"user":"`, [0xed, 0xa0, 0x80], '"}')],
    ['over the size limit', bytes(`${base},"user":"${'a'.repeat(LIMIT)}"}`)],
    ['not JSON', bytes(`${base},}`)],
  ];

  test('what a POST refuses is an error event with its status, code and param and a request id; the socket stays usable', async () => {
    const { key } = await server.createKey();
    const { ws, sendText, turn } = await connect(server, key);
    for (const [what, body] of refusedBodies) {
      const post = await server.fetch('/v1/responses', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: new Uint8Array(body) });
      const postError = (await post.json()).error;
      assert.equal(post.status, 400, `${what}: the POST`);
      const events = await sendText(asCreateMessage(body));
      assert.equal(events.length, 1, `${what}: ${JSON.stringify(events).slice(0, 300)}`);
      const [event] = events;
      assert.equal(event.type, 'error', `${what}: ${JSON.stringify(event).slice(0, 300)}`);
      assert.equal(event.status, 400, what);
      assert.deepEqual([event.error.type, event.error.code, event.error.param], [postError.type, postError.code, postError.param], what);
      assert.match(event.error.headers['x-request-id'], /^req_/, what);
      assert.equal((await turn({ model: 'agent', input: 'What is 1 + 1?' })).at(-1).type, 'response.completed', `${what}: the socket is still usable`);
    }
    assert.equal(({} as Record<string, unknown>).x, undefined);
    ws.close();
  });

  test('a message over twice the limit is not read to its end: an error event, then a close with 1009', async () => {
    const { key } = await server.createKey();
    const { sendText, next } = await connect(server, key);
    const events = [...(await sendText(asCreateMessage(bytes(`${base},"user":"${'a'.repeat(2 * LIMIT)}"}`)))), await next()];
    assert.deepEqual(
      events.map((e) => [e.type, e.status ?? e.code]),
      [
        ['error', 400],
        ['socket.closed', 1009],
      ],
    );
    assert.match(events[0].error.message, new RegExp(`limit of ${LIMIT} bytes`));
  });

  test('client mistakes are logged at info or below, without a stack; each refused message is a logged call', async () => {
    const { key } = await server.createKey();
    const { ws, sendText } = await connect(server, key);
    const from = log.text.length;
    for (const [, body] of refusedBodies) await sendText(asCreateMessage(body));
    await sendText(Buffer.from([0x80, 0x81]));
    ws.close();
    const { sendText: again } = await connect(server, key);
    await again(asCreateMessage(bytes(`${base},"user":"${'a'.repeat(2 * LIMIT)}"}`)));
    await pause(100);
    const lines = log.text
      .slice(from)
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { level: number; msg?: string; err?: unknown; status?: number });
    const loud = lines.filter((l) => l.level >= 40 || JSON.stringify(l).includes('"stack"'));
    assert.deepEqual(loud, [], 'nothing at warn or above, no stack');
    const refusals = lines.filter((l) => l.msg === 'request' && l.status === 400);
    assert.ok(refusals.length >= refusedBodies.length + 2, `each refusal has its access line: ${refusals.length}`);
  });
});

describe('a large message is parsed on the worker pool a large POST body takes', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  test('over 256 KB: the pool parses it, with the refusals and the noun of the event-loop parser; a valid one runs', async () => {
    const pool = server.app.http.jsonParsePool;
    const parse = pool.parse.bind(pool);
    let pooled = 0;
    pool.parse = (...args: Parameters<typeof parse>) => (pooled++, parse(...args));
    try {
      const { key } = await server.createKey();
      const { ws, sendText } = await connect(server, key);
      const pad = 'a'.repeat(1 << 20);
      const base = `{"model":"agent","input":"${pad} What is 2 + 2?"`;
      const cases: [string, Buffer, string | null, RegExp][] = [
        ['a __proto__ key', Buffer.from(`${base},"metadata":{"__proto__":{"x":"1"}}}`), null, /message/],
        ['invalid UTF-8', Buffer.concat([Buffer.from(`${base},"safety_identifier":"`), Buffer.from([0xff]), Buffer.from('"}')]), 'safety_identifier', /message is not valid UTF-8/],
      ];
      for (const [what, body, param, message] of cases) {
        const [event] = await sendText(asCreateMessage(body));
        assert.equal(event.type, 'error', what);
        assert.equal(event.status, 400, what);
        assert.equal(event.error.param, param, what);
        assert.match(event.error.message, message, what);
      }
      const events = await sendText(asCreateMessage(Buffer.from(`${base}}`)));
      assert.equal(events.at(-1).type, 'response.completed');
      assert.equal(pooled, cases.length + 1, 'every large message went to the pool');
      ws.close();
    } finally {
      pool.parse = parse;
    }
  });
});

describe('a socket closed mid-answer', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  before(async () => {
    upstream = await startFakeUpstream(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 1000 && !res.destroyed; i++) {
        res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `w${i} ` }, finish_reason: null }] })}\n\n`);
        await pause(20);
      }
      res.end();
    });
    server = await startTestServer({ UPSTREAM_BASE_URL: upstream.baseUrl, UPSTREAM_MODEL_AGENT: 'up', UPSTREAM_MAX_RETRIES: '0' });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('stops the model: the upstream request is aborted', async () => {
    const { key } = await server.createKey();
    const { ws, next } = await connect(server, key);
    ws.send(JSON.stringify({ type: 'response.create', model: 'agent', input: 'a long story' }));
    while ((await next()).type !== 'response.output_text.delta');
    ws.close();
    await Promise.race([upstream.requests.at(-1)!.closed, pause(3000).then(() => assert.fail('the upstream request was not aborted'))]);
  });
});
