// POST /v1/embeddings with the official openai SDK on the built-in embedder, on the
// database the run selected: every model and its size, every input shape, base64 equal
// to the floats, dimensions as the normalized prefix, the refusals (ada-002 with
// dimensions, over 2,048 inputs, over 8,192 tokens, an unknown token id), usage, credits
// charged (and nothing for a refusal), the Embeddings switch, batch lines, and a
// 2,048 x 3,072 answer that never holds the event loop.
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { toMicro } from '../../accounts/money.ts';
import { countTokens, encodeText } from '../../text/tokenizer.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let server: TestServer;
let client: OpenAI;
let key: string;
before(async () => {
  server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20' });
  key = (await server.createKey({ permissions: { embeddings: true, files: true } })).key;
  client = server.openai(key);
});
after(() => server.close());

const post = (body: unknown, apiKey = key) =>
  server.fetch('/v1/embeddings', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Little-endian float32 values of a base64 string. */
function floats(base64: string): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

type Billed = OpenAI.CreateEmbeddingResponse & { svc: number };

const norm = (v: ArrayLike<number>) => Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0));

async function balance(accountId: string): Promise<{ credits: number; reserved: number }> {
  const a = (await server.admin('GET', `/accounts/${accountId}`)).body;
  return { credits: toMicro(a.credits), reserved: a.reserved_credits };
}

async function refused(promise: Promise<unknown>, status: number, param: string | null, message?: RegExp) {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof OpenAI.APIError, String(e));
    assert.equal(e.status, status, e.message);
    assert.equal(e.param ?? null, param, e.message);
    if (message) assert.match(e.message, message);
    return true;
  });
}

describe('models and inputs', () => {
  test('every model answers with its size, echoing the model asked for; unit vectors; indices in order', async () => {
    const sizes = { 'agent-embed': 1536, 'agent-embed-large': 3072, 'text-embedding-3-small': 1536, 'text-embedding-3-large': 3072, 'text-embedding-ada-002': 1536 };
    for (const [model, size] of Object.entries(sizes)) {
      const r = await client.embeddings.create({ model, input: ['a cat on a mat', 'stock markets fell'] });
      assert.equal(r.object, 'list');
      assert.equal(r.model, model);
      assert.deepEqual(r.data.map((d) => [d.object, d.index, d.embedding.length]), [['embedding', 0, size], ['embedding', 1, size]]);
      for (const d of r.data) assert.ok(Math.abs(norm(d.embedding) - 1) < 1e-5);
    }
    // An alias runs its model: the same vectors.
    const alias = await client.embeddings.create({ model: 'agent-embed-large', input: 'same text' });
    const target = await client.embeddings.create({ model: 'text-embedding-3-large', input: 'same text' });
    assert.deepEqual(alias.data[0]!.embedding, target.data[0]!.embedding);
    const unknown = await post({ model: 'text-embedding-4', input: 'x' });
    assert.equal(unknown.status, 404);
  });

  test('a string, a list of strings, a token array and a list of token arrays: tokens read as the text they encode', async () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    const ids = encodeText(text);
    const one = await client.embeddings.create({ model: 'agent-embed', input: text, encoding_format: 'float' });
    const tokens = await client.embeddings.create({ model: 'agent-embed', input: ids, encoding_format: 'float' });
    const list = await client.embeddings.create({ model: 'agent-embed', input: [text, 'other'], encoding_format: 'float' });
    const tokenLists = await client.embeddings.create({ model: 'agent-embed', input: [ids, encodeText('other')], encoding_format: 'float' });
    assert.deepEqual(tokens.data[0]!.embedding, one.data[0]!.embedding);
    assert.deepEqual(list.data[0]!.embedding, one.data[0]!.embedding);
    assert.deepEqual(tokenLists.data.map((d) => d.embedding), list.data.map((d) => d.embedding));
    assert.notDeepEqual(list.data[1]!.embedding, list.data[0]!.embedding);
    // usage: o200k tokens of every input.
    assert.deepEqual(one.usage, { prompt_tokens: countTokens(text), total_tokens: countTokens(text) });
    assert.equal(tokens.usage.prompt_tokens, ids.length);
    const both = countTokens(text) + countTokens('other');
    assert.deepEqual(list.usage, { prompt_tokens: both, total_tokens: both });
    assert.equal(tokenLists.usage.prompt_tokens, both);
  });

  test('base64 is the little-endian float32 bytes of exactly the float vector (and the SDK default decodes it)', async () => {
    const input = ['vectors as base64', 'and as floats'];
    const asFloats = await client.embeddings.create({ model: 'text-embedding-3-large', input, encoding_format: 'float' });
    const res = await post({ model: 'text-embedding-3-large', input, encoding_format: 'base64' });
    assert.equal(res.status, 200);
    const raw = (await res.json()) as { data: { embedding: string }[] };
    for (const [i, d] of raw.data.entries()) {
      assert.equal(typeof d.embedding, 'string');
      const decoded = floats(d.embedding);
      assert.equal(decoded.length, 3072);
      assert.deepEqual(Array.from(decoded), asFloats.data[i]!.embedding, 'exactly the same values');
    }
    // The SDK asks for base64 when no format is given and decodes it.
    const byDefault = await client.embeddings.create({ model: 'text-embedding-3-large', input });
    assert.deepEqual(byDefault.data.map((d) => d.embedding), asFloats.data.map((d) => d.embedding));
  });

  test('dimensions: a unit vector equal to the normalized prefix of the full one', async () => {
    const input = 'Shortened embeddings keep the first values of the full vector and normalize them again, as text-embedding-3 does with its Matryoshka training.';
    for (const [model, dims] of [['text-embedding-3-small', 256], ['agent-embed-large', 1024], ['agent-embed', 1536]] as const) {
      const full = (await client.embeddings.create({ model, input, encoding_format: 'float' })).data[0]!.embedding;
      const short = await client.embeddings.create({ model, input, dimensions: dims, encoding_format: 'float' });
      const v = short.data[0]!.embedding;
      assert.equal(v.length, dims);
      assert.ok(Math.abs(norm(v) - 1) < 1e-5, `unit length, got ${norm(v)}`);
      const prefix = full.slice(0, dims);
      const n = norm(prefix);
      for (let i = 0; i < dims; i++) assert.ok(Math.abs(v[i]! - prefix[i]! / n) < 1e-6, `value ${i}`);
      const b64 = await client.embeddings.create({ model, input, dimensions: dims });
      assert.deepEqual(b64.data[0]!.embedding, v);
    }
    const one = await client.embeddings.create({ model: 'text-embedding-3-large', input, dimensions: 1, encoding_format: 'float' });
    assert.equal(one.data[0]!.embedding.length, 1);
    // Every prefix carries the whole text: even a short one of a short input is a unit vector.
    for (const dims of [1, 2, 3, 8, 50]) {
      const v = (await client.embeddings.create({ model: 'agent-embed', input: 'two words', dimensions: dims, encoding_format: 'float' })).data[0]!.embedding;
      assert.ok(Math.abs(norm(v) - 1) < 1e-5, `dimensions ${dims}: unit length, got ${norm(v)}`);
    }
  });
});

describe('refusals', () => {
  test('ada-002 with dimensions, dimensions over the model size, over 2048 inputs, over 8192 tokens, an unknown token id: 400 naming the field', async () => {
    await refused(client.embeddings.create({ model: 'text-embedding-ada-002', input: 'x', dimensions: 512 }), 400, 'dimensions', /does not support specifying dimensions/);
    await refused(client.embeddings.create({ model: 'text-embedding-3-small', input: 'x', dimensions: 2048 }), 400, 'dimensions', /at most 1536/);
    await refused(client.embeddings.create({ model: 'text-embedding-3-large', input: 'x', dimensions: 3073 }), 400, 'dimensions');
    await refused(client.embeddings.create({ model: 'agent-embed', input: 'x', dimensions: 0 }), 400, 'dimensions');
    await refused(client.embeddings.create({ model: 'agent-embed', input: Array.from({ length: 2049 }, () => 'x') }), 400, 'input', /2048/);
    await refused(client.embeddings.create({ model: 'agent-embed', input: Array.from({ length: 2049 }, () => [1]) }), 400, 'input', /2048/);
    // 2048 is fine.
    assert.equal((await client.embeddings.create({ model: 'agent-embed', input: Array.from({ length: 2048 }, () => 'x') })).data.length, 2048);
    await refused(client.embeddings.create({ model: 'agent-embed', input: 'word '.repeat(8200) }), 400, 'input', /8192 tokens/);
    await refused(client.embeddings.create({ model: 'agent-embed', input: ['fine', 'word '.repeat(8200)] }), 400, 'input', /input\[1\].*8192 tokens/);
    await refused(client.embeddings.create({ model: 'agent-embed', input: Array.from({ length: 8193 }, () => 1) }), 400, 'input', /8192 tokens/);
    // 8192 tokens exactly are fine.
    assert.equal((await client.embeddings.create({ model: 'agent-embed', input: Array.from({ length: 8192 }, () => 1) })).usage.prompt_tokens, 8192);
    await refused(client.embeddings.create({ model: 'agent-embed', input: [[1, 2, 199998]] }), 400, 'input', /199998/);
    await refused(client.embeddings.create({ model: 'agent-embed', input: '' }), 400, 'input');
    // The item at fault is named, in the shape the input has.
    await refused(client.embeddings.create({ model: 'agent-embed', input: [1, 2, -1] }), 400, 'input[2]', /token id/);
    await refused(client.embeddings.create({ model: 'agent-embed', input: [[1], []] }), 400, 'input[1]', /cannot be empty/);
    await refused(client.embeddings.create({ model: 'agent-embed', input: ['a', 1] as never }), 400, 'input[1]', /expected string/);
    await refused(client.embeddings.create({ model: 'agent-embed', input: 'x', encoding_format: 'int8' as never }), 400, 'encoding_format');
  });

  test('a key without the Embeddings switch gets 403', async () => {
    const { key: plain } = await server.createKey();
    await refused(server.openai(plain).embeddings.create({ model: 'agent-embed', input: 'x' }), 403, null);
    const res = await post({ model: 'agent-embed', input: 'x' }, plain);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'model_not_allowed');
  });
});

describe('credits', () => {
  test('the balance drops by svc, the input tokens at the model price; a refused request charges nothing; out of credits is 429', async () => {
    const account = await server.createAccount(1);
    const { key: own } = await server.createKey({ account_id: account.id, permissions: { embeddings: true } });
    const c = server.openai(own);
    const start = await balance(account.id);

    const input = Array.from({ length: 50 }, (_, i) => `sentence ${i} about the weather in spring`);
    const r = (await c.embeddings.create({ model: 'text-embedding-3-large', input })) as Billed;
    // $0.13 per million tokens at 100 credits a dollar, rounded up to a micro-credit.
    assert.equal(toMicro(r.svc), Math.ceil(r.usage.prompt_tokens * 0.13 * 100));
    let now = await balance(account.id);
    assert.equal(start.credits - now.credits, toMicro(r.svc));
    assert.equal(now.reserved, 0);

    const small = (await c.embeddings.create({ model: 'agent-embed', input: 'price of the small model' })) as Billed;
    assert.equal(toMicro(small.svc), Math.ceil(small.usage.prompt_tokens * 0.02 * 100));
    const ada = (await c.embeddings.create({ model: 'text-embedding-ada-002', input: 'price of ada' })) as Billed;
    assert.equal(toMicro(ada.svc), Math.ceil(ada.usage.prompt_tokens * 0.1 * 100));

    const before = await balance(account.id);
    await refused(c.embeddings.create({ model: 'text-embedding-ada-002', input, dimensions: 8 }), 400, 'dimensions');
    await refused(c.embeddings.create({ model: 'agent-embed', input: ['ok', 'word '.repeat(9000)] }), 400, 'input');
    assert.deepEqual(await balance(account.id), before, 'refusals charge nothing');

    // An account that cannot cover the input is refused before anything runs.
    const poor = await server.createAccount(0.000001);
    const { key: poorKey } = await server.createKey({ account_id: poor.id, permissions: { embeddings: true } });
    await refused(server.openai(poorKey).embeddings.create({ model: 'text-embedding-3-large', input: 'word '.repeat(8000) }), 429, null);
    now = await balance(poor.id);
    assert.deepEqual(now, { credits: toMicro(0.000001), reserved: 0 });
  });
});

describe('batches and large answers', () => {
  test('a batch of /v1/embeddings lines completes with every output', async () => {
    const lines = [
      { custom_id: 'a', method: 'POST', url: '/v1/embeddings', body: { model: 'agent-embed', input: 'first line' } },
      { custom_id: 'b', method: 'POST', url: '/v1/embeddings', body: { model: 'text-embedding-3-large', input: ['two', 'inputs'], dimensions: 64 } },
      { custom_id: 'c', method: 'POST', url: '/v1/embeddings', body: { model: 'agent-embed', input: 'base64 line', encoding_format: 'base64' } },
      { custom_id: 'd', method: 'POST', url: '/v1/embeddings', body: { model: 'text-embedding-ada-002', input: 'x', dimensions: 8 } },
    ];
    const file = await client.files.create({ file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n')), 'embed.jsonl'), purpose: 'batch' });
    let batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' });
    for (let i = 0; i < 1_500 && !['completed', 'failed', 'cancelled', 'expired'].includes(batch.status); i++) {
      await new Promise((r) => setTimeout(r, 20));
      batch = await client.batches.retrieve(batch.id);
    }
    assert.equal(batch.status, 'completed', JSON.stringify(batch.errors));
    assert.deepEqual(batch.request_counts, { total: 4, completed: 3, failed: 1 });
    const out = (await (await client.files.content(batch.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(out.map((o) => o.custom_id), ['a', 'b', 'c']);
    const live = await client.embeddings.create({ model: 'agent-embed', input: 'first line', encoding_format: 'float' });
    assert.deepEqual(out[0].response.body.data[0].embedding, live.data[0]!.embedding);
    assert.equal(out[0].response.body.model, 'agent-embed');
    assert.deepEqual(out[1].response.body.data.map((d: { embedding: number[] }) => d.embedding.length), [64, 64]);
    assert.equal(Array.from(floats(out[2].response.body.data[0].embedding)).length, 1536);
    const errors = (await (await client.files.content(batch.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(errors[0].response.status_code, 400);
    assert.equal(errors[0].response.body.error.param, 'dimensions');
  });

  test('2048 inputs of 3072 values: the answer streams, and the event loop is never held long', async () => {
    const input = Array.from({ length: 2048 }, (_, i) => `sentence number ${i} about ${i % 2 ? 'cats' : 'the sea'} and ${i * 7}`);
    // The server runs in this process: the delay it causes shows here. The body is read
    // raw and parsed afterwards, so the client's own parse is not counted.
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const chunks: Buffer[] = [];
    let res: Response;
    try {
      res = await post({ model: 'text-embedding-3-large', input, encoding_format: 'float' });
      for await (const chunk of res.body!) chunks.push(Buffer.from(chunk));
    } finally {
      delay.disable();
    }
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('transfer-encoding'), 'chunked');
    const maxMs = delay.max / 1e6;
    // JSON.stringify of this answer alone holds it about 300 ms (denser vectors: seconds).
    assert.ok(maxMs < 200, `event loop held ${maxMs.toFixed(0)} ms`);
    const r = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { index: number; embedding: number[] }[]; usage: { prompt_tokens: number } };
    assert.equal(r.data.length, 2048);
    assert.deepEqual([...new Set(r.data.map((d) => d.embedding.length))], [3072]);
    assert.deepEqual(r.data.map((d) => d.index), input.map((_, i) => i));
    assert.equal(r.usage.prompt_tokens, input.reduce((n, t) => n + countTokens(t), 0));
    const same = await client.embeddings.create({ model: 'text-embedding-3-large', input: input[2047]!, encoding_format: 'float' });
    assert.deepEqual(r.data[2047]!.embedding, same.data[0]!.embedding);
  });
});
