// A key restricted to some models (admin `models`) may use only those, on every endpoint
// whose body names a model: chat, completions, responses (POST, streamed, background,
// input_tokens, compact, the WebSocket), embeddings and batch lines (checked when the
// batch is validated, and again as each line runs, through the same checkCall). Any other model is
// 403 model_not_allowed naming `model`, before anything runs or is charged. GET /models
// lists, and GET /models/{id} answers, only what the key may use.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import WebSocket from 'ws';
import { ALL_SWITCHES, startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const question = [{ role: 'user' as const, content: 'What is 2 + 2?' }];

/** A 403 model_not_allowed naming `model`. */
const notAllowed = (e: any) => e.status === 403 && e.code === 'model_not_allowed' && e.type === 'permission_error' && e.param === 'model';

/** The first event a WebSocket turn answers with. */
async function socketTurn(server: TestServer, key: string, body: Record<string, unknown>): Promise<any> {
  const ws = new WebSocket(`${server.baseURL.replace('http', 'ws')}/responses`, { headers: { authorization: `Bearer ${key}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const first = new Promise<any>((resolve) => ws.once('message', (d) => resolve(JSON.parse(String(d)))));
  ws.send(JSON.stringify({ type: 'response.create', ...body }));
  const event = await first;
  ws.close();
  return event;
}

describe("a key's model restriction", () => {
  let server: TestServer;
  let accountId: string;
  let onlyAgent: OpenAI;
  let onlyAgentKey: string;
  before(async () => {
    server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20' });
    accountId = (await server.createAccount(100)).id;
    onlyAgentKey = (await server.createKey({ account_id: accountId, permissions: ALL_SWITCHES, models: ['agent'] })).key;
    onlyAgent = server.openai(onlyAgentKey);
  });
  after(() => server.close());

  test('agent-think and the embedding models are 403 on every endpoint that takes a model; nothing is charged', async () => {
    const db = server.app.services.store.db;
    const charged = async () => (await db.selectFrom('credit_reservations').select('request_id').where('account_id', '=', accountId).execute()).length;
    const before = await charged();
    await assert.rejects(onlyAgent.chat.completions.create({ model: 'agent-think', messages: question }), notAllowed, 'chat');
    await assert.rejects(onlyAgent.chat.completions.create({ model: 'agent-think', messages: question, stream: true }), notAllowed, 'chat streamed');
    await assert.rejects(onlyAgent.completions.create({ model: 'agent-think', prompt: 'Say hi' }), notAllowed, 'completions');
    await assert.rejects(onlyAgent.responses.create({ model: 'agent-think', input: 'hi' }), notAllowed, 'responses');
    await assert.rejects(onlyAgent.responses.create({ model: 'agent-think', input: 'hi', stream: true }), notAllowed, 'responses streamed');
    await assert.rejects(onlyAgent.responses.create({ model: 'agent-think', input: 'hi', background: true }), notAllowed, 'background');
    await assert.rejects(onlyAgent.responses.inputTokens.count({ model: 'agent-think', input: 'hi' }), notAllowed, 'input_tokens');
    await assert.rejects(onlyAgent.responses.compact({ model: 'agent-think', input: 'hi' } as never), notAllowed, 'compact');
    for (const model of ['agent-embed', 'agent-embed-large', 'text-embedding-3-small', 'text-embedding-ada-002']) {
      await assert.rejects(onlyAgent.embeddings.create({ model, input: 'hello' }), notAllowed, model);
    }
    const ws = await socketTurn(server, onlyAgentKey, { model: 'agent-think', input: 'hi' });
    assert.equal(ws.type, 'error');
    assert.equal(ws.status, 403);
    assert.equal(ws.error.code, 'model_not_allowed');
    assert.equal(ws.error.param, 'model');
    assert.equal(await charged(), before, 'nothing reserved or charged');
    // The model it may use still works.
    assert.equal((await onlyAgent.chat.completions.create({ model: 'agent', messages: question })).model, 'agent');
  });

  test('a batch line naming another model fails the batch at validation, as any line a POST would refuse; nothing runs', async () => {
    const line = (id: string, url: string, body: Record<string, unknown>) => ({ custom_id: id, method: 'POST', url, body });
    const runBatch = async (endpoint: '/v1/chat/completions' | '/v1/embeddings', lines: unknown[]) => {
      const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
      const file = await onlyAgent.files.create({ file: await toFile(Buffer.from(text), 'lines.jsonl'), purpose: 'batch' });
      let batch = await onlyAgent.batches.create({ input_file_id: file.id, endpoint, completion_window: '24h' });
      for (let i = 0; i < 3_000 && !['completed', 'failed', 'cancelled', 'expired'].includes(batch.status); i++) {
        await pause(20);
        batch = await onlyAgent.batches.retrieve(batch.id);
      }
      return batch;
    };
    const chat = await runBatch('/v1/chat/completions', [
      line('ok', '/v1/chat/completions', { model: 'agent', messages: question }),
      line('think', '/v1/chat/completions', { model: 'agent-think', messages: question }),
    ]);
    assert.equal(chat.status, 'failed');
    assert.deepEqual(chat.errors?.data?.map((e) => [e.line, e.code, e.param]), [[2, 'model_not_allowed', 'body.model']]);
    const embed = await runBatch('/v1/embeddings', [line('e', '/v1/embeddings', { model: 'agent-embed', input: 'hello' })]);
    assert.equal(embed.status, 'failed');
    assert.deepEqual(embed.errors?.data?.map((e) => [e.line, e.code, e.param]), [[1, 'model_not_allowed', 'body.model']]);
  });

  test('a key naming an embedding model may embed with it (and only it); an unrestricted key may use every model', async () => {
    const { key } = await server.createKey({ account_id: accountId, permissions: ALL_SWITCHES, models: ['agent', 'agent-embed'] });
    const client = server.openai(key);
    assert.equal((await client.embeddings.create({ model: 'agent-embed', input: 'hello' })).model, 'agent-embed');
    await assert.rejects(client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' }), notAllowed, 'the alias is another id');
    const open = server.openai((await server.createKey({ account_id: accountId, permissions: ALL_SWITCHES })).key);
    assert.equal((await open.embeddings.create({ model: 'text-embedding-3-large', input: 'hello' })).model, 'text-embedding-3-large');
    assert.equal((await open.chat.completions.create({ model: 'agent-think', messages: question })).model, 'agent-think');
  });

  test('GET /models lists what the key may use; GET /models/{id} of anything else is 404', async () => {
    const { key } = await server.createKey({ account_id: accountId, permissions: ALL_SWITCHES, models: ['agent', 'agent-embed'] });
    const client = server.openai(key);
    assert.deepEqual((await client.models.list()).data.map((m) => m.id), ['agent', 'agent-embed']);
    assert.equal((await client.models.retrieve('agent-embed')).id, 'agent-embed');
    for (const id of ['agent-think', 'text-embedding-3-small', 'tts-1']) {
      await assert.rejects(client.models.retrieve(id), (e: any) => e.status === 404 && e.code === 'model_not_found' && e.param === 'model', id);
    }
    assert.deepEqual((await onlyAgent.models.list()).data.map((m) => m.id), ['agent']);
    await assert.rejects(onlyAgent.models.retrieve('agent-embed'), (e: any) => e.status === 404, 'not the key’s');
  });

  test('the admin API takes any model id of the Models table in a key’s models, and refuses others naming the entry', async () => {
    const ok = await server.admin('POST', '/keys', { account_id: accountId, name: 'embed only', models: ['text-embedding-3-large'] });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.models, ['text-embedding-3-large']);
    const bad = await server.admin('POST', '/keys', { account_id: accountId, name: 'x', models: ['agent', 'gpt-4o'] });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'models[1]');
  });
});
