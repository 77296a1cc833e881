// The gateway root against a fake aggregator in OpenRouter's shapes (test/helpers/
// fake-aggregator.ts): byte-faithful forwarding both ways, the switches, credits reserved
// before and settled to the reported (or late) cost, and the service-answered endpoints
// agreeing with the ledger.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { startFakeAggregator, type FakeAggregator } from '../../../test/helpers/fake-aggregator.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const ROOT = '/api/gateway/v1';
const UPSTREAM_KEY = 'sk-or-v1-upstream-secret-0123456789';
const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Polls until `fn` returns a value (the activity log and late costs land a little after the answer). */
async function eventually<T>(fn: () => Promise<T | undefined | null | false>, what: string, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('gateway', () => {
  let fake: FakeAggregator;
  let server: TestServer;
  let key: string;
  let accountId: string;

  before(async () => {
    fake = await startFakeAggregator({ apiKey: UPSTREAM_KEY, generationNotFoundLookups: 0 });
    server = await startTestServer({
      GATEWAY_UPSTREAM_URL: fake.url,
      GATEWAY_UPSTREAM_KEY: UPSTREAM_KEY,
      GATEWAY_X_TITLE: 'agent-api tests',
      GATEWAY_LATE_COST_RETRY_MS: '50',
      GATEWAY_LATE_COST_WINDOW_MS: '60000',
      AGENT_API_ACCOUNT_CONCURRENCY: '64',
    });
    // Enough credits for reservations at a model's context length (an image model's 32k tokens at $40/M is 128 credits).
    const account = await server.createAccount(100_000);
    const made = await server.createKey({ account_id: account.id, permissions: { ai_gateway: true, embeddings: true, audio: true, image_generation: true } });
    key = made.key;
    accountId = made.account_id;
  });
  after(async () => {
    await server?.close();
    await fake?.close();
  });

  const post = (path: string, body: unknown, k = key, headers: Record<string, string> = {}) =>
    server.fetch(ROOT + path, { method: 'POST', key: k, headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  async function balance(id = accountId): Promise<number> {
    const r = await server.admin('GET', `/accounts/${id}`);
    return r.body.credits;
  }

  test('a chat completion: the body goes upstream unchanged with the upstream key; the answer comes back byte for byte with X-Generation-Id', async () => {
    fake.clear();
    // Odd spacing and key order: bytes, not a re-serialisation, must arrive.
    const body = '{ "messages":[{"role":"user","content":"hello  there"}],   "model":"openai/gpt-4o-mini", "max_tokens": 50 }';
    const res = await post('/chat/completions', body, key, { 'x-custom-thing': 'kept', 'http-referer': 'https://caller.example' });
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200);
    const got = fake.received.find((r) => r.path === '/api/v1/chat/completions')!;
    assert.equal(got.body.toString(), body);
    assert.equal(got.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.ok(!JSON.stringify(got.rawHeaders).includes(key), 'the caller key never leaves');
    assert.equal(got.headers['x-custom-thing'], 'kept');
    assert.equal(got.headers['x-title'], 'agent-api tests');
    // Asked for plain bytes, so the tee can read the usage (clients send gzip, deflate).
    assert.equal(got.headers['accept-encoding'], 'identity');
    const sent = fake.sent.get(got.generationId!)!;
    assert.equal(sha(bytes), sent.sha256);
    assert.equal(res.headers.get('x-generation-id') ?? JSON.parse(bytes.toString()).id, got.generationId);
    assert.match(res.headers.get('x-request-id')!, /^req_/);
    assert.ok(res.headers.get('x-ratelimit-limit-requests'));
  });

  test('a stream passes through byte for byte: keep-alive comments, the usage chunk and [DONE]; the charge is the reported cost', async () => {
    fake.clear();
    const before = await balance();
    const res = await post('/chat/completions', { model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'stream please' }] });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /text\/event-stream/);
    const bytes = Buffer.from(await res.arrayBuffer());
    const got = fake.received.find((r) => r.path === '/api/v1/chat/completions')!;
    const sent = fake.sent.get(got.generationId!)!;
    assert.equal(sha(bytes), sent.sha256);
    const text = bytes.toString();
    assert.match(text, /^: OPENROUTER PROCESSING/m);
    assert.ok(text.trimEnd().endsWith('data: [DONE]'));
    assert.ok(sent.reportedCost! > 0);
    const charged = before - (await balance());
    // Credits per dollar is 100 by default; balances are in credits.
    assert.ok(Math.abs(charged - sent.reportedCost! * server.config.creditsPerUsd) < 1e-6, `charged ${charged} for a cost of ${sent.reportedCost}`);
    const gen = await (await server.fetch(`${ROOT}/generation?id=${got.generationId}`, { key })).json();
    assert.equal(gen.data.id, got.generationId);
    assert.equal(gen.data.streamed, true);
    assert.equal(gen.data.finish_reason, 'stop');
    assert.ok(Math.abs(gen.data.total_cost - sent.reportedCost!) < 1e-9);
  });

  test('every forwarded endpoint is byte-faithful both ways', async () => {
    const cases: [string, string, unknown][] = [
      ['POST', '/completions', { model: 'openai/gpt-4o-mini', prompt: 'once upon', max_tokens: 20 }],
      ['POST', '/completions', { model: 'openai/gpt-4o-mini', prompt: 'once upon', stream: true }],
      ['POST', '/embeddings', { model: 'openai/text-embedding-3-small', input: ['a', 'b'] }],
      ['POST', '/audio/speech', { model: 'openai/gpt-4o-mini-tts', input: 'hello', voice: 'alloy' }],
      ['POST', '/audio/transcriptions', { model: 'openai/whisper-1', input_audio: { data: Buffer.from('RIFF....WAVE').toString('base64'), format: 'wav' } }],
      ['POST', '/images', { model: 'openai/gpt-image-1', prompt: 'a cat' }],
      ['GET', '/models?category=programming', undefined],
      ['GET', '/models/openai/gpt-4o-mini/endpoints', undefined],
    ];
    for (const [method, path, body] of cases) {
      fake.clear();
      const raw = body === undefined ? undefined : JSON.stringify(body);
      const res = await server.fetch(ROOT + path, { method, key, ...(raw ? { body: raw, headers: { 'content-type': 'application/json' } } : {}) });
      const bytes = Buffer.from(await res.arrayBuffer());
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${bytes.toString().slice(0, 300)}`);
      const got = fake.received.find((r) => r.url === `/api/v1${path}`);
      assert.ok(got, `${path} reached the fake at the same path and query`);
      assert.equal(got.method, method);
      if (raw) assert.equal(got.body.toString(), raw, `${path} body unchanged`);
      assert.equal(got.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
      await got.done;
      assert.equal(sha(bytes), got.response.sha256, `${path}: what the client read is what the fake sent`);
    }
  });

  test("the upstream's errors pass through with their status and body; nothing is charged", async () => {
    for (const status of [402, 429, 502]) {
      fake.clear();
      const res = await post('/chat/completions', { model: `fake/error-${status}`, messages: [{ role: 'user', content: 'x' }] });
      const bytes = Buffer.from(await res.arrayBuffer());
      assert.equal(res.status, status);
      const got = fake.received.find((r) => r.path === '/api/v1/chat/completions')!;
      await got.done;
      assert.equal(sha(bytes), got.response.sha256);
      assert.equal(JSON.parse(bytes.toString()).error.code, status);
      // Its own activity row (the account's balance may move meanwhile: earlier calls' late costs land).
      const row = await eventually(async () => (await server.admin('GET', `/activity?request_id=${res.headers.get('x-request-id')}`)).body.data[0], 'the activity row');
      assert.equal(row.status, status);
      assert.equal(Number(row.credits_settled), 0);
      assert.ok(Number(row.credits_reserved) > 0, 'it was reserved for, then released');
    }
  });

  test('a mid-stream error event reaches the client as sent', async () => {
    fake.clear();
    const res = await post('/chat/completions', { model: 'fake/mid-stream-error', stream: true, messages: [{ role: 'user', content: 'x' }] });
    const bytes = Buffer.from(await res.arrayBuffer());
    const got = fake.received.find((r) => r.path === '/api/v1/chat/completions')!;
    await got.done;
    assert.equal(sha(bytes), got.response.sha256);
    assert.match(bytes.toString(), /"error"/);
  });

  test('without the AI gateway switch: 403 gateway_not_allowed, nothing forwarded; family switches: 403 model_not_allowed', async () => {
    fake.clear();
    const { key: plain } = await server.createKey({});
    let res = await post('/chat/completions', { model: 'openai/gpt-4o-mini', messages: [] }, plain);
    assert.equal(res.status, 403);
    const body = await res.json();
    assert.equal(body.error.code, 'gateway_not_allowed');
    assert.equal(body.error.type, 'permission_error');
    res = await server.fetch(`${ROOT}/key`, { key: plain });
    assert.equal(res.status, 403);
    const { key: chatOnly } = await server.createKey({ permissions: { ai_gateway: true } });
    for (const [path, body] of [
      ['/embeddings', { model: 'openai/text-embedding-3-small', input: 'a' }],
      ['/audio/speech', { model: 'openai/gpt-4o-mini-tts', input: 'a', voice: 'alloy' }],
      ['/audio/transcriptions', { model: 'openai/whisper-1', input_audio: { data: 'AAAA', format: 'wav' } }],
      ['/images', { model: 'openai/gpt-image-1', prompt: 'a' }],
    ] as const) {
      res = await post(path, body, chatOnly);
      assert.equal(res.status, 403, path);
      assert.equal((await res.json()).error.code, 'model_not_allowed', path);
    }
    assert.equal(fake.received.filter((r) => r.method === 'POST').length, 0, 'nothing reached the fake');
  });

  test('Moderate requests: a flagged input is refused before forwarding', async () => {
    fake.clear();
    const { key: moderated } = await server.createKey({ permissions: { ai_gateway: true, moderate: true } });
    const res = await post('/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'I will kill you and murder your whole family with a gun' }] }, moderated);
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error.code, 'content_flagged');
    assert.equal(body.error.param, 'messages[0].content');
    const ok = await post('/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'what a nice day' }] }, moderated);
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
    assert.equal(fake.received.filter((r) => r.path === '/api/v1/chat/completions').length, 1);
  });

  test('an account that cannot cover the reservation: 429 insufficient_quota, no request reaches the fake', async () => {
    fake.clear();
    const account = await server.createAccount(0.001);
    const { key: poor } = await server.createKey({ account_id: account.id, permissions: { ai_gateway: true } });
    const res = await post('/chat/completions', { model: 'openai/gpt-4o-mini', max_tokens: 100_000, messages: [{ role: 'user', content: 'x' }] }, poor);
    assert.equal(res.status, 429);
    assert.equal((await res.json()).error.code, 'insufficient_quota');
    assert.equal(fake.received.filter((r) => r.method === 'POST').length, 0);
  });

  test('50 concurrent streams on a small balance: never below zero, and the charge equals the costs the fake reported', async () => {
    fake.clear();
    // Each stream reserves its input and 1,000 output tokens at $0.0000006: about 0.06 credits; 1 credit covers some, not all.
    const account = await server.createAccount(1);
    const { key: small } = await server.createKey({ account_id: account.id, permissions: { ai_gateway: true } });
    const results = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const res = await post('/chat/completions', { model: 'openai/gpt-4o-mini', stream: true, max_tokens: 1000, messages: [{ role: 'user', content: 'count' }] }, small);
        await res.arrayBuffer();
        return res.status;
      }),
    );
    assert.ok(results.every((s) => s === 200 || s === 429), results.join(','));
    const left = await balance(account.id);
    assert.ok(left >= 0, `balance ${left}`);
    const reached = fake.received.filter((r) => r.path === '/api/v1/chat/completions');
    assert.equal(reached.length, results.filter((s) => s === 200).length);
    const costs = reached.reduce((sum, r) => sum + fake.sent.get(r.generationId!)!.reportedCost!, 0);
    const charged = 1 - left;
    assert.ok(Math.abs(charged - costs * server.config.creditsPerUsd) < 1e-4, `charged ${charged}, fake costs ${costs}`);
  });

  test('a cost the answer did not carry is settled late from /generation (which 404s at first)', async () => {
    fake.clear();
    fake.setBehavior((r) => (r.path.endsWith('/chat/completions') ? { reportCost: false, generationNotFoundLookups: 3, cost: 0.0123 } : undefined));
    try {
      const res = await post('/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'late' }] });
      await res.arrayBuffer();
      const got = fake.received.find((r) => r.path === '/api/v1/chat/completions')!;
      const gen = await eventually(async () => {
        const g = await (await server.fetch(`${ROOT}/generation?id=${got.generationId}`, { key })).json();
        return Math.abs(g.data.total_cost - 0.0123) < 1e-9 ? g : null;
      }, 'the late cost');
      assert.ok(fake.received.filter((r) => r.path === '/api/v1/generation').length >= 4, 'the 404s were retried');
      const row = await server.admin('GET', `/activity?request_id=${gen.data.request_id}`);
      const entry = row.body.data[0];
      assert.ok(Math.abs(entry.credits_settled - 0.0123 * server.config.creditsPerUsd) < 1e-6);
    } finally {
      fake.setBehavior(undefined);
    }
  });

  test('a client that goes away aborts the upstream request', async () => {
    fake.clear();
    const ac = new AbortController();
    const res = await post('/chat/completions', { model: 'fake/slow', stream: true, messages: [{ role: 'user', content: 'slow' }] }, key);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    ac.abort();
    const got = fake.received.find((r) => r.path === '/api/v1/chat/completions')!;
    await got.done;
    assert.equal(got.aborted, true);
    const gen = await eventually(async () => {
      const r = await server.fetch(`${ROOT}/generation?id=${got.generationId}`, { key });
      const g = r.status === 200 ? await r.json() : null;
      return g?.data.cancelled ? g : null;
    }, 'the cancelled row');
    assert.equal(gen.data.streamed, true);
  });

  test('/key, /credits and /generation agree with the ledger; another key gets 404 for this key\'s generation', async () => {
    const account = await server.createAccount(5);
    const { key: a } = await server.createKey({ account_id: account.id, name: 'key A', permissions: { ai_gateway: true }, limits: [{ metric: 'credits', period: 'day', max: 2 }] });
    const { key: b } = await server.createKey({ account_id: account.id, permissions: { ai_gateway: true } });
    fake.clear();
    const res = await post('/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'bill me' }] }, a);
    await res.arrayBuffer();
    const got = fake.received.find((r) => r.path === '/api/v1/chat/completions')!;
    const cost = fake.sent.get(got.generationId!)!.reportedCost!;
    const keyInfo = await (await server.fetch(`${ROOT}/key`, { key: a })).json();
    assert.equal(keyInfo.data.label, 'key A');
    assert.ok(Math.abs(keyInfo.data.usage - cost) < 1e-9);
    assert.ok(Math.abs(keyInfo.data.usage_daily - cost) < 1e-9);
    assert.equal(keyInfo.data.limit, 2 / server.config.creditsPerUsd);
    assert.equal(keyInfo.data.limit_reset, 'daily');
    assert.ok(Math.abs(keyInfo.data.limit_remaining - (keyInfo.data.limit - cost)) < 1e-9);
    assert.equal(keyInfo.data.is_free_tier, false);
    assert.ok(!JSON.stringify(keyInfo).includes(a));
    const credits = await (await server.fetch(`${ROOT}/credits`, { key: b })).json();
    const left = await balance(account.id);
    assert.ok(Math.abs(credits.data.total_credits - 5 / server.config.creditsPerUsd) < 1e-9);
    assert.ok(Math.abs(credits.data.total_credits - credits.data.total_usage - left / server.config.creditsPerUsd) < 1e-9);
    const mine = await server.fetch(`${ROOT}/generation?id=${got.generationId}`, { key: a });
    assert.equal(mine.status, 200);
    const theirs = await server.fetch(`${ROOT}/generation?id=${got.generationId}`, { key: b });
    assert.equal(theirs.status, 404);
    const unknown = await server.fetch(`${ROOT}/generation?id=gen-0-nothing`, { key: a });
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).error.param, 'id');
  });

  test('the openai SDK works unchanged through the gateway: chat, completions, embeddings, speech', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: server.origin + ROOT, maxRetries: 0 });
    const chat = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    assert.ok(chat.choices[0]!.message.content);
    const stream = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    assert.ok(text.length > 0);
    const completion = await client.completions.create({ model: 'openai/gpt-4o-mini', prompt: 'say' });
    assert.ok(completion.choices[0]!.text);
    const emb = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'hello' });
    assert.ok(emb.data[0]!.embedding.length > 0);
    const speech = await client.audio.speech.create({ model: 'openai/gpt-4o-mini-tts', input: 'hello', voice: 'alloy' });
    assert.ok((await speech.arrayBuffer()).byteLength > 0);
  });

  test('the activity row names the root and keeps the generation id', async () => {
    fake.clear();
    const res = await post('/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'log me' }] });
    const requestId = res.headers.get('x-request-id')!;
    await res.arrayBuffer();
    const got = fake.received.find((r) => r.path === '/api/v1/chat/completions')!;
    const row = await eventually(async () => {
      const r = await server.admin('GET', `/activity?request_id=${requestId}`);
      return (r.body.data as any[] | undefined)?.[0];
    }, 'the activity row');
    assert.equal(row.endpoint, `${ROOT}/chat/completions`);
    assert.equal(row.model, 'openai/gpt-4o-mini');
    const gen = await (await server.fetch(`${ROOT}/generation?id=${requestId}`, { key })).json();
    assert.equal(gen.data.id, got.generationId);
  });
});

describe('gateway without an upstream', () => {
  test('forwarding answers 502 upstream_error saying what to configure; /credits still answers', async () => {
    const server = await startTestServer();
    try {
      const { key } = await server.createKey({ permissions: { ai_gateway: true } });
      const res = await server.fetch(`${ROOT}/chat/completions`, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: '{"model":"x","messages":[]}' });
      assert.equal(res.status, 502);
      const body = await res.json();
      assert.equal(body.error.code, 'upstream_error');
      assert.match(body.error.message, /GATEWAY_UPSTREAM_URL/);
      assert.equal((await server.fetch(`${ROOT}/credits`, { key })).status, 200);
      const doc = await (await server.fetch(`${ROOT}/openapi.json`)).json();
      assert.equal(doc.info.version, '1.0.0');
      assert.ok(doc.paths['/key'] && doc.paths['/credits'] && doc.paths['/generation'] && doc.paths['/chat/completions']);
    } finally {
      await server.close();
    }
  });
});
