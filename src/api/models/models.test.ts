// Discovery with the official openai SDK: the list shows the chat models, or only the
// models a restricted key names; every model id of SPEC "Models" the key may use can be
// retrieved; anything else is 404 model_not_found.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { MODELS } from '../../contract/models.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

test('client.models.list() lists the chat models the key may use', async () => {
  const { key } = await server.createKey();
  const all = [];
  for await (const m of server.openai(key).models.list()) all.push(m);
  assert.deepEqual(all.map((m) => m.id), ['agent', 'agent-think']);
  for (const m of all) {
    assert.equal(m.object, 'model');
    assert.equal(typeof m.created, 'number');
    assert.equal(typeof m.owned_by, 'string');
  }
  const restricted = await server.createKey({ models: ['agent'] });
  const page = await server.openai(restricted.key).models.list();
  assert.deepEqual(page.data.map((m) => m.id), ['agent']);
});

test('client.models.retrieve() answers every model id of the Models table', async () => {
  const { key } = await server.createKey();
  const client = server.openai(key);
  assert.equal(MODELS.length, 26);
  for (const { id } of MODELS) {
    const m = await client.models.retrieve(id);
    assert.equal(m.id, id);
    assert.equal(m.object, 'model');
  }
});

test('a model the key may not use is 404, as absent as in the list', async () => {
  const { key } = await server.createKey({ models: ['agent'] });
  const client = server.openai(key);
  assert.equal((await client.models.retrieve('agent')).id, 'agent');
  await assert.rejects(client.models.retrieve('agent-think'), (e: unknown) => {
    assert.ok(e instanceof OpenAI.NotFoundError);
    assert.equal(e.code, 'model_not_found');
    assert.equal(e.param, 'model');
    return true;
  });
  await assert.rejects(client.models.retrieve('agent-embed'), (e: any) => e.status === 404 && e.code === 'model_not_found', 'a restriction covers every group');
  const embedToo = await server.createKey({ models: ['agent', 'agent-embed'] });
  assert.equal((await server.openai(embedToo.key).models.retrieve('agent-embed')).id, 'agent-embed');
});

test('an unknown model is 404 model_not_found', async () => {
  const { key } = await server.createKey();
  await assert.rejects(server.openai(key).models.retrieve('gpt-4o'), (e: unknown) => {
    assert.ok(e instanceof OpenAI.NotFoundError);
    assert.equal(e.code, 'model_not_found');
    assert.equal(e.type, 'invalid_request_error');
    return true;
  });
});
