// The shared pipeline end to end: request ids, authentication (401/403), the contract
// step on a real contract table (400 unsupported_parameter / invalid_request, ignored
// fields header), framework errors as 400s, unknown paths and unsupported families.
// Test-only routes reuse the real chat and embeddings contracts under /v1/test/...
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { createChatCompletion } from '../contract/endpoints/chat.ts';
import { createEmbedding } from '../contract/endpoints/embeddings.ts';
import { UNSUPPORTED_FAMILIES } from '../contract/unsupported.ts';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

const testChat = { ...createChatCompletion, operationId: 'testChat', path: '/test/chat/completions' } as const;
const testEmbed = { ...createEmbedding, operationId: 'testEmbed', path: '/test/embeddings' } as const;

let server: TestServer;
let key: string;
let client: OpenAI;

before(async () => {
  server = await startTestServer(
    { AGENT_API_BODY_LIMIT_BYTES: '65536' },
    {
      routes: (router) => {
        router.endpoint(testChat, async ({ body }) => ({ echo: body }));
        router.endpoint(testEmbed, async () => ({ ok: true }));
      },
    },
  );
  key = (await server.createKey({ permissions: { embeddings: false } })).key;
  client = server.openai(key);
});
after(() => server.close());

const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  server.fetch('/v1/test/chat/completions', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });

async function expectError(res: Response, status: number, code: string, param?: string | null) {
  const body = (await res.json()) as { error: { code: string; type: string; param: string | null; message: string } };
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok('param' in body.error && 'type' in body.error);
  if (param !== undefined) assert.equal(body.error.param, param);
  assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
  return body.error;
}

describe('request ids', () => {
  test('every response carries X-Request-Id, errors included, and the SDK exposes it', async () => {
    const ok = await client.models.list().withResponse();
    assert.match(ok.request_id ?? '', /^req_/);
    const err = await server.fetch('/v1/models');
    assert.match(err.headers.get('x-request-id') ?? '', /^req_/);
    const unknown = await server.fetch('/v1/definitely-not-here');
    assert.match(unknown.headers.get('x-request-id') ?? '', /^req_/);
    assert.notEqual(err.headers.get('x-request-id'), unknown.headers.get('x-request-id'));
  });

  test('X-Client-Request-Id must be printable ASCII of at most 512 characters', async () => {
    const ok = await server.fetch('/v1/models', { key, headers: { 'x-client-request-id': 'a'.repeat(512) } });
    assert.equal(ok.status, 200);
    await expectError(await server.fetch('/v1/models', { key, headers: { 'x-client-request-id': 'a'.repeat(513) } }), 400, 'invalid_request');
    await expectError(await server.fetch('/v1/models', { key, headers: { 'x-client-request-id': 'tab\there' } }), 400, 'invalid_request');
  });
});

describe('authentication', () => {
  test('401 invalid_api_key for a missing or wrong key, through the SDK too', async () => {
    const missing = await expectError(await server.fetch('/v1/models'), 401, 'invalid_api_key', null);
    assert.equal(missing.type, 'invalid_request_error');
    await expectError(await server.fetch('/v1/models', { key: 'sk-agent-wrong' }), 401, 'invalid_api_key');
    await expectError(await server.fetch('/v1/models', { headers: { authorization: 'Basic abc' } }), 401, 'invalid_api_key');
    await assert.rejects(server.openai('sk-agent-nope').models.list(), (e: unknown) => {
      assert.ok(e instanceof OpenAI.AuthenticationError);
      assert.equal(e.code, 'invalid_api_key');
      return true;
    });
  });

  test('401 for a revoked or expired key', async () => {
    const revoked = await server.createKey();
    assert.equal((await server.fetch('/v1/models', { key: revoked.key })).status, 200);
    assert.equal((await server.admin('DELETE', `/keys/${revoked.id}`)).status, 200);
    await expectError(await server.fetch('/v1/models', { key: revoked.key }), 401, 'invalid_api_key');

    // Two seconds ahead: one can already be past when the admin API checks it (a whole second taken late).
    const expiresAt = Math.floor(Date.now() / 1000) + 2;
    const soon = await server.createKey({ expires_at: expiresAt });
    assert.equal((await server.fetch('/v1/models', { key: soon.key })).status, 200);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt * 1000 - Date.now()) + 100));
    const err = await expectError(await server.fetch('/v1/models', { key: soon.key }), 401, 'invalid_api_key');
    assert.match(err.message, /expired/);
  });

  test('403 model_not_allowed for a paused key, a model the key lacks, a switch that is off, an address outside the allowlist', async () => {
    const paused = await server.createKey({ paused: true });
    const e1 = await expectError(await server.fetch('/v1/models', { key: paused.key }), 403, 'model_not_allowed');
    assert.equal(e1.type, 'permission_error');

    const onlyAgent = await server.createKey({ models: ['agent'] });
    const res = await server.fetch('/v1/test/chat/completions', {
      method: 'POST',
      key: onlyAgent.key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agent-think', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await expectError(res, 403, 'model_not_allowed', 'model');

    await expectError(
      await server.fetch('/v1/test/embeddings', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'agent-embed', input: 'x' }),
      }),
      403,
      'model_not_allowed',
    );

    const elsewhere = await server.createKey({ ip_allowlist: ['10.0.0.0/8', '2001:db8::/32'] });
    await expectError(await server.fetch('/v1/models', { key: elsewhere.key }), 403, 'model_not_allowed');
    const loopback = await server.createKey({ ip_allowlist: ['10.1.2.3', '127.0.0.0/8'] });
    assert.equal((await server.fetch('/v1/models', { key: loopback.key })).status, 200);
  });

  test('X-Forwarded-For counts only from a trusted proxy (AGENT_API_TRUSTED_PROXIES)', async () => {
    const behindProxy = await startTestServer({ AGENT_API_TRUSTED_PROXIES: '127.0.0.1' });
    try {
      const k = await behindProxy.createKey({ ip_allowlist: ['203.0.113.7'] });
      const from = (ip: string) => behindProxy.fetch('/v1/models', { key: k.key, headers: { 'x-forwarded-for': ip } });
      assert.equal((await from('203.0.113.7')).status, 200, 'the client address the proxy reports');
      await expectError(await from('198.51.100.1'), 403, 'model_not_allowed');
      await expectError(await behindProxy.fetch('/v1/models', { key: k.key }), 403, 'model_not_allowed');
    } finally {
      await behindProxy.close();
    }
    // Without a trusted proxy the header is the caller's own claim: ignored.
    const k = await server.createKey({ ip_allowlist: ['203.0.113.7'] });
    await expectError(await server.fetch('/v1/models', { key: k.key, headers: { 'x-forwarded-for': '203.0.113.7' } }), 403, 'model_not_allowed');
  });

  test('pausing and un-pausing through the admin API applies at once', async () => {
    const k = await server.createKey();
    assert.equal((await server.admin('PATCH', `/keys/${k.id}`, { paused: true })).status, 200);
    assert.equal((await server.fetch('/v1/models', { key: k.key })).status, 403);
    assert.equal((await server.admin('PATCH', `/keys/${k.id}`, { paused: false })).status, 200);
    assert.equal((await server.fetch('/v1/models', { key: k.key })).status, 200);
  });
});

describe('contract step', () => {
  test('a refused field is 400 unsupported_parameter with the field in param', async () => {
    await expectError(await chat({ audio: { voice: 'alloy', format: 'mp3' } }), 400, 'unsupported_parameter', 'audio');
    await expectError(await chat({ web_search_options: {} }), 400, 'unsupported_parameter', 'web_search_options');
    await assert.rejects(
      client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'x' }], prediction: { type: 'content', content: 'x' } }, { path: '/test/chat/completions' }),
      (e: unknown) => {
        assert.ok(e instanceof OpenAI.BadRequestError);
        assert.equal(e.code, 'unsupported_parameter');
        assert.equal(e.param, 'prediction');
        return true;
      },
    );
  });

  test('a limited field accepts only its values', async () => {
    assert.equal((await chat({ n: 1 })).status, 200);
    await expectError(await chat({ n: 2 }), 400, 'unsupported_parameter', 'n');
    assert.equal((await chat({ service_tier: 'auto' })).status, 200);
    await expectError(await chat({ service_tier: 'priority' }), 400, 'unsupported_parameter', 'service_tier');
    // An explicit null means "not set".
    assert.equal((await chat({ n: null, audio: null })).status, 200);
  });

  test('ranges give 400 invalid_request with param', async () => {
    await expectError(await chat({ temperature: 2.5 }), 400, 'invalid_request', 'temperature');
    await expectError(await chat({ temperature: -0.1 }), 400, 'invalid_request', 'temperature');
    await expectError(await chat({ presence_penalty: 3 }), 400, 'invalid_request', 'presence_penalty');
    await expectError(await chat({ frequency_penalty: -2.5 }), 400, 'invalid_request', 'frequency_penalty');
    await expectError(await chat({ top_logprobs: 21 }), 400, 'invalid_request', 'top_logprobs');
    await expectError(await chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), 400, 'invalid_request', 'stop');
    await expectError(await chat({ temperature: 'hot' }), 400, 'invalid_request', 'temperature');
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    await expectError(await chat({ metadata: many }), 400, 'invalid_request', 'metadata');
    await expectError(await chat({ metadata: { ['k'.repeat(65)]: 'v' } }), 400, 'invalid_request');
    await expectError(await chat({ metadata: { k: 'v'.repeat(513) } }), 400, 'invalid_request', 'metadata.k');
    assert.equal((await chat({ temperature: 2, presence_penalty: -2, top_logprobs: 20, stop: ['a', 'b', 'c', 'd'] })).status, 200);
  });

  test('a missing required field, a wrong type deep inside, and an unknown model', async () => {
    const res = await server.fetch('/v1/test/chat/completions', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agent' }),
    });
    await expectError(res, 400, 'invalid_request', 'messages');
    const deep = await expectError(await chat({ messages: [{ role: 'user', content: 42 }] }), 400, 'invalid_request');
    assert.match(deep.param ?? '', /^messages\[0\]/);
    await expectError(await chat({ model: 'gpt-4o' }), 404, 'model_not_found', 'model');
  });

  test('fields the reference API does not define are ignored and named in X-Service-Ignored-Parameters', async () => {
    const res = await chat({ frobnicate: true, zz_extra: 1 });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-service-ignored-parameters'), 'frobnicate, zz_extra');
    const body = (await res.json()) as { echo: Record<string, unknown> };
    assert.equal(body.echo.frobnicate, undefined, 'ignored fields do not reach the handler');
    const plain = await chat({});
    assert.equal(plain.headers.get('x-service-ignored-parameters'), null);
  });

  test('malformed JSON, a non-object body, a wrong content type and an oversized body are 400s', async () => {
    const post = (body: string, contentType = 'application/json') =>
      server.fetch('/v1/test/chat/completions', { method: 'POST', key, headers: { 'content-type': contentType }, body });
    await expectError(await post('{"model": "agent",'), 400, 'invalid_request');
    await expectError(await post('[1,2,3]'), 400, 'invalid_request');
    await expectError(await post('"just a string"'), 400, 'invalid_request');
    await expectError(await post('model=agent', 'text/plain'), 400, 'invalid_request');
    await expectError(await post(''), 400, 'invalid_request');
    const big = JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'x'.repeat(70_000) }] });
    await expectError(await post(big), 400, 'invalid_request');
  });
});

describe('routing', () => {
  test('every method and sub-path of an unsupported family is 404 unsupported_endpoint, before authentication', async () => {
    for (const family of UNSUPPORTED_FAMILIES) {
      for (const [method, path] of [
        ['GET', `/v1/${family}`],
        ['POST', `/v1/${family}/abc/def`],
        ['DELETE', `/v1/${family}/x`],
      ] as const) {
        const res = await server.fetch(path, { method, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{bad json' } : {}) });
        await expectError(res, 404, 'unsupported_endpoint');
      }
    }
    await assert.rejects(server.openai(key).fineTuning.jobs.list(), (e: unknown) => {
      assert.ok(e instanceof OpenAI.NotFoundError);
      assert.equal(e.code, 'unsupported_endpoint');
      return true;
    });
  });

  test('any other unknown path is a 404 in the error shape', async () => {
    await expectError(await server.fetch('/v1/nothing/here', { key }), 404, 'model_not_found');
    await expectError(await server.fetch('/elsewhere'), 404, 'model_not_found');
  });

  test('health endpoints need no key', async () => {
    assert.deepEqual(await (await server.fetch('/healthz')).json(), { status: 'ok' });
    const ready = await server.fetch('/readyz');
    assert.equal(ready.status, 200);
    assert.equal(((await ready.json()) as { status: string }).status, 'ready');
  });
});
