// Chat through an OpenAI-compatible upstream, end to end: agent-api configured by
// UPSTREAM_* against a fake upstream that replays real streaming shapes. Fragments pass
// through, the provider's cost sets svc, failures are 502 upstream_error, and a client
// that goes away aborts the upstream request and pays only for what ran.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { fixture, replaySse, startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { toMicro } from '../../accounts/money.ts';

let upstream: FakeUpstream;
let server: TestServer;
let mode: 'tools' | 'openrouter' | 'fail' | 'stall' | 'hold' | 'mid-error' = 'tools';

before(async () => {
  upstream = await startFakeUpstream(async (req, res) => {
    if (mode === 'fail') {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'context length exceeded', type: 'invalid_request_error' } }));
    } else if (mode === 'tools') await replaySse(res, fixture('openai-tool-calls.sse'));
    else if (mode === 'openrouter') await replaySse(res, fixture('openrouter-reasoning.sse'));
    else if (mode === 'mid-error') await replaySse(res, fixture('vllm-error-mid-stream.sse'));
    else if (mode === 'hold') return; // a non-streamed answer still being written
    else {
      // A long stream: one content chunk every 20 ms until the client goes away.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 500 && !res.destroyed; i++) {
        res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] })}\n\n`);
        await new Promise((r) => setTimeout(r, 20));
      }
      res.end();
    }
  });
  server = await startTestServer({
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_API_KEY: 'sk-upstream-secret',
    UPSTREAM_MODEL_AGENT: 'upstream-small',
    UPSTREAM_MODEL_AGENT_THINK: 'upstream-reasoner',
    UPSTREAM_PRICE_INPUT_PER_MTOK: '1',
    UPSTREAM_PRICE_OUTPUT_PER_MTOK: '2',
    UPSTREAM_MAX_RETRIES: '0',
  });
});
after(async () => {
  await server.close();
  await upstream.close();
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The first request the upstream receives after it had received `before`. */
async function upstreamRequestAfter(before: number) {
  for (let i = 0; i < 400 && upstream.requests.length === before; i++) await pause(5);
  assert.ok(upstream.requests.length > before, 'the upstream was called');
  return upstream.requests.at(-1)!;
}

const closedWithin = (req: { closed: Promise<void> }, ms: number) => Promise.race([req.closed.then(() => true), pause(ms).then(() => false)]);

/** The account once nothing is reserved any more (settlement happens as the request finishes). */
async function settledAccount(id: string): Promise<{ credits: number; reserved_credits: number }> {
  let acct = (await server.admin('GET', `/accounts/${id}`)).body;
  for (let i = 0; i < 100 && acct.reserved_credits > 0; i++) {
    await pause(20);
    acct = (await server.admin('GET', `/accounts/${id}`)).body;
  }
  assert.equal(acct.reserved_credits, 0);
  return acct;
}

test('every applied field reaches the upstream under its upstream model name; tool-call fragments pass through', async () => {
  mode = 'tools';
  const { key } = await server.createKey({ permissions: { function_calling: true } });
  const stream = await server.openai(key).chat.completions.create({
    model: 'agent',
    messages: [{ role: 'user', content: 'weather in Paris and Tokyo' }],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    temperature: 0.3,
    top_k: 40,
    min_p: 0.05,
    top_a: 0.1,
    repetition_penalty: 1.1,
    seed: 3,
    stop: ['END'],
    stream: true,
  } as never);
  let fragments = 0;
  for await (const c of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) if (c.choices[0]?.delta.tool_calls) fragments++;
  assert.ok(fragments >= 4);
  const sent = upstream.requests.at(-1)!;
  assert.equal(sent.body.model, 'upstream-small');
  for (const [k, v] of Object.entries({ temperature: 0.3, top_k: 40, min_p: 0.05, top_a: 0.1, repetition_penalty: 1.1, seed: 3 })) assert.equal(sent.body[k], v, k);
  assert.deepEqual(sent.body.stop, ['END']);
  assert.equal(sent.headers.authorization, 'Bearer sk-upstream-secret');
});

test('a stored file named by file_id reaches the upstream as file_data (a data URL) with its filename, not as our id', async () => {
  mode = 'tools';
  const { key } = await server.createKey();
  const client = server.openai(key);
  const pdf = Buffer.from('%PDF-1.4 not really\n');
  const file = await client.files.create({ file: await toFile(pdf, 'report.pdf'), purpose: 'user_data' });
  const stream = await client.chat.completions.create({
    model: 'agent',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'summarise' }, { type: 'file', file: { file_id: file.id } }] }],
    stream: true,
  });
  for await (const _ of stream);
  const sent = upstream.requests.at(-1)!;
  const content = (sent.body.messages as { content: unknown }[])[0]!.content;
  assert.deepEqual(content, [
    { type: 'text', text: 'summarise' },
    { type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${pdf.toString('base64')}` } },
  ]);
});

test("the provider's reported cost (OpenRouter usage.cost) sets the charge; reasoning passes through", async () => {
  mode = 'openrouter';
  const account = await server.createAccount(10);
  const { key } = await server.createKey({ account_id: account.id });
  const r = await server.openai(key).chat.completions.create({ model: 'agent-think', messages: [{ role: 'user', content: 'What is 2 + 2?' }] });
  const reported = JSON.parse(fixture('openrouter-reasoning.sse').split('\n').filter((l) => l.includes('"cost"'))[0]!.slice(6)).usage.cost as number;
  assert.equal((r as unknown as { svc: number }).svc, Math.ceil(reported * 100 * 1e6) / 1e6);
  assert.ok((r.choices[0]!.message as unknown as { reasoning_content: string }).reasoning_content.length > 0);
  assert.equal(upstream.requests.at(-1)!.body.model, 'upstream-reasoner');
});

test('an upstream failure is 502 upstream_error, and nothing is charged', async () => {
  mode = 'fail';
  const account = await server.createAccount(10);
  const { key } = await server.createKey({ account_id: account.id });
  await assert.rejects(server.openai(key).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'x' }] }), (e: unknown) => {
    assert.ok(e instanceof OpenAI.InternalServerError || (e as { status: number }).status === 502);
    assert.equal((e as { code: string }).code, 'upstream_error');
    return true;
  });
  const acct = (await server.admin('GET', `/accounts/${account.id}`)).body;
  assert.equal(acct.credits, 10, 'a call that ran nothing costs nothing');
  assert.equal(acct.reserved_credits, 0);
});

test('an error mid-stream ends the stream with an error event', async () => {
  mode = 'mid-error';
  const { key } = await server.createKey();
  const res = await server.fetch('/v1/chat/completions', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'x' }], stream: true }),
  });
  const text = await res.text();
  assert.match(text, /"code":"upstream_error"/);
  assert.ok(!text.includes('[DONE]'));
});

test('a client that goes away aborts the upstream request and pays only for what ran', async () => {
  mode = 'stall';
  const account = await server.createAccount(10);
  const { key, id: keyId } = await server.createKey({ account_id: account.id });
  const controller = new AbortController();
  const before = upstream.requests.length;
  const res = await server.fetch('/v1/chat/completions', {
    method: 'POST',
    key,
    signal: controller.signal,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'x' }], stream: true }),
  });
  const reader = res.body!.getReader();
  await reader.read();
  await reader.read();
  controller.abort();
  const upstreamRequest = await upstreamRequestAfter(before);
  assert.equal(await closedWithin(upstreamRequest, 2000), true, 'the upstream request was closed when the client left');
  const acct = await settledAccount(account.id);
  const charged = toMicro(10) - toMicro(acct.credits);
  assert.ok(charged > 0, 'what ran is charged');
  assert.ok(charged < toMicro(0.05), `only what ran is charged (${charged} micro-credits)`);
  // The activity row carries what the ledger charged, not the zeros of before settlement.
  let rows: { status: number; credits_settled: number; output_tokens: number; input_tokens: number }[] = [];
  for (let i = 0; i < 200 && rows.length === 0; i++) {
    rows = (await server.admin('GET', `/activity?key_id=${keyId}`)).body.data;
    if (rows.length === 0) await pause(10);
  }
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.status, 499);
  assert.equal(toMicro(rows[0]!.credits_settled), charged, 'activity and ledger add up to the same figure');
  assert.ok(rows[0]!.output_tokens > 0 && rows[0]!.input_tokens > 0);
});

test('a non-streaming request is sent upstream non-streamed; a client that leaves before the answer aborts it and pays nothing', async () => {
  mode = 'hold';
  const account = await server.createAccount(10);
  const { key } = await server.createKey({ account_id: account.id });
  const controller = new AbortController();
  const before = upstream.requests.length;
  const pending = server
    .fetch('/v1/chat/completions', {
      method: 'POST',
      key,
      signal: controller.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'x' }] }),
    })
    .catch((e: unknown) => e);
  const sent = await upstreamRequestAfter(before);
  assert.equal(sent.body.stream, false);
  assert.equal(sent.body.stream_options, undefined);
  controller.abort();
  assert.equal(((await pending) as Error).name, 'AbortError');
  assert.equal(await closedWithin(sent, 2000), true, 'the upstream request was closed when the client left');
  const acct = await settledAccount(account.id);
  assert.equal(acct.credits, 10, 'no answer came back, so nothing was charged');
});
