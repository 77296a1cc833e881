// /v1/embeddings through an OpenAI-compatible upstream, end to end with the openai SDK:
// the resolved model, dimensions and user forwarded, base64 asked for whatever the
// client wants, token arrays sent as their text, the upstream's usage charged, a
// failure answered 502 with nothing charged; UPSTREAM_EMBEDDINGS=offline keeps the
// built-in embedder.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { toMicro } from '../../accounts/money.ts';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { encodeText } from '../../text/tokenizer.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let upstream: FakeUpstream;
let server: TestServer;
let failing = false;

/** Vector i of an answer: [i + 1, 2, 0, 0, ...] of `size` values, as the upstream would send it. */
const vector = (i: number, size: number) => Array.from({ length: size }, (_, k) => (k === 0 ? i + 1 : k === 1 ? 2 : 0));

before(async () => {
  upstream = await startFakeUpstream((req, res) => {
    if (failing) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'overloaded' } }));
      return;
    }
    const input = req.body.input as string[];
    const size = (req.body.dimensions as number | undefined) ?? (req.body.model === 'text-embedding-3-large' ? 3072 : 1536);
    const data = input.map((_, i) => {
      const v = vector(i, size);
      return { object: 'embedding', index: i, embedding: req.body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v };
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    // Its own tokenizer: a token a byte, plus two markers an input (as BERT-style models count).
    const tokens = input.reduce((n, t) => n + Buffer.byteLength(t) + 2, 0);
    res.end(JSON.stringify({ object: 'list', data, model: req.body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
  });
  server = await startTestServer({
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_API_KEY: 'sk-upstream-secret',
    UPSTREAM_MODEL_AGENT: 'upstream-small',
    UPSTREAM_MAX_RETRIES: '0',
  });
});
after(async () => {
  await server.close();
  await upstream.close();
});

async function credits(accountId: string) {
  const a = (await server.admin('GET', `/accounts/${accountId}`)).body;
  return { credits: toMicro(a.credits), reserved: a.reserved_credits };
}

test('the resolved model goes upstream with base64, dimensions and user; the answer echoes the model asked for and charges the upstream usage', async () => {
  const account = await server.createAccount(10);
  const { key } = await server.createKey({ account_id: account.id, permissions: { embeddings: true } });
  const client = server.openai(key);
  const before = upstream.requests.length;
  const r = (await client.embeddings.create({ model: 'agent-embed', input: ['one', 'two'], dimensions: 8, user: 'user-1', encoding_format: 'float' })) as OpenAI.CreateEmbeddingResponse & { svc: number };
  const sent = upstream.requests.slice(before);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.url, '/v1/embeddings');
  assert.equal(sent[0]!.headers.authorization, 'Bearer sk-upstream-secret');
  assert.deepEqual(sent[0]!.body, { model: 'text-embedding-3-small', input: ['one', 'two'], encoding_format: 'base64', dimensions: 8, user: 'user-1' });
  assert.equal(r.model, 'agent-embed');
  assert.deepEqual(r.data.map((d) => d.embedding), [vector(0, 8), vector(1, 8)]);
  assert.deepEqual(r.usage, { prompt_tokens: 10, total_tokens: 10 });
  assert.equal(toMicro(r.svc), Math.ceil(10 * 0.02 * 100));
  const after = await credits(account.id);
  assert.deepEqual(after, { credits: toMicro(10) - toMicro(r.svc), reserved: 0 });

  // The SDK's default (base64) gets the same values; a token array goes as its text.
  const large = await client.embeddings.create({ model: 'text-embedding-3-large', input: encodeText('hello there') });
  assert.equal(upstream.requests.at(-1)!.body.model, 'text-embedding-3-large');
  assert.deepEqual(upstream.requests.at(-1)!.body.input, ['hello there']);
  assert.deepEqual(large.data[0]!.embedding, vector(0, 3072));
});

test('an upstream failure is 502 upstream_error and charges nothing; ada-002 with dimensions never reaches the upstream', async () => {
  const account = await server.createAccount(10);
  const { key } = await server.createKey({ account_id: account.id, permissions: { embeddings: true } });
  const client = server.openai(key);
  failing = true;
  try {
    await assert.rejects(client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }), (e: unknown) => e instanceof OpenAI.APIError && e.status === 502 && (e.error as { code?: string }).code === 'upstream_error');
  } finally {
    failing = false;
  }
  const before = upstream.requests.length;
  await assert.rejects(client.embeddings.create({ model: 'text-embedding-ada-002', input: 'x', dimensions: 4 }), (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'dimensions');
  assert.equal(upstream.requests.length, before);
  assert.deepEqual(await credits(account.id), { credits: toMicro(10), reserved: 0 });
});

test('UPSTREAM_EMBEDDINGS=offline: chat may go upstream, embeddings stay with the built-in embedder', async () => {
  const offline = await startTestServer({ UPSTREAM_BASE_URL: upstream.baseUrl, UPSTREAM_MODEL_AGENT: 'upstream-small', UPSTREAM_EMBEDDINGS: 'offline' });
  try {
    const { key } = await offline.createKey({ permissions: { embeddings: true } });
    const before = upstream.requests.length;
    const r = await offline.openai(key).embeddings.create({ model: 'agent-embed', input: 'kept local', encoding_format: 'float' });
    assert.equal(upstream.requests.length, before);
    assert.equal(r.data[0]!.embedding.length, 1536);
    const { key: plainKey } = await server.createKey({ permissions: { embeddings: true } });
    const local = await server.openai(plainKey).embeddings.create({ model: 'agent-embed', input: 'kept local', encoding_format: 'float' });
    assert.notDeepEqual(local.data[0]!.embedding, r.data[0]!.embedding, 'the other server went upstream');
  } finally {
    await offline.close();
  }
});
