// Batches end to end with the official openai SDK, on the database the run selected:
// 200 chat lines and a batch of text completions run to `completed`, output files read
// back, charges equal to the sum of the lines' svc; a bad file fails with line numbers;
// cancel midway finishes with what ran; another account's batch is 404; the Files
// switch is needed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { toMicro } from '../../accounts/money.ts';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const jsonl = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

async function settle(client: OpenAI, id: string, done = (s: string) => ['completed', 'failed', 'cancelled', 'expired'].includes(s)) {
  let batch = await client.batches.retrieve(id);
  for (let i = 0; i < 1_500 && !done(batch.status); i++) {
    await pause(20);
    batch = await client.batches.retrieve(id);
  }
  return batch;
}

async function readLines(client: OpenAI, fileId: string | null | undefined): Promise<any[]> {
  if (!fileId) return [];
  const text = await (await client.files.content(fileId)).text();
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('batches on the offline engine', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20' });
  });
  after(() => server.close());

  test('200 chat lines run to completed; the output file holds every answer; charges are the sum of their svc', async () => {
    const account = await server.createAccount(100);
    const { key } = await server.createKey({ account_id: account.id, permissions: { files: true } });
    const client = server.openai(key);
    const lines = Array.from({ length: 200 }, (_, i) => ({
      custom_id: `q-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'agent', messages: [{ role: 'user', content: `What is ${i} + 1?` }], max_tokens: 40 },
    }));
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'questions.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { run: 'one' } });
    assert.match(created.id, /^batch_/);
    assert.equal(created.status, 'validating');
    assert.deepEqual(created.metadata, { run: 'one' });

    const batch = await settle(client, created.id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.errors));
    assert.deepEqual(batch.request_counts, { total: 200, completed: 200, failed: 0 });
    for (const t of ['in_progress_at', 'finalizing_at', 'completed_at'] as const) assert.equal(typeof batch[t], 'number', t);
    assert.equal(batch.error_file_id, null);

    const out = await readLines(client, batch.output_file_id);
    assert.equal(out.length, 200);
    assert.deepEqual(out.map((o) => o.custom_id), lines.map((l) => l.custom_id), 'in input order');
    for (const [i, o] of out.entries()) {
      assert.match(o.id, /^batch_req_/);
      assert.equal(o.error, null);
      assert.equal(o.response.status_code, 200);
      assert.match(o.response.request_id, /^req_/);
      assert.equal(o.response.body.object, 'chat.completion');
      assert.match(o.response.body.choices[0].message.content, new RegExp(String(i + 1)));
    }
    const output = await client.files.retrieve(batch.output_file_id!);
    assert.equal(output.purpose, 'batch_output');

    const charged = out.reduce((s, o) => s + toMicro(o.response.body.svc), 0);
    const acct = (await server.admin('GET', `/accounts/${account.id}`)).body;
    assert.equal(toMicro(100) - toMicro(acct.credits), charged, 'the balance lost exactly the lines svc');
    assert.equal(acct.reserved_credits, 0);
    assert.equal(toMicro((batch as unknown as { svc: number }).svc), charged);
    // One activity row per line, each with its charge.
    const rows = (await server.admin('GET', `/activity?account_id=${account.id}&limit=1000`)).body.data as { endpoint: string; credits_settled: number }[];
    const lineRows = rows.filter((r) => r.endpoint === '/v1/chat/completions');
    assert.equal(lineRows.length, 200);
    assert.equal(lineRows.reduce((s, r) => s + toMicro(r.credits_settled), 0), charged);
  });

  test('a batch of text completions runs to completed', async () => {
    const { key } = await server.createKey({ permissions: { files: true } });
    const client = server.openai(key);
    const lines = Array.from({ length: 10 }, (_, i) => ({ custom_id: `c-${i}`, method: 'POST', url: '/v1/completions', body: { model: 'agent', prompt: `Say ${i}`, max_tokens: 10 } }));
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'prompts.jsonl'), purpose: 'batch' });
    const batch = await settle(client, (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h' })).id);
    assert.equal(batch.status, 'completed');
    const out = await readLines(client, batch.output_file_id);
    assert.equal(out.length, 10);
    assert.ok(out.every((o) => o.response.body.object === 'text_completion'));
  });

  test("lines past the key's limit are refused as a POST would be, and land in the error file", async () => {
    const account = await server.createAccount(5);
    const { key } = await server.createKey({ account_id: account.id, permissions: { files: true }, limits: [{ metric: 'requests', period: 'day', max: 6 }] });
    const limited = server.openai(key);
    // Another key of the account watches the batch, so polling spends none of the limited key's requests.
    const client = server.openai((await server.createKey({ account_id: account.id, permissions: { files: true } })).key);
    const lines = Array.from({ length: 12 }, (_, i) => ({ custom_id: `p-${i}`, method: 'POST', url: '/v1/completions', body: { model: 'agent', prompt: `Tell me a long story ${i}`, max_tokens: 1000 } }));
    const file = await limited.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'limited.jsonl'), purpose: 'batch' });
    const batch = await settle(client, (await limited.batches.create({ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h' })).id);
    assert.equal(batch.status, 'completed');
    const { completed, failed, total } = batch.request_counts!;
    assert.equal(total, 12);
    assert.equal(completed + failed, 12);
    // The key's 6 requests a day: the upload, the batch's create, and then four lines.
    assert.equal(completed, 4);
    const errors = await readLines(client, batch.error_file_id);
    assert.equal(errors.length, failed);
    for (const e of errors) {
      assert.equal(e.response.status_code, 429);
      assert.equal(e.response.body.error.code, 'insufficient_quota');
    }
    const out = await readLines(client, batch.output_file_id);
    const acct = (await server.admin('GET', `/accounts/${account.id}`)).body;
    assert.equal(toMicro(5) - toMicro(acct.credits), out.reduce((s, o) => s + toMicro(o.response.body.svc), 0), 'refused lines are charged nothing');
  });

  test('a bad file fails the batch with line-numbered errors, and nothing runs', async () => {
    const { key } = await server.createKey({ permissions: { files: true } });
    const client = server.openai(key);
    const good = (id: string) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'agent', messages: [{ role: 'user', content: 'hi' }] } });
    const text = [
      good('a'),
      '{not json',
      JSON.stringify({ custom_id: 'b', method: 'POST', url: '/v1/completions', body: {} }),
      good('a'),
      JSON.stringify({ custom_id: 'c', method: 'POST', url: '/v1/chat/completions', body: { model: 'agent', messages: [{ role: 'user', content: 'hi' }], temperature: 7 } }),
    ].join('\n');
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'bad.jsonl'), purpose: 'batch' });
    const batch = await settle(client, (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    assert.equal(batch.status, 'failed');
    assert.equal(typeof batch.failed_at, 'number');
    const errors = batch.errors!.data!;
    assert.deepEqual(errors.map((e) => [e.line, e.code]), [
      [2, 'invalid_json_line'],
      [3, 'mismatched_url'],
      [4, 'duplicate_custom_id'],
      [5, 'invalid_request'],
    ]);
    assert.equal(errors[3]!.param, 'body.temperature');
    assert.equal(batch.output_file_id, null);
  });

  test('a batch of /v1/responses lines reports the tokens its lines used', async () => {
    const account = await server.createAccount(100);
    const { key } = await server.createKey({ account_id: account.id, permissions: { files: true } });
    const client = server.openai(key);
    const lines = Array.from({ length: 5 }, (_, i) => ({ custom_id: `r-${i}`, method: 'POST', url: '/v1/responses', body: { model: 'agent', input: `Say ${i} in a sentence.`, max_output_tokens: 40 } }));
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'responses.jsonl'), purpose: 'batch' });
    const batch = await settle(client, (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h' })).id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.errors));
    const out = await readLines(client, batch.output_file_id);
    assert.equal(out.length, 5);
    const input = out.reduce((n, o) => n + o.response.body.usage.input_tokens, 0);
    const output = out.reduce((n, o) => n + o.response.body.usage.output_tokens, 0);
    assert.ok(input > 0 && output > 0);
    assert.deepEqual(batch.usage, {
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    });
  });

  test('an endpoint no batch call is registered for is refused at create, naming endpoint; the contract lists the registered ones', async () => {
    const { key } = await server.createKey({ permissions: { files: true } });
    const client = server.openai(key);
    const line = JSON.stringify({ custom_id: 'm', method: 'POST', url: '/v1/videos', body: { model: 'sora-2', prompt: 'x' } });
    const file = await client.files.create({ file: await toFile(Buffer.from(line), 'm.jsonl'), purpose: 'batch' });
    for (const endpoint of ['/v1/videos', '/v1/nothing', null]) {
      const res = await server.fetch('/v1/batches', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input_file_id: file.id, endpoint, completion_window: '24h' }) });
      assert.equal(res.status, 400, String(endpoint));
      const body = (await res.json()) as { error: { param: string; message: string } };
      assert.equal(body.error.param, 'endpoint');
      assert.ok(res.headers.get('x-request-id'));
    }
    assert.equal((await client.batches.list()).data.length, 0, 'nothing was created');

    const registered = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/moderations', '/v1/responses'];
    const caps = (await (await server.fetch('/v1/capabilities')).json()) as { limited_fields: Record<string, Record<string, string[]>> };
    assert.deepEqual([...caps.limited_fields['POST /batches']!.endpoint!].sort(), registered);
    const doc = (await (await server.fetch('/v1/openapi.json')).json()) as Record<string, any>;
    const schema = doc.paths['/batches'].post.requestBody.content['application/json'].schema;
    const properties = schema.properties ?? doc.components.schemas[schema.$ref.split('/').pop()].properties;
    assert.deepEqual([...properties.endpoint.enum].sort(), registered);
  });

  test('input checks: a file of another purpose, an unknown file', async () => {
    const { key } = await server.createKey({ permissions: { files: true } });
    const client = server.openai(key);
    const notBatch = await client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'user_data' });
    await assert.rejects(client.batches.create({ input_file_id: notBatch.id, endpoint: '/v1/chat/completions', completion_window: '24h' }), (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'input_file_id');
    await assert.rejects(client.batches.create({ input_file_id: 'file-nope', endpoint: '/v1/chat/completions', completion_window: '24h' }), (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'input_file_id');
    // A NUL, which PostgreSQL cannot compare, is refused before any lookup.
    await assert.rejects(client.batches.create({ input_file_id: 'file-\u0000', endpoint: '/v1/chat/completions', completion_window: '24h' }), (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'input_file_id');
  });

  test("another account's batch is 404; without the Files switch batches are 403; list pages newest first", async () => {
    const owner = await server.createKey({ permissions: { files: true } });
    const client = server.openai(owner.key);
    const line = JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/completions', body: { model: 'agent', prompt: 'x' } });
    const file = await client.files.create({ file: await toFile(Buffer.from(line), 'one.jsonl'), purpose: 'batch' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.batches.create({ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h' })).id);
    const page = await client.batches.list({ limit: 2 });
    assert.deepEqual(page.data.map((b) => b.id), [ids[2], ids[1]]);
    assert.equal(page.has_more, true);
    const all = [];
    for await (const b of client.batches.list({ limit: 2 })) all.push(b.id);
    assert.deepEqual(all, [...ids].reverse());

    const other = server.openai((await server.createKey({ permissions: { files: true } })).key);
    for (const call of [() => other.batches.retrieve(ids[0]!), () => other.batches.cancel(ids[0]!)]) {
      await assert.rejects(call(), (e: unknown) => e instanceof OpenAI.NotFoundError);
    }
    const noSwitch = server.openai((await server.createKey()).key);
    await assert.rejects(noSwitch.batches.list(), (e: unknown) => e instanceof OpenAI.PermissionDeniedError);
  });
});

describe('batches against an upstream', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let delayMs = 0;
  before(async () => {
    upstream = await startFakeUpstream(async (req, res) => {
      await pause(delayMs);
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
        }),
      );
    });
    server = await startTestServer({
      AGENT_API_JOBS_POLL_MS: '20',
      AGENT_API_BATCH_CONCURRENCY: '2',
      UPSTREAM_BASE_URL: upstream.baseUrl,
      UPSTREAM_MODEL_AGENT: 'up',
      UPSTREAM_PRICE_INPUT_PER_MTOK: '1',
      UPSTREAM_PRICE_OUTPUT_PER_MTOK: '1',
      UPSTREAM_MAX_RETRIES: '0',
    });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('cancel midway: no new line starts, the running ones finish, and the batch ends cancelled with what ran', async () => {
    delayMs = 40;
    const { key } = await server.createKey({ permissions: { files: true } });
    const client = server.openai(key);
    const lines = Array.from({ length: 100 }, (_, i) => ({ custom_id: `l-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'agent', messages: [{ role: 'user', content: `n ${i}` }] } }));
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'many.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let running = await settle(client, created.id, (s) => s !== 'validating');
    for (let i = 0; i < 500 && (running.request_counts?.completed ?? 0) < 4; i++) {
      await pause(10);
      running = await client.batches.retrieve(created.id);
    }
    const cancelling = await client.batches.cancel(created.id);
    assert.equal(cancelling.status, 'cancelling');
    assert.equal(typeof cancelling.cancelling_at, 'number');
    const batch = await settle(client, created.id);
    assert.equal(batch.status, 'cancelled');
    const ran = batch.request_counts!.completed;
    assert.ok(ran >= 4 && ran < 100, `ran ${ran}`);
    const out = await readLines(client, batch.output_file_id);
    assert.equal(out.length, ran, 'the output holds exactly what ran');
    // Nothing more starts after the cancel settled.
    const calls = upstream.requests.length;
    await pause(200);
    assert.equal(upstream.requests.length, calls);
    // Cancelling again changes nothing.
    assert.equal((await client.batches.cancel(created.id)).status, 'cancelled');
    delayMs = 0;
  });
});
