// Regression tests for what a probe of the service found (issue 8): prototype keys in
// queries and bodies, deep nesting, names that are not Latin-1, and every answer the
// HTTP parser or router gives, down to a body over the limit sent by a raw client, in
// the error shape with a request id. The hostile bodies go over the Responses WebSocket
// too (issue 18), where they must get what the POST gets, as error events, and to the
// admin root (issue 19), whose bodies meet the same parser and contract.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createChatCompletion } from '../contract/endpoints/chat.ts';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import { ignoredHeader } from '../pipeline/contract.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../pipeline/json/text.ts';
import { asCreateMessage, connect } from '../api/responses/websocket.test-support.ts';

const testChat = { ...createChatCompletion, operationId: 'testChatHostile', path: '/test/chat/completions' } as const;
const BODY_LIMIT = 65_536;

let server: TestServer;
let key: string;
let port: number;

before(async () => {
  server = await startTestServer(
    { AGENT_API_BODY_LIMIT_BYTES: String(BODY_LIMIT) },
    { routes: (router) => router.endpoint(testChat, async ({ body }) => ({ echo: body })) },
  );
  key = (await server.createKey()).key;
  port = Number(new URL(server.origin).port);
});
after(() => server.close());

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

async function expectError(res: Response, status: number, param?: string | null): Promise<ErrorBody['error']> {
  const body = (await res.json()) as ErrorBody;
  assert.equal(res.status, status, JSON.stringify(body));
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
  if (param !== undefined) assert.equal(body.error.param, param);
  return body.error;
}

const postRaw = (body: string, path = '/v1/test/chat/completions') =>
  server.fetch(path, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body });

/** One raw HTTP exchange: what the server answered, up to the close. */
function rawExchange(head: string, opts: { bodyBytes?: number } = {}): Promise<{ text: string; reset: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let reset = false;
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => (reset = true));
    socket.on('close', () => resolve({ text, reset }));
    socket.write(head, 'latin1');
    let left = opts.bodyBytes ?? 0;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = () => {
      while (left > 0 && !socket.destroyed) {
        const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= part.length;
        if (!socket.write(part)) return void socket.once('drain', pump);
      }
      // Half-close: the server may keep the connection; it ends when the answer is read.
      socket.end();
    };
    pump();
  });
}

function parseRaw(text: string): { status: number; headers: Record<string, string>; body: ErrorBody } {
  const split = text.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const length = Number(headers['content-length']);
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(text.slice(split + 4, split + 4 + length)) as ErrorBody };
}

describe('no request writes to a prototype', () => {
  test('prototype keys in a query are refused, and nothing leaks into Object.prototype', async () => {
    for (const query of ['__proto__[x]=1', 'metadata[__proto__]=1', 'constructor[x]=1', 'prototype=1', '__proto__=1']) {
      const res = await server.fetch(`/v1/chat/completions?${query}`, { key });
      const err = await expectError(res, 400);
      assert.equal(err.code, 'invalid_request');
      assert.equal(err.param, decodeURIComponent(query.split('=')[0]!));
    }
    assert.equal(({} as Record<string, unknown>).x, undefined);
    assert.ok(!Object.keys(Object.prototype).includes('x'));
    // What the probe saw break: every admin POST afterwards.
    const made = await server.admin('POST', '/accounts', { name: `after-proto-${Date.now()}` });
    assert.equal(made.status, 201, JSON.stringify(made.body));
  });

  test('prototype keys in a JSON body are refused', async () => {
    await expectError(await postRaw('{"model":"agent","messages":[{"role":"user","content":"hi"}],"__proto__":{"x":1}}'), 400);
    await expectError(await postRaw('{"model":"agent","messages":[{"role":"user","content":"hi"}],"constructor":{"prototype":{"x":1}}}'), 400);
    await expectError(await postRaw('{"model":"agent","messages":[{"role":"user","content":"hi"}],"metadata":{"__proto__":{"x":"1"}}}'), 400);
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });
});

describe('deep nesting and odd names are 4xx, never 5xx', () => {
  const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

  test('a 5,000-level array in any limited field is a 400 naming it', async () => {
    for (const field of ['n', 'service_tier', 'modalities', 'logprobs']) {
      const res = await postRaw(`{"model":"agent","messages":[{"role":"user","content":"hi"}],"${field}":${deep(5_000)}}`);
      const err = await expectError(res, 400, field);
      assert.match(err.message, /nested deeper/);
    }
    // Under the depth cap, the limited-value message still renders the value safely.
    const res = await postRaw(`{"model":"agent","messages":[{"role":"user","content":"hi"}],"n":${deep(MAX_JSON_DEPTH - 2)}}`);
    const err = await expectError(res, 400, 'n');
    assert.equal(err.code, 'unsupported_parameter');
    assert.ok(err.message.length < 500);
  });

  test('the depth scan ignores brackets inside strings and finds the top-level field', () => {
    assert.equal(tooDeep(Buffer.from(`{"a":"${'['.repeat(500)}"}`)), undefined);
    assert.deepEqual(tooDeep(Buffer.from(`{"a":1,"b\\"c":${deep(200)}}`)), { field: 'b"c' });
    assert.deepEqual(tooDeep(Buffer.from(deep(200))), { field: null });
    assert.equal(tooDeep(Buffer.from(deep(MAX_JSON_DEPTH))), undefined);
  });

  test('invalid UTF-8 in the body is a 400', async () => {
    const body = Buffer.concat([Buffer.from('{"model":"agent","messages":[{"role":"user","content":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]);
    const res = await server.fetch('/v1/test/chat/completions', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body });
    assert.match((await expectError(res, 400, 'messages')).message, /UTF-8/);
    // In a field's name: no field to name (not the field before it).
    const inKey = Buffer.concat([Buffer.from('{"model":"agent","messages":[{"role":"user","content":"hi"}],"a'), Buffer.from([0xff]), Buffer.from('":1}')]);
    await expectError(await server.fetch('/v1/test/chat/completions', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: inKey }), 400, null);
    // An encoded surrogate (ED A0 80) and an overlong form (C0 AF) are not UTF-8 either.
    for (const bad of [[0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      const b = Buffer.concat([Buffer.from('{"model":"agent","user":"'), Buffer.from(bad), Buffer.from('","messages":[]}')]);
      await expectError(await server.fetch('/v1/test/chat/completions', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: b }), 400, 'user');
    }
  });

  test('an unknown field named outside Latin-1 is ignored and named percent-encoded', async () => {
    const res = await postRaw('{"model":"agent","messages":[{"role":"user","content":"hi"}],"ключ":1,"a,b":2,"\\ud800":3}');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-service-ignored-parameters'), '%D0%BA%D0%BB%D1%8E%D1%87, a%2Cb, %EF%BF%BD');
  });

  test('NUL characters, which PostgreSQL cannot store, are refused where they would be stored or compared', async () => {
    await expectError(await server.fetch('/v1/chat/completions/%00', { key }), 400);
    await expectError(await server.fetch('/v1/chat/completions?after=%00', { key }), 400);
    await expectError(await postRaw('{"model":"agent","messages":[{"role":"user","content":"hi"}],"user":"a\\u0000b"}'), 400, 'user');
    await expectError(await postRaw('{"model":"agent","messages":[{"role":"user","content":"hi"}],"metadata":{"k":"a\\u0000"}}'), 400, 'metadata.k');
    const admin = await server.admin('POST', '/accounts', { name: 'nul\u0000name' });
    assert.equal(admin.status, 400);
    assert.equal(admin.body.error.param, 'name');
    // In a prompt it is text like any other.
    assert.equal((await postRaw('{"model":"agent","messages":[{"role":"user","content":"a\\u0000b"}]}')).status, 200);
  });

  test('the ignored-fields header stays short however many fields are sent', () => {
    const names = Array.from({ length: 10_000 }, (_, i) => `field_${i}`);
    const header = ignoredHeader(names);
    assert.ok(header.length < 2_100);
    assert.match(header, /, \.\.\.\(\+\d+ more\)$/);
    assert.equal(ignoredHeader(['x'.repeat(5_000)]), '...(+1 more)');
  });
});

describe('multipart bodies cut inside a part', () => {
  test('a 400, never an uncaught stream error: file parts the endpoint stores, takes several of, or drops', async () => {
    // Found by the fuzz gate: a body cut inside a part the endpoint does not use left
    // that part's stream failing with nobody listening, which ended the process.
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const { key: uploader } = await server.createKey({ permissions: { files: true, skills: true } });
      for (const [path, name] of [['/v1/files', 'unused'], ['/v1/files', 'file'], ['/v1/skills', 'files'], ['/v1/skills', 'unused']] as const) {
        for (const tail of ['abc', 'abc\r\n--fzb']) {
          const body = `--fzboundary\r\nContent-Disposition: form-data; name="${name}"; filename="a.txt"\r\n\r\n${tail}`;
          const res = await server.fetch(path, { key: uploader, method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=fzboundary' }, body });
          assert.equal(res.status, 400, `${path} ${name} ${JSON.stringify(tail)}`);
          assert.ok(res.headers.get('x-request-id'));
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('the same hostile bodies over the Responses WebSocket get what the POST gets', () => {
  const base = '{"model":"agent","input":"hi"';
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => Buffer.from(p as string)));
  const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
  const bodies: [string, Buffer][] = [
    ['__proto__ at the top', bytes(`${base},"__proto__":{"x":1}}`)],
    ['constructor.prototype', bytes(`${base},"constructor":{"prototype":{"x":1}}}`)],
    ['__proto__ in metadata', bytes(`${base},"metadata":{"__proto__":{"x":"1"}}}`)],
    ['a \\u-escaped __proto__', bytes(`${base},"metadata":{"\\u005f_proto__":{"x":"1"}}}`)],
    ...['truncation', 'service_tier', 'include', 'text'].map((field): [string, Buffer] => [`5,000 levels in ${field}`, bytes(`${base},"${field}":${deep(5_000)}}`)]),
    ['FF FE in input', bytes('{"model":"agent","input":"', [0xff, 0xfe], '"}')],
    ['an encoded surrogate in user', bytes(`${base},"user":"`, [0xed, 0xa0, 0x80], '"}')],
    ['an overlong form in user', bytes(`${base},"user":"`, [0xc0, 0xaf], '"}')],
    ['invalid UTF-8 in a field name', bytes(`${base},"`, [0xff], '":1}')],
    ['NUL in user', bytes(`${base},"user":"a\\u0000b"}`)],
    ['NUL in metadata', bytes(`${base},"metadata":{"k":"a\\u0000"}}`)],
    ['names outside Latin-1', bytes(`${base},"ключ":1,"a,b":2,"\\ud800":3}`)],
    ['over the body limit', bytes(`${base},"user":"${'a'.repeat(BODY_LIMIT)}"}`)],
    ['a truncated body', bytes(`${base},"user":`)],
    ['not an object', bytes('[1,2]')],
    ['an empty body', Buffer.alloc(0)],
  ];

  test('each an error event with the POST\'s status, code, param and a request id, or the same completion; the socket stays usable', async () => {
    const { ws, sendText, turn } = await connect(server, key);
    for (const [what, body] of bodies) {
      const post = await server.fetch('/v1/responses', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: new Uint8Array(body) });
      const answer = (await post.json()) as { error?: ErrorBody['error']; status?: string };
      const events = await sendText(body.length ? asCreateMessage(body) : body);
      const last = events.at(-1);
      if (post.status >= 400) {
        assert.equal(events.length, 1, `${what}: ${JSON.stringify(events).slice(0, 300)}`);
        assert.equal(last.type, 'error', `${what}: ${JSON.stringify(last).slice(0, 300)}`);
        assert.deepEqual([last.status, last.error.type, last.error.code, last.error.param], [post.status, answer.error!.type, answer.error!.code, answer.error!.param], what);
        assert.equal(typeof last.error.message, 'string');
        assert.match(last.error.headers['x-request-id'], /^req_/, what);
      } else {
        assert.equal(post.status, 200, what);
        assert.equal(last.type, 'response.completed', `${what}: ${JSON.stringify(last).slice(0, 300)}`);
      }
    }
    assert.equal(({} as Record<string, unknown>).x, undefined);
    assert.equal((await turn({ model: 'agent', input: 'What is 2 + 2?' })).at(-1).type, 'response.completed', 'the socket is still usable');
    assert.equal((await server.fetch('/healthz')).status, 200);
    ws.close();
  });
});

describe('hostile bodies on the admin root: the same one parser and contract, refused in the error shape, nothing written', () => {
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => Buffer.from(p as string)));
  const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
  const cases: [string, Buffer, string | null][] = [
    ['__proto__ at the top', bytes('{"name":"h1","__proto__":{"x":1}}'), null],
    ['constructor.prototype', bytes('{"name":"h2","constructor":{"prototype":{"x":1}}}'), null],
    ['5,000 levels in credits', bytes(`{"name":"h3","credits":${deep(5_000)}}`), 'credits'],
    ['FF FE in name', bytes('{"name":"', [0xff, 0xfe], '"}'), 'name'],
    ['NUL in name', bytes('{"name":"a\\u0000b"}'), 'name'],
    ['a field outside the table', bytes('{"name":"h4","ballance":5}'), 'ballance'],
    ['a wrong type', bytes('{"name":7}'), 'name'],
    ['missing name', bytes('{"credits":1}'), 'name'],
    ['over the body limit', bytes(`{"name":"${'a'.repeat(BODY_LIMIT)}"}`), null],
    ['a truncated body', bytes('{"name":'), null],
    ['not an object', bytes('[1,2]'), null],
    ['an empty body', Buffer.alloc(0), null],
  ];

  test('POST /admin/v1/accounts and PATCH /admin/v1/keys/{id}', async () => {
    const before = (await server.admin('GET', '/accounts')).body.data.length;
    const { id } = await server.createKey();
    for (const [what, body, param] of cases) {
      for (const [method, path] of [['POST', '/admin/v1/accounts'], ['PATCH', `/admin/v1/keys/${id}`]] as const) {
        const res = await server.fetch(path, { method, key: ADMIN_TOKEN, headers: { 'content-type': 'application/json' }, body: new Uint8Array(body) });
        // A PATCH takes no required field and names keys, not accounts: only the shape is compared there.
        if (method === 'PATCH' && (what === 'missing name' || what === 'a field outside the table')) continue;
        const error = await expectError(res, 400, method === 'POST' ? param : undefined);
        assert.equal(error.type, 'invalid_request_error', what);
      }
    }
    assert.equal(({} as Record<string, unknown>).x, undefined);
    assert.equal((await server.admin('GET', '/accounts')).body.data.length, before + 1, 'only the account createKey made');
    assert.equal((await server.admin('GET', `/keys/${id}`)).body.name, 'test key', 'the key unchanged');
  });
});

describe('answers from the HTTP parser and router are in the error shape with a request id', () => {
  const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;

  for (const [name, lines, status] of [
    ['a control character in X-Client-Request-Id', ['GET /v1/models HTTP/1.1', 'Host: x', 'X-Client-Request-Id: a\x01b'], 400],
    ['a bad Content-Length', ['POST /v1/models HTTP/1.1', 'Host: x', 'Content-Length: abc'], 400],
    ['Content-Length and Transfer-Encoding together', ['POST /v1/models HTTP/1.1', 'Host: x', 'Content-Length: 5', 'Transfer-Encoding: chunked'], 400],
    ['an unknown Transfer-Encoding', ['POST /v1/models HTTP/1.1', 'Host: x', 'Transfer-Encoding: gzip, foo'], 400],
    ['headers over 16 KB', ['GET /v1/models HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(20_000)}`], 431],
    ['a URL over 16 KB', [`GET /v1/models?${'a'.repeat(20_000)} HTTP/1.1`, 'Host: x'], 431],
    ['no Host header', ['GET /v1/models HTTP/1.1'], 400],
    ['an Expect other than 100-continue', ['GET /v1/models HTTP/1.1', 'Host: x', 'Expect: fz-unknown'], 417],
  ] as const) {
    test(name, async () => {
      const { text } = await rawExchange(head([...lines]));
      const answer = parseRaw(text);
      assert.equal(answer.status, status, text.slice(0, 300));
      assert.match(answer.headers['x-request-id'] ?? '', /^req_/);
      assert.deepEqual(Object.keys(answer.body.error).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(answer.body.error.type, 'invalid_request_error');
    });
  }

  test('%FF in the path and a path id over the length limit', async () => {
    await expectError(await server.fetch('/v1/models/%FF', { key }), 400);
    await expectError(await server.fetch(`/v1/chat/completions/${'x'.repeat(300)}`, { key }), 414);
    // An id under the limit is routed: the usual 404.
    await expectError(await server.fetch(`/v1/chat/completions/${'x'.repeat(200)}`, { key }), 404);
  });

  test('a body over the limit from a raw client gets its answer, not a reset, every time, kept alive or not', async () => {
    for (let i = 0; i < 10; i++) {
      const size = 8 * 1024 * 1024;
      const connection = i % 2 === 0 ? 'keep-alive' : 'close';
      const { text, reset } = await rawExchange(
        `POST /v1/test/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nConnection: ${connection}\r\nContent-Length: ${size}\r\n\r\n`,
        { bodyBytes: size },
      );
      assert.equal(reset, false, 'the upload was not cut off');
      const answer = parseRaw(text);
      assert.equal(answer.status, 400);
      assert.match(answer.body.error.message, new RegExp(`limit of ${BODY_LIMIT} bytes`));
      assert.match(answer.headers['x-request-id'] ?? '', /^req_/);
    }
  });

  test('a chunked body over the limit is answered the same way', async () => {
    const { text } = await rawExchange(
      `POST /v1/test/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
        `${(BODY_LIMIT * 2).toString(16)}\r\n${'a'.repeat(BODY_LIMIT * 2)}\r\n0\r\n\r\n`,
    );
    const answer = parseRaw(text);
    assert.equal(answer.status, 400);
    assert.match(answer.headers['x-request-id'] ?? '', /^req_/);
  });

  test('after all of that the service still answers', async () => {
    assert.equal((await server.fetch('/healthz')).status, 200);
    assert.equal((await server.fetch('/v1/models', { key })).status, 200);
  });
});
