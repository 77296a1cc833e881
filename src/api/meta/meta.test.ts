// /capabilities and /openapi.json: generated from the contract tables, listing only
// what is offered; the OpenAPI document passes a standard OpenAPI 3.1 validator.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { VERSION as OPENAI_SDK_VERSION } from 'openai/version';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { ALL_ENDPOINTS } from '../../contract/registry.ts';

/** Endpoints of the contract tables that no route registers yet (the audio ones, as of the images branch). */
const unofferedIn = (offered: readonly string[]) => ALL_ENDPOINTS.filter((c) => c.path.startsWith('/') && !offered.includes(`${c.method} ${c.path}`));

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

test('GET /capabilities has every member SPEC names, the versions, and only offered endpoints', async () => {
  const res = await server.fetch('/v1/capabilities');
  assert.equal(res.status, 200);
  const caps = (await res.json()) as Record<string, any>;
  for (const member of [
    'object', 'contract', 'version', 'base_url', 'openapi', 'tested_openai_sdk', 'fields', 'field_notes', 'limited_fields',
    'unsupported_fields', 'accepted_without_effect', 'tools', 'notes', 'errors', 'headers', 'unsupported_endpoints',
  ]) {
    assert.ok(member in caps, `capabilities.${member}`);
  }
  assert.equal(caps.object, 'capabilities');
  assert.equal(caps.version, '1.1.0');
  assert.equal(caps.api_version, '1.4.0');
  assert.equal(caps.base_url, server.baseURL);
  assert.equal(caps.openapi, `${caps.base_url}/openapi.json`);
  assert.equal(caps.tested_openai_sdk.version, OPENAI_SDK_VERSION, 'the published tested SDK is the one the suite runs');
  const offered = caps.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
  assert.ok(offered.includes('GET /models') && offered.includes('GET /capabilities'));
  assert.ok(offered.includes('POST /images/generations'));
  // An endpoint without a handler is not offered (whichever are left: none once every table has its route).
  for (const c of unofferedIn(offered)) assert.ok(!(`${c.method} ${c.path}` in caps.fields), `${c.method} ${c.path} is not offered`);
  for (const k of Object.keys(caps.fields)) assert.ok(offered.includes(k));
  const codes = caps.errors.map((e: { code: string }) => e.code);
  for (const code of ['invalid_request', 'unsupported_parameter', 'invalid_api_key', 'model_not_allowed', 'model_not_found', 'unsupported_endpoint', 'insufficient_quota', 'upstream_error']) {
    assert.ok(codes.includes(code), code);
  }
  assert.ok(caps.unsupported_endpoints.some((u: { path: string }) => u.path === '/realtime'));
  assert.ok('X-Service-Ignored-Parameters' in caps.headers.response);
});

test('GET /openapi.json is valid OpenAPI 3.1 with bearer security, the error shape and only offered paths', async () => {
  const doc = (await (await server.fetch('/v1/openapi.json')).json()) as Record<string, any>;
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.4.0');
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000));
  assert.deepEqual(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer' });
  assert.deepEqual(doc.security, [{ bearerAuth: [] }]);
  assert.deepEqual(doc.components.schemas.Error.required, ['error']);
  assert.ok(doc.paths['/models'].get);
  assert.ok(doc.paths['/models/{model}'].get.parameters.some((p: { name: string }) => p.name === 'model'));
  assert.ok(doc.paths['/images/generations'].post);
  const offered = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${p}`));
  for (const c of unofferedIn(offered)) assert.equal((doc.paths[c.path] as Record<string, unknown> | undefined)?.[c.method.toLowerCase()], undefined, `${c.method} ${c.path}`);
  assert.deepEqual(doc.paths['/capabilities'].get.security, [], 'discovery needs no key');
  assert.equal(doc.paths['/models'].get.responses['401'].content['application/json'].schema.$ref, '#/components/schemas/Error');
});

test('/openapi.json says how each stream ends, as it does: chat and text completions with data: [DONE], Responses with its last event', async () => {
  const doc = (await (await server.fetch('/v1/openapi.json')).json()) as Record<string, any>;
  const { key } = await server.createKey();
  const bodies: Record<string, Record<string, unknown>> = {
    '/chat/completions': { model: 'agent', messages: [{ role: 'user', content: 'hi' }] },
    '/completions': { model: 'agent', prompt: 'hi' },
    '/responses': { model: 'agent', input: 'hi' },
  };
  const streaming = Object.entries(doc.paths as Record<string, Record<string, any>>).filter(([, item]) => item.post?.responses['200'].content['text/event-stream']);
  assert.deepEqual(streaming.map(([p]) => p).sort(), Object.keys(bodies).sort(), 'every streaming operation is checked here');
  for (const [path, item] of streaming) {
    const description: string = item.post.responses['200'].content['text/event-stream'].schema.description;
    const res = await server.fetch(`/v1${path}`, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...bodies[path], stream: true }) });
    assert.equal(res.status, 200, path);
    const data = (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
    const endsWithDone = data.at(-1) === '[DONE]';
    assert.equal(/\[DONE\]/.test(description) && !/no data: \[DONE\]/.test(description), endsWithDone, `${path}: "${description}" but the stream ends with ${data.at(-1)?.slice(0, 80)}`);
    if (!endsWithDone) {
      const last = JSON.parse(data.at(-1)!) as { type: string };
      assert.ok(description.includes(last.type), `${path}: "${description}" does not name its last event, ${last.type}`);
    }
  }
});
