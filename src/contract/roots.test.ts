// A root from data alone: a small surface with its own error shape (a messages-style
// {type: "error", error: {type, message}}, 402 for an exhausted quota) registered beside
// /v1 through the same router and pipeline. Its refusals, unknown paths and bad keys
// answer in its shape, its OpenAPI document is its own, and /v1 keeps the reference's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { z } from 'zod';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import { metaRoutes } from '../api/meta/routes.ts';
import { insufficientQuota } from '../errors.ts';
import { Router } from '../http/router.ts';
import { applied } from './fields.ts';
import { ADMIN, type Root } from './roots.ts';
import { defineEndpoint } from './types.ts';

const echo = defineEndpoint({
  operationId: 'echoMessage',
  method: 'POST',
  path: '/echo',
  family: 'test',
  summary: 'Echoes its text; `spend: true` is refused for want of credits.',
  body: { type: 'json', required: ['text'], fields: { text: applied(z.string().max(10)), spend: applied(z.boolean()) } },
  response: { schema: z.object({ text: z.string() }) },
});
const openapi = defineEndpoint({ operationId: 'echoOpenApi', method: 'GET', path: '/openapi.json', family: 'test', summary: 'This root described.', response: { schema: z.looseObject({}) } });

const TYPES: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 404: 'not_found_error' };
const MESSAGES_STYLE: Root = {
  id: 'echo',
  prefix: '/echo/v1',
  title: 'echo',
  description: 'A root declared as data.',
  auth: 'key',
  endpoints: [echo, openapi],
  errors: {
    status: (e) => (e.code === 'insufficient_quota' ? 402 : e.status),
    body(e) {
      const status = this.status(e);
      return { type: 'error', error: { type: TYPES[status] ?? 'api_error', message: e.message } };
    },
    schema: { type: 'object', required: ['type', 'error'], properties: { type: { const: 'error' }, error: { type: 'object', properties: { type: { type: 'string' }, message: { type: 'string' } } } } },
  },
  bodies: 'parsed',
  publicDocuments: true,
};

const forward = defineEndpoint({ operationId: 'forwardRaw', method: 'POST', path: '/forward', family: 'test', summary: 'Answers with the bytes it got.', body: { type: 'json', fields: {} }, response: { schema: z.looseObject({}) } });
const RAW: Root = { ...MESSAGES_STYLE, id: 'raw', prefix: '/raw/v1', title: 'raw', endpoints: [forward, openapi], bodies: 'raw' };

let server: TestServer;
let key: string;
before(async () => {
  server = await startTestServer({}, {
    routes: (v1) => {
      const router = new Router(v1.app, v1.services, MESSAGES_STYLE);
      router.endpoint(echo, async ({ body }) => {
        if (body.spend) throw insufficientQuota('This account has no credits left.');
        return { text: body.text! };
      });
      metaRoutes(router);
      const raw = new Router(v1.app, v1.services, RAW);
      raw.endpoint(forward, async ({ request }) => ({ bytes: (request.body as Buffer).toString('base64') }));
    },
  });
  key = (await server.createKey()).key;
});
after(() => server.close());

const post = (path: string, body: unknown, k = key) => server.fetch(path, { method: 'POST', key: k, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test("a root's answers and refusals take its own error shape and statuses", async () => {
  const ok = await post('/echo/v1/echo', { text: 'hi' });
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { text: 'hi' });

  const cases: [Response, number, string][] = [
    [await post('/echo/v1/echo', {}), 400, 'invalid_request_error'],
    [await post('/echo/v1/echo', { text: 'far too long a text' }), 400, 'invalid_request_error'],
    [await post('/echo/v1/echo', { text: 'hi', spend: true }), 402, 'billing_error'],
    [await post('/echo/v1/echo', { text: 'hi' }, 'sk-agent-wrong'), 401, 'authentication_error'],
    [await post('/echo/v1/nowhere', { text: 'hi' }), 404, 'not_found_error'],
    [await server.fetch('/echo/v1/echo', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: '{"text": ' }), 400, 'invalid_request_error'],
  ];
  for (const [res, status, type] of cases) {
    assert.equal(res.status, status);
    assert.ok(res.headers.get('x-request-id'));
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, type);
    assert.equal(typeof body.error.message, 'string');
  }

  // /v1 and the admin root keep the reference's shape.
  const v1 = await server.fetch('/v1/nowhere', { key });
  assert.deepEqual(Object.keys(((await v1.json()) as { error: object }).error).sort(), ['code', 'message', 'param', 'type']);
  const admin = await server.admin('POST', '/accounts', { name: 'x', unknown_field: 1 });
  assert.equal(admin.status, 400);
  assert.equal(admin.body.error.param, 'unknown_field', 'the admin root refuses a field outside its tables');
});

test("each root publishes its own OpenAPI document: its endpoints and its error schema", async () => {
  const doc = (await (await server.fetch('/echo/v1/openapi.json')).json()) as { info: { title: string }; paths: Record<string, unknown>; components: { schemas: { Error: { required: string[] } } } };
  assert.equal(doc.info.title, 'echo');
  assert.deepEqual(Object.keys(doc.paths).sort(), ['/echo', '/openapi.json']);
  assert.deepEqual(doc.components.schemas.Error.required, ['type', 'error']);
  const v1 = (await (await server.fetch('/v1/openapi.json')).json()) as { paths: Record<string, unknown> };
  assert.equal(v1.paths['/echo'], undefined);

  // The admin root's document needs the admin token, and lists its endpoints.
  assert.equal((await server.fetch('/admin/v1/openapi.json')).status, 401);
  const adminDoc = (await server.admin('GET', '/openapi.json')).body as { info: { title: string }; paths: Record<string, Record<string, unknown>> };
  assert.equal(adminDoc.info.title, ADMIN.title);
  assert.deepEqual(Object.keys(adminDoc.paths).sort(), ['/accounts', '/accounts/{id}', '/accounts/{id}/credits', '/activity', '/keys', '/keys/{id}', '/openapi.json']);
  assert.deepEqual(Object.keys(adminDoc.paths['/keys/{id}']!).sort(), ['delete', 'get', 'patch']);
});

test('a root whose bodies are raw hands its handler the bytes as sent, unparsed', async () => {
  // Spacing, key order and a key the parser would refuse on a parsed root, kept as they were.
  const sent = '{ "b":1,  "a" : [ 1.50 ], "__proto__": {"x": 1} }';
  const res = await server.fetch('/raw/v1/forward', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: sent });
  assert.equal(res.status, 200);
  assert.equal(Buffer.from(((await res.json()) as { bytes: string }).bytes, 'base64').toString(), sent);
  // The same bytes on a parsed root meet the one JSON parser, which refuses the prototype key.
  const parsed = await server.fetch('/echo/v1/echo', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: sent });
  assert.equal(parsed.status, 400);
});
