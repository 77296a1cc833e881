// The fake aggregator against the real clients pointed straight at it: @openrouter/sdk (whose
// response schemas are strict about required fields, so passing them is the proof of the
// shapes), @openrouter/ai-sdk-provider with the AI SDK, and the openai SDK; plus the raw
// bytes of its streams, its errors, its late /generation, and what it records.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createOpenRouter } from '@openrouter/ai-sdk-provider';
import { OpenRouter } from '@openrouter/sdk';
import type { ChatResult, ChatStreamChunk } from '@openrouter/sdk/models';
import * as orErrors from '@openrouter/sdk/models/errors';
import { APICallError, generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { startFakeAggregator, type FakeAggregator } from './fake-aggregator.ts';

const KEY = 'sk-or-v1-fake-upstream-key-0123456789';
let fake: FakeAggregator;

before(async () => {
  fake = await startFakeAggregator({ apiKey: KEY });
});
after(async () => {
  await fake.close();
});

const sha = (b: Buffer | Uint8Array): string => createHash('sha256').update(b).digest('hex');
const last = () => {
  const r = fake.received.at(-1);
  assert.ok(r, 'the fake received a request');
  return r;
};
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${fake.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const get = (path: string) => fetch(`${fake.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Say hello.' }], ...extra });

/** chat.send answers a result or an event stream; these say which one the test expects. */
function result(x: unknown): ChatResult {
  assert.ok(!(x instanceof ReadableStream), 'a JSON answer');
  return x as ChatResult;
}
function chunks(x: unknown): AsyncIterable<ChatStreamChunk> {
  assert.ok(x instanceof ReadableStream, 'an event stream');
  return x as unknown as AsyncIterable<ChatStreamChunk>;
}

function sdk(): OpenRouter {
  return new OpenRouter({ apiKey: KEY, serverURL: fake.url, httpReferer: 'https://app.example.test', appTitle: 'Gateway tests', retryConfig: { strategy: 'none' } });
}

test('@openrouter/sdk: chat, streamed and not, passes its response validation; it sends the key, referer and title', async () => {
  const or = sdk();
  const res = result(await or.chat.send({ chatRequest: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }] } }));
  assert.equal(res.object, 'chat.completion');
  assert.match(res.id, /^gen-\d+-[A-Za-z0-9]{20}$/);
  assert.equal(res.choices[0]?.message.content, 'Hello from the fake aggregator.');
  assert.ok(res.usage && typeof res.usage.cost === 'number' && res.usage.cost > 0);
  const r = last();
  assert.equal(r.method, 'POST');
  assert.equal(r.path, '/api/v1/chat/completions');
  assert.equal(r.headers.authorization, `Bearer ${KEY}`);
  assert.equal(r.headers['http-referer'], 'https://app.example.test');
  assert.equal(r.headers['x-openrouter-title'], 'Gateway tests');
  assert.equal(r.headers['x-title'], undefined, 'the SDK sends X-OpenRouter-Title, not X-Title');
  assert.equal(r.headers.accept, 'application/json');
  assert.equal(r.response.headers['X-Generation-Id'], res.id);
  assert.equal(fake.sent.get(res.id), r.response);
  assert.equal(r.response.reportedCost, res.usage.cost);

  const stream = chunks(await or.chat.send({ chatRequest: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }], stream: true } }));
  let text = '';
  let cost: number | null | undefined;
  let finish: unknown;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.choices[0]?.finishReason) finish = chunk.choices[0].finishReason;
    if (chunk.usage) cost = chunk.usage.cost;
  }
  assert.equal(text, 'Hello from the fake aggregator.');
  assert.equal(finish, 'stop');
  assert.ok(typeof cost === 'number' && cost > 0);
  assert.equal(last().headers.accept, 'text/event-stream');
});

test('@openrouter/sdk: key, credits, generation, models, endpoints, embeddings, speech, transcription and images pass its validation', async () => {
  const or = sdk();
  const before = (await or.credits.getCredits()).data;
  assert.equal(last().path, '/api/v1/credits');
  const res = result(await or.chat.send({ chatRequest: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }] } }));

  const key = await or.apiKeys.getCurrentKeyMetadata();
  assert.equal(last().method, 'GET');
  assert.equal(last().path, '/api/v1/key');
  assert.equal(key.data.isFreeTier, false);
  assert.equal(key.data.limit, null);
  assert.ok(!key.data.label.includes(KEY), 'the label never shows the whole secret');

  const credits = await or.credits.getCredits();
  assert.equal(credits.data.totalCredits, 100);
  assert.ok(Math.abs(credits.data.totalUsage - before.totalUsage - (res.usage?.cost ?? 0)) < 1e-12, 'usage grows by what the generation cost');

  const gen = await or.generations.getGeneration({ id: res.id });
  assert.equal(last().path, '/api/v1/generation');
  assert.equal(last().query, `id=${res.id}`);
  assert.equal(gen.data.id, res.id);
  assert.equal(gen.data.totalCost, res.usage?.cost);
  assert.equal(gen.data.tokensCompletion, res.usage?.completionTokens);
  assert.equal(gen.data.streamed, false);

  const models: { id: string; pricing: { prompt: string } }[] = [];
  for await (const page of await or.models.list()) models.push(...page.result.data);
  assert.ok(models.some((m) => m.id === 'openai/gpt-4o-mini' && m.pricing.prompt === '0.00000015'));
  assert.ok(models.some((m) => m.id === 'openrouter/auto' && m.pricing.prompt === '-1'), 'a router has no price up front');

  const endpoints = await or.endpoints.list({ author: 'openai', slug: 'gpt-4o-mini' });
  assert.equal(last().path, '/api/v1/models/openai/gpt-4o-mini/endpoints');
  assert.equal(endpoints.data.endpoints[0]?.pricing.completion, '0.0000006');

  const emb = await or.embeddings.generate({ requestBody: { model: 'openai/text-embedding-3-small', input: 'hello' } });
  assert.ok(typeof emb === 'object' && Array.isArray(emb.data[0]?.embedding));

  const audio = await or.tts.createSpeech({ speechRequest: { model: 'openai/gpt-4o-mini-tts', input: 'Hello there.', voice: 'alloy', responseFormat: 'mp3' } });
  const bytes = Buffer.from(await new Response(audio).arrayBuffer());
  const speechReq = last();
  assert.equal(speechReq.path, '/api/v1/audio/speech');
  assert.equal(speechReq.headers.accept, 'audio/*');
  assert.equal(speechReq.response.headers['Content-Type'], 'audio/mpeg');
  assert.equal(sha(bytes), speechReq.response.sha256);

  const stt = await or.stt.createTranscription({ sttRequest: { model: 'openai/whisper-1', inputAudio: { data: Buffer.alloc(64000, 1).toString('base64'), format: 'wav' } } });
  assert.equal(stt.text, 'Hello from the fake aggregator.');
  assert.equal(stt.usage?.seconds, 2);
  assert.ok((stt.usage?.cost ?? 0) > 0);
  assert.deepEqual(JSON.parse(last().body.toString()).input_audio.format, 'wav');

  const img = await or.images.generate({ imageGenerationRequest: { model: 'openai/gpt-image-1', prompt: 'a red panda' } });
  assert.equal(last().path, '/api/v1/images');
  assert.ok(img && typeof img === 'object' && 'data' in img && img.data[0]?.b64Json !== undefined);
});

test('@openrouter/sdk: the mid-stream error event reaches the caller as a chunk; 402 and 502 become its typed errors', async () => {
  const or = sdk();
  const stream = chunks(await or.chat.send({ chatRequest: { model: 'fake/mid-stream-error', messages: [{ role: 'user', content: 'Say hello.' }], stream: true } }));
  const got: ChatStreamChunk[] = [];
  for await (const chunk of stream) got.push(chunk);
  const end = got.at(-1);
  assert.equal(end?.error?.code, 502);
  assert.equal(end?.choices[0]?.finishReason, 'error');
  assert.equal(got.filter((c) => c.choices[0]?.delta.content).length, 2);

  await assert.rejects(or.chat.send({ chatRequest: { model: 'fake/error-402', messages: [{ role: 'user', content: 'x' }] } }), (e: unknown) => {
    assert.ok(e instanceof orErrors.PaymentRequiredResponseError);
    assert.equal(e.statusCode, 402);
    assert.equal(e.error.code, 402);
    return true;
  });
  await assert.rejects(or.chat.send({ chatRequest: { model: 'fake/error-502', messages: [{ role: 'user', content: 'x' }] } }), (e: unknown) => {
    assert.ok(e instanceof orErrors.BadGatewayResponseError);
    assert.equal(e.error.metadata?.provider_name, 'FakeProvider');
    return true;
  });
});

test('@openrouter/ai-sdk-provider with ai 6: generateText and streamText, cost in the provider metadata', async () => {
  const openrouter = createOpenRouter({ apiKey: KEY, baseURL: fake.url, appName: 'Gateway tests', appUrl: 'https://app.example.test' });
  const gen = await generateText({ model: openrouter('openai/gpt-4o-mini'), prompt: 'Say hello.', maxRetries: 0 });
  assert.equal(gen.text, 'Hello from the fake aggregator.');
  assert.equal(gen.usage.outputTokens, 5);
  const meta = gen.providerMetadata?.openrouter as { usage?: { cost?: number }; provider?: string } | undefined;
  assert.ok((meta?.usage?.cost ?? 0) > 0);
  assert.equal(meta?.provider, 'FakeProvider');
  const r = last();
  assert.equal(r.path, '/api/v1/chat/completions');
  assert.equal(r.headers['x-openrouter-title'], 'Gateway tests');
  assert.equal(r.headers['http-referer'], 'https://app.example.test');
  // The AI SDK's own user-agent replaces the provider's `ai-sdk/openrouter/<version>`.
  assert.match(String(r.headers['user-agent']), /^ai\/6\./);

  const s = streamText({ model: openrouter('openai/gpt-4o-mini'), prompt: 'Say hello.', maxRetries: 0 });
  let text = '';
  for await (const t of s.textStream) text += t;
  assert.equal(text, 'Hello from the fake aggregator.');
  assert.equal((await s.usage).outputTokens, 5);
  assert.equal(await s.finishReason, 'stop');
  const smeta = (await s.providerMetadata)?.openrouter as { usage?: { cost?: number } } | undefined;
  assert.ok((smeta?.usage?.cost ?? 0) > 0);
  const body = JSON.parse(last().body.toString());
  assert.equal(body.stream, true);

  await assert.rejects(generateText({ model: openrouter('fake/error-402'), prompt: 'x', maxRetries: 0 }), (e: unknown) => {
    assert.ok(APICallError.isInstance(e));
    assert.equal(e.statusCode, 402);
    return true;
  });
});

test('openai SDK: chat (streamed and not), completions, embeddings and speech', async () => {
  const client = new OpenAI({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
  const c = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }] });
  assert.equal(c.choices[0]?.message.content, 'Hello from the fake aggregator.');
  assert.ok(((c.usage as unknown as { cost?: number }).cost ?? 0) > 0);
  assert.equal(last().path, '/api/v1/chat/completions');

  const stream = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }], stream: true, stream_options: { include_usage: true } });
  let text = '';
  let cost = 0;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) cost = (chunk.usage as unknown as { cost: number }).cost;
  }
  assert.equal(text, 'Hello from the fake aggregator.');
  assert.ok(cost > 0);

  const comp = await client.completions.create({ model: 'openai/gpt-4o-mini', prompt: 'Say hello.', max_tokens: 2 });
  assert.equal(last().path, '/api/v1/completions');
  assert.equal(comp.choices[0]?.text, 'Hello from');
  assert.equal(comp.choices[0]?.finish_reason, 'length');

  // The SDK asks for base64 by default and decodes it; the fake honours encoding_format.
  const e64 = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: ['alpha', 'beta'] });
  assert.equal(JSON.parse(last().body.toString()).encoding_format, 'base64');
  const ef = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: ['alpha', 'beta'], encoding_format: 'float' });
  assert.deepEqual(Array.from(e64.data[1]?.embedding ?? []), ef.data[1]?.embedding);
  assert.ok(((ef.usage as unknown as { cost?: number }).cost ?? 0) > 0);

  const speech = await client.audio.speech.create({ model: 'openai/gpt-4o-mini-tts', voice: 'alloy', input: 'Hello there.', response_format: 'mp3' });
  const bytes = Buffer.from(await speech.arrayBuffer());
  const id = speech.headers.get('x-generation-id');
  assert.ok(id);
  assert.equal(sha(bytes), fake.sent.get(id)?.sha256);
  assert.equal(bytes.length, 16 * 1024);
});

test('raw SSE bytes: keep-alive comments first, the usage chunk with cost, [DONE] last; the client reads exactly what the fake sent', async () => {
  fake.setBehavior(() => ({ keepAlives: 3 }));
  try {
    const res = await post('/chat/completions', chat('openai/gpt-4o-mini', { stream: true }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const id = res.headers.get('x-generation-id');
    assert.ok(id);
    const raw = Buffer.from(await res.arrayBuffer());
    const sent = fake.sent.get(id);
    assert.ok(sent);
    await last().done;
    assert.equal(sent.complete, true);
    assert.equal(sha(raw), sent.sha256);
    const text = raw.toString();
    assert.ok(text.startsWith(': OPENROUTER PROCESSING\n\n'.repeat(3)));
    assert.ok(text.endsWith('\n\ndata: [DONE]\n\n'));
    const events = text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
    const usageChunk = events.at(-1);
    assert.deepEqual(usageChunk.choices, []);
    assert.equal(usageChunk.usage.cost, fake.generations.get(id)?.total_cost);
    assert.equal(usageChunk.usage.total_tokens, usageChunk.usage.prompt_tokens + usageChunk.usage.completion_tokens);
    assert.ok(events.every((e) => e.id === id && e.object === 'chat.completion.chunk' && e.provider === 'FakeProvider'));
    assert.equal(events.at(-2).choices[0].finish_reason, 'stop');
  } finally {
    fake.setBehavior(undefined);
  }
});

test('mid-stream error: a data chunk with a top-level error and finish_reason "error", no usage, no [DONE]; /generation has the partial cost', async () => {
  const res = await post('/chat/completions', chat('fake/mid-stream-error', { stream: true }));
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.ok(!text.includes('[DONE]'));
  const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => JSON.parse(e.slice(6)));
  const end = events.at(-1);
  assert.deepEqual(end.error, { code: 502, message: 'Provider disconnected unexpectedly', metadata: { error_type: 'provider_unavailable' } });
  assert.equal(end.choices[0].finish_reason, 'error');
  assert.ok(events.every((e) => e.usage === undefined));
  const id = res.headers.get('x-generation-id') ?? '';
  assert.equal(fake.sent.get(id)?.reportedCost, null);
  const gen = await (await get(`/generation?id=${id}`)).json();
  assert.equal(gen.data.finish_reason, 'error');
  assert.equal(gen.data.tokens_completion, 2);
});

test('a slow stream the client drops: the fake sees the request aborted and records the generation cancelled', async () => {
  const ac = new AbortController();
  const res = await fetch(`${fake.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(chat('fake/slow', { stream: true })),
    signal: ac.signal,
  });
  const id = res.headers.get('x-generation-id') ?? '';
  const reader = res.body!.getReader();
  let got = '';
  while (!got.includes(' w2"')) {
    const { done, value } = await reader.read();
    assert.equal(done, false, 'the slow stream is still going');
    got += new TextDecoder().decode(value);
  }
  ac.abort();
  const r = await fake.waitFor((x) => x.generationId === id && x.aborted);
  await r.done;
  assert.equal(r.response.complete, false);
  const gen = fake.generations.get(id);
  assert.equal(gen?.cancelled, true);
  assert.ok((gen?.tokens_completion ?? 100) < 100, 'billed for what was generated until the disconnect');
  assert.equal(r.response.totalCost, gen?.total_cost);
});

test('no usage.cost: the cost comes only from /generation, which answers 404 for its first lookups', async () => {
  fake.setBehavior((r) => (r.path.endsWith('/chat/completions') ? { generationNotFoundLookups: 2 } : undefined));
  try {
    const res = await post('/chat/completions', chat('fake/no-cost'));
    const body = await res.json();
    assert.equal(body.usage.cost, undefined);
    assert.equal(body.usage.cost_details, undefined);
    assert.equal(typeof body.usage.prompt_tokens, 'number');
    assert.equal(res.headers.get('x-generation-id'), body.id);
    const first = await get(`/generation?id=${body.id}`);
    assert.equal(first.status, 404);
    assert.deepEqual(await first.json(), { error: { code: 404, message: `Generation ${body.id} not found` } });
    assert.equal((await get(`/generation?id=${body.id}`)).status, 404);
    const third = await get(`/generation?id=${body.id}`);
    assert.equal(third.status, 200);
    const gen = (await third.json()).data;
    assert.ok(gen.total_cost > 0, 'a model with no price still costs the default');
    assert.equal(gen.total_cost, fake.sent.get(body.id)?.totalCost);
    assert.equal(fake.sent.get(body.id)?.reportedCost, null);
  } finally {
    fake.setBehavior(undefined);
  }
  const unknown = await get('/generation?id=gen-0-nothing');
  assert.equal(unknown.status, 404);
  const timed = await startFakeAggregator({ generationNotFoundMs: 60_000 });
  try {
    const r = await fetch(`${timed.url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer any', 'content-type': 'application/json' }, body: JSON.stringify(chat('openai/gpt-4o-mini')) });
    const id = (await r.json()).id;
    assert.equal((await fetch(`${timed.url}/generation?id=${id}`, { headers: { authorization: 'Bearer any' } })).status, 404);
  } finally {
    await timed.close();
  }
});

test("errors in OpenRouter's shape with their status: 402, 429 with Retry-After, 502 with provider metadata, 401 for a wrong key", async () => {
  const e402 = await post('/chat/completions', chat('fake/error-402'));
  assert.equal(e402.status, 402);
  assert.deepEqual(await e402.json(), { error: { code: 402, message: 'Insufficient credits. Add more using https://openrouter.ai/credits' } });
  const e429 = await post('/embeddings', { model: 'fake/error-429', input: 'x' });
  assert.equal(e429.status, 429);
  assert.equal(e429.headers.get('retry-after'), '1');
  assert.equal((await e429.json()).error.metadata.error_type, 'rate_limit_exceeded');
  const e502 = await post('/audio/speech', { model: 'fake/error-502', input: 'x', voice: 'alloy' });
  assert.equal(e502.status, 502);
  const b502 = await e502.json();
  assert.equal(b502.error.code, 502);
  assert.equal(b502.error.metadata.provider_name, 'FakeProvider');
  assert.equal(typeof b502.error.metadata.raw, 'string');
  for (const r of fake.received.slice(-3)) assert.equal(r.generationId, undefined, 'an error before generating makes no generation');

  const wrong = await fetch(`${fake.url}/key`, { headers: { authorization: 'Bearer sk-or-v1-someone-else' } });
  assert.equal(wrong.status, 401);
  assert.equal((await wrong.json()).error.code, 401);
  assert.equal((await fetch(`${fake.url}/models`)).status, 401);
});

test('records each request: method, path, query, headers as sent, body bytes and their SHA-256', async () => {
  const body = Buffer.from('{"model":"openai/gpt-4o-mini",  "messages":[{"role":"user","content":"h\u00e9llo"}] ,"x_unknown":1}');
  const res = await fetch(`${fake.url}/chat/completions?trace=1&b=%20`, { method: 'POST', headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', 'X-Custom-Thing': 'Yes' }, body });
  await res.arrayBuffer();
  const r = last();
  assert.equal(r.query, 'trace=1&b=%20');
  assert.equal(r.url, '/api/v1/chat/completions?trace=1&b=%20');
  assert.ok(r.body.equals(body));
  assert.equal(r.sha256, sha(body));
  assert.equal(r.headers['x-custom-thing'], 'Yes');
  assert.ok(r.rawHeaders.includes('X-Custom-Thing'), 'names as sent');
  assert.equal(r.aborted, false);
});

test('models: priced (dollars per token as strings), a router without a price, endpoints; unknown endpoints 404', async () => {
  const list = await (await get('/models')).json();
  assert.equal(list.total_count, list.data.length);
  const mini = list.data.find((m: { id: string }) => m.id === 'openai/gpt-4o-mini');
  assert.deepEqual(mini.top_provider, { context_length: 128000, max_completion_tokens: 16384, is_moderated: false });
  assert.equal(mini.per_request_limits, null);
  assert.equal(typeof mini.pricing.prompt, 'string');
  const ep = await get('/models/anthropic/claude-3.5-haiku/endpoints');
  assert.equal((await ep.json()).data.endpoints[0].max_completion_tokens, 8192);
  assert.equal((await get('/models/nobody/nothing/endpoints')).status, 404);
  const images = await (await get('/images/models')).json();
  assert.deepEqual(images.data.map((m: { id: string }) => m.id), ['openai/gpt-image-1']);
  // A model not listed is still answered, at the default cost.
  const res = await post('/chat/completions', chat('somelab/unlisted-model'));
  assert.equal((await res.json()).usage.cost, 0.0001);
});

test('transcription takes JSON with base64 input_audio (400 without it) and multipart; images answer JSON and SSE', async () => {
  const bad = await post('/audio/transcriptions', { model: 'openai/whisper-1', file: 'x' });
  assert.equal(bad.status, 400);
  const form = new FormData();
  form.append('model', 'openai/whisper-1');
  form.append('file', new Blob([Buffer.alloc(32000)], { type: 'audio/wav' }), 'a.wav');
  const mp = await fetch(`${fake.url}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: form });
  assert.equal(mp.status, 200);
  assert.equal((await mp.json()).text, 'Hello from the fake aggregator.');
  assert.equal(fake.generations.get(mp.headers.get('x-generation-id') ?? '')?.model, 'openai/whisper-1');

  const img = await post('/images', { model: 'openai/gpt-image-1', prompt: 'a red panda', n: 2 });
  const ib = await img.json();
  assert.equal(ib.data.length, 2);
  assert.equal(ib.data[0].media_type, 'image/png');
  assert.ok(Math.abs(ib.usage.cost - (0.01 * 2 + 0.00004 * 544)) < 1e-12, 'image price per image plus output tokens');
  const sse = await (await post('/images', { model: 'openai/gpt-image-1', prompt: 'a red panda', stream: true })).text();
  assert.match(sse, /^: OPENROUTER PROCESSING\n\ndata: \{"type":"image_generation.partial_image"/);
  assert.match(sse, /"type":"image_generation.completed".*"usage":\{[^}]*"cost":/);
  assert.ok(sse.endsWith('data: [DONE]\n\n'));
});

test('gzip, when asked: the client reads the decoded body; the fake keeps both the body and the wire bytes', async () => {
  const z = await startFakeAggregator({ gzip: true });
  try {
    const res = await fetch(`${z.url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer any', 'content-type': 'application/json', 'accept-encoding': 'gzip' }, body: JSON.stringify(chat('openai/gpt-4o-mini', { stream: true })) });
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    const read = Buffer.from(await res.arrayBuffer());
    const sent = z.sent.get(res.headers.get('x-generation-id') ?? '');
    assert.ok(sent);
    assert.equal(sha(read), sent.sha256);
    assert.ok(!sent.wire.equals(sent.body));
    assert.ok(read.toString().endsWith('data: [DONE]\n\n'));
  } finally {
    await z.close();
  }
});

test('record: false (a bench) keeps no requests nor bytes, and still answers /generation', async () => {
  const quiet = await startFakeAggregator({ record: false });
  try {
    const res = await fetch(`${quiet.url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer any', 'content-type': 'application/json' }, body: JSON.stringify(chat('openai/gpt-4o-mini')) });
    const id = (await res.json()).id;
    assert.equal(quiet.received.length, 0);
    assert.equal(quiet.sent.size, 0);
    const gen = await fetch(`${quiet.url}/generation?id=${id}`, { headers: { authorization: 'Bearer any' } });
    assert.equal((await gen.json()).data.id, id);
  } finally {
    await quiet.close();
  }
});

test('the mid-stream error event through the other clients: the openai SDK throws its message, the AI SDK ends with an error part and finishReason "error"', async () => {
  const client = new OpenAI({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
  let text = '';
  await assert.rejects(
    (async () => {
      for await (const c of await client.chat.completions.create({ model: 'fake/mid-stream-error', messages: [{ role: 'user', content: 'x' }], stream: true })) text += c.choices[0]?.delta.content ?? '';
    })(),
    (e: unknown) => e instanceof OpenAI.APIError && e.message === 'Provider disconnected unexpectedly',
  );
  assert.equal(text, 'Hello from');

  const openrouter = createOpenRouter({ apiKey: KEY, baseURL: fake.url });
  const s = streamText({ model: openrouter('fake/mid-stream-error'), prompt: 'x', maxRetries: 0, onError: () => undefined });
  const types: string[] = [];
  for await (const p of s.fullStream) types.push(p.type);
  assert.ok(types.includes('error'));
  assert.equal(await s.finishReason, 'error');
});
