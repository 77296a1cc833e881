// Message Batches on the messages-style surface, driven by both SDK generations with only
// baseURL and the key set: create, retrieve until ended, batches.results() (the SDK
// fetches the absolute results_url as given) with succeeded and errored lines in request
// order, list paging both ways, cancel, delete only once ended; the Files switch; the
// 5,000-request bound and each request checked at create; each request charged and
// logged as a POST /v1/messages of this root; results_url under AGENT_API_PUBLIC_BASE_URL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic1 from '@anthropic-ai/sdk';
import Anthropic0 from 'anthropic-sdk-0';
import { toMicro } from '../../accounts/money.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: TestServer;
before(async () => {
  server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20' });
});
after(() => server.close());

type Client = InstanceType<typeof Anthropic1>;
type Batch = Awaited<ReturnType<Client['messages']['batches']['retrieve']>>;
const generations: [string, typeof Anthropic1, (apiKey: string) => Client][] = [
  ['@anthropic-ai/sdk 1.x', Anthropic1, (apiKey) => new Anthropic1({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 })],
  ['@anthropic-ai/sdk 0.x', Anthropic0 as unknown as typeof Anthropic1, (apiKey) => new Anthropic0({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 }) as unknown as Client],
];

const ask = (content: string) => ({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user' as const, content }] });

async function ended(client: Client, id: string): Promise<Batch> {
  let batch = await client.messages.batches.retrieve(id);
  for (let i = 0; i < 1_500 && batch.processing_status !== 'ended'; i++) {
    await pause(20);
    batch = await client.messages.batches.retrieve(id);
  }
  return batch;
}

async function results(client: Client, id: string): Promise<any[]> {
  const out = [];
  for await (const line of await client.messages.batches.results(id)) out.push(line);
  return out;
}

for (const [generation, SDK, make] of generations) {
  describe(`message batches with ${generation}`, () => {
    let client: Client;
    let accountId: string;
    before(async () => {
      const account = await server.createAccount(100);
      accountId = account.id;
      client = make((await server.createKey({ account_id: account.id, permissions: { files: true } })).key);
    });

    test('create, retrieve until ended, results(): succeeded and errored lines in request order, each charged and logged', async () => {
      const before = (await server.admin('GET', `/accounts/${accountId}`)).body;
      const created = await client.messages.batches.create({
        requests: [
          { custom_id: 'first', params: ask('What is 12 * 7?') },
          // Passes the contract, refused when it runs: budget_tokens must be below max_tokens.
          { custom_id: 'bad-budget', params: { ...ask('Think.'), max_tokens: 1500, thinking: { type: 'enabled', budget_tokens: 2000 } } },
          { custom_id: 'third_3', params: ask('What is 2 + 3?') },
        ],
      });
      assert.match(created.id, /^msgbatch_/);
      assert.equal(created.type, 'message_batch');
      assert.equal(created.processing_status, 'in_progress');
      assert.deepEqual(created.request_counts, { processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
      assert.equal(created.results_url, null);
      assert.equal(created.ended_at, null);
      assert.equal(created.archived_at, null);
      assert.equal(Date.parse(created.expires_at) - Date.parse(created.created_at), 24 * 3600_000);

      const batch = await ended(client, created.id);
      assert.equal(batch.processing_status, 'ended');
      assert.deepEqual(batch.request_counts, { processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });
      assert.ok(batch.ended_at && Date.parse(batch.ended_at) >= Date.parse(batch.created_at));
      assert.equal(batch.results_url, `${server.origin}/api/messages/v1/messages/batches/${batch.id}/results`, 'absolute');

      const lines = await results(client, batch.id);
      assert.deepEqual(lines.map((l) => l.custom_id), ['first', 'bad-budget', 'third_3']);
      assert.equal(lines[0].result.type, 'succeeded');
      assert.equal(lines[0].result.message.type, 'message');
      assert.match(lines[0].result.message.id, /^msg_/);
      assert.equal(lines[0].result.message.model, 'claude-sonnet-4-5');
      assert.match(lines[0].result.message.content[0].text, /84/);
      assert.match(lines[2].result.message.content[0].text, /5/);
      assert.equal(lines[1].result.type, 'errored');
      assert.equal(lines[1].result.error.type, 'error');
      assert.equal(lines[1].result.error.error.type, 'invalid_request_error');
      assert.match(lines[1].result.error.error.message, /budget_tokens/);
      assert.match(lines[1].result.error.request_id, /^req_/);

      // Each request is a POST /v1/messages of this root in the activity log, with its charge.
      const rows = (await server.admin('GET', `/activity?account_id=${accountId}&limit=100`)).body.data as { endpoint: string; status: number; credits_settled: number; request_id: string }[];
      const lineRows = rows.filter((r) => r.endpoint === '/api/messages/v1/messages');
      assert.equal(lineRows.length, 3);
      assert.deepEqual(lineRows.map((r) => r.status).sort(), [200, 200, 400]);
      assert.ok(lineRows.some((r) => r.request_id === lines[1].result.error.request_id));
      const charged = lineRows.reduce((s, r) => s + toMicro(r.credits_settled), 0);
      assert.ok(charged > 0);
      const now = (await server.admin('GET', `/accounts/${accountId}`)).body;
      assert.equal(toMicro(before.credits) - toMicro(now.credits), charged, 'the balance lost exactly what the lines were charged');
      assert.equal(now.reserved_credits, 0);
    });

    test('list pages newest first with after_id and before_id; auto-paging reads every batch', async () => {
      const own = make((await server.createKey({ permissions: { files: true } })).key);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await own.messages.batches.create({ requests: [{ custom_id: `q${i}`, params: ask(`Say ${i}`) }] })).id);
      const first = await own.messages.batches.list({ limit: 2 });
      assert.deepEqual(first.data.map((b) => b.id), [ids[2], ids[1]]);
      assert.equal(first.has_more, true);
      assert.equal(first.first_id, ids[2]);
      assert.equal(first.last_id, ids[1]);
      const older = await own.messages.batches.list({ limit: 2, after_id: ids[1]! });
      assert.deepEqual(older.data.map((b) => b.id), [ids[0]]);
      assert.equal(older.has_more, false);
      const newer = await own.messages.batches.list({ limit: 1, before_id: ids[0]! });
      assert.deepEqual(newer.data.map((b) => b.id), [ids[1]]);
      assert.equal(newer.has_more, true);
      const all: string[] = [];
      for await (const b of own.messages.batches.list({ limit: 1 })) all.push(b.id);
      assert.deepEqual(all, [...ids].reverse());
      for (const id of ids) await ended(own, id);
    });

    test('cancel: canceling, then ended with the requests not run canceled; delete only once ended', async () => {
      const created = await client.messages.batches.create({ requests: Array.from({ length: 300 }, (_, i) => ({ custom_id: `c-${i}`, params: ask(`What is ${i} + 1?`) })) });
      const deleteEarly = await client.messages.batches.delete(created.id).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(deleteEarly instanceof SDK.BadRequestError, 'a batch still processing is not deleted');
      const cancelled = await client.messages.batches.cancel(created.id);
      assert.ok(['canceling', 'ended'].includes(cancelled.processing_status), cancelled.processing_status);
      assert.ok(cancelled.cancel_initiated_at);
      const batch = await ended(client, created.id);
      const counts = batch.request_counts;
      assert.ok(counts.canceled > 0, JSON.stringify(counts));
      assert.equal(counts.succeeded + counts.canceled, 300, JSON.stringify(counts));
      const lines = await results(client, batch.id);
      assert.equal(lines.length, 300);
      assert.equal(lines.filter((l) => l.result.type === 'canceled').length, counts.canceled);
      assert.equal(lines.filter((l) => l.result.type === 'succeeded').length, counts.succeeded);

      const deleted = await client.messages.batches.delete(batch.id);
      assert.deepEqual(deleted, { id: batch.id, type: 'message_batch_deleted' });
      await assert.rejects(client.messages.batches.retrieve(batch.id), (e: unknown) => e instanceof SDK.NotFoundError);
      await assert.rejects(results(client, batch.id), (e: unknown) => e instanceof SDK.NotFoundError);
    });

    test('refused at create: over 5,000 requests, a repeated or malformed custom_id, a stream, a bad params field', async () => {
      const tooMany = Array.from({ length: 5_001 }, (_, i) => ({ custom_id: `r${i}`, params: ask('x') }));
      await assert.rejects(client.messages.batches.create({ requests: tooMany }), (e: unknown) => e instanceof SDK.BadRequestError && /requests/.test((e as Error).message));
      await assert.rejects(client.messages.batches.create({ requests: [] }), (e: unknown) => e instanceof SDK.BadRequestError);
      const cases: [unknown[], RegExp][] = [
        [[{ custom_id: 'a', params: ask('x') }, { custom_id: 'a', params: ask('y') }], /requests\[1\]\.custom_id.*earlier/],
        [[{ custom_id: 'has space', params: ask('x') }], /requests\[0\]\.custom_id/],
        [[{ custom_id: 'x'.repeat(65), params: ask('x') }], /requests\[0\]\.custom_id/],
        [[{ custom_id: 'ok', params: { ...ask('x'), stream: true } }], /requests\[0\]\.params\.stream/],
        [[{ custom_id: 'ok', params: { ...ask('x'), max_tokens: 0 } }], /requests\[0\]\.params\.max_tokens/],
        [[{ custom_id: 'ok', params: { ...ask('x'), tools: [{ name: 't', input_schema: { type: 'object' } }] } }], /requests\[0\]\.params\.tools/],
      ];
      for (const [requests, message] of cases) {
        await assert.rejects(
          client.messages.batches.create({ requests } as never),
          (e: unknown) => e instanceof SDK.BadRequestError && message.test((e as Error).message),
          String(message),
        );
      }
      assert.equal((await server.admin('GET', `/accounts/${accountId}`)).body.reserved_credits, 0);
    });

    test('the Files switch: without it every batch endpoint is 403 permission_error; another account sees no batch', async () => {
      const noSwitch = make((await server.createKey()).key);
      await assert.rejects(noSwitch.messages.batches.create({ requests: [{ custom_id: 'a', params: ask('x') }] }), (e: unknown) => e instanceof SDK.PermissionDeniedError);
      await assert.rejects(noSwitch.messages.batches.list(), (e: unknown) => e instanceof SDK.PermissionDeniedError);
      const mine = await client.messages.batches.create({ requests: [{ custom_id: 'a', params: ask('x') }] });
      const other = make((await server.createKey({ permissions: { files: true } })).key);
      await assert.rejects(other.messages.batches.retrieve(mine.id), (e: unknown) => e instanceof SDK.NotFoundError);
      await assert.rejects(other.messages.batches.cancel(mine.id), (e: unknown) => e instanceof SDK.NotFoundError);
      await ended(client, mine.id);
    });
  });
}

describe('message batches beside /v1 batches', () => {
  test('a message batch is not a /v1 batch, and /v1/batches cannot reach one', async () => {
    const { key } = await server.createKey({ permissions: { files: true } });
    const client = generations[0]![2](key);
    const m = await client.messages.batches.create({ requests: [{ custom_id: 'a', params: ask('x') }] });
    const openai = server.openai(key);
    assert.deepEqual((await openai.batches.list()).data, []);
    await assert.rejects(openai.batches.retrieve(m.id), (e: unknown) => (e as { status?: number }).status === 404);
    await ended(client, m.id);
  });
});

describe('results_url under AGENT_API_PUBLIC_BASE_URL', () => {
  let pub: TestServer;
  before(async () => {
    pub = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20', AGENT_API_PUBLIC_BASE_URL: 'https://api.example.com/agent/v1' });
  });
  after(() => pub.close());

  test('the configured base less its /v1, then this root', async () => {
    const { key } = await pub.createKey({ permissions: { files: true } });
    const client = new Anthropic1({ apiKey: key, baseURL: `${pub.origin}/api/messages`, maxRetries: 0 });
    const created = await client.messages.batches.create({ requests: [{ custom_id: 'a', params: ask('x') }] });
    let batch = await client.messages.batches.retrieve(created.id);
    for (let i = 0; i < 1_500 && batch.processing_status !== 'ended'; i++) {
      await pause(20);
      batch = await client.messages.batches.retrieve(created.id);
    }
    assert.equal(batch.results_url, `https://api.example.com/agent/api/messages/v1/messages/batches/${batch.id}/results`);
    // The same path on this server, with the same key headers, answers the JSONL.
    const res = await pub.fetch(new URL(batch.results_url!).pathname.replace('/agent', ''), { key });
    assert.equal(res.status, 200);
    const [line] = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(line.custom_id, 'a');
    assert.equal(line.result.type, 'succeeded');
  });
});
