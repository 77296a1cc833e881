// Background responses with the official openai SDK: queued at once, polled to completed
// with output and a charge equal to svc; cancelled midway against a slow upstream (the
// upstream request is aborted, only what ran is charged); the states that cannot be
// cancelled; another account's id. The restart cases are in background-restart.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import { toMicro } from '../../accounts/money.ts';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function poll(client: OpenAI, id: string, until: (s: string) => boolean) {
  let r = await client.responses.retrieve(id);
  for (let i = 0; i < 1500 && !until(r.status!); i++) {
    await pause(20);
    r = await client.responses.retrieve(id);
  }
  return r;
}

async function settled(server: TestServer, accountId: string) {
  let acct = (await server.admin('GET', `/accounts/${accountId}`)).body;
  for (let i = 0; i < 200 && acct.reserved_credits > 0; i++) {
    await pause(20);
    acct = (await server.admin('GET', `/accounts/${accountId}`)).body;
  }
  return acct as { credits: number; reserved_credits: number };
}

describe('background responses on the offline engine', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20' });
  });
  after(() => server.close());

  test('queued at once, then completed with output, usage and a charge equal to its svc', async () => {
    const account = await server.createAccount(10);
    const client = server.openai((await server.createKey({ account_id: account.id })).key);
    const queued = await client.responses.create({ model: 'agent-think', input: 'What is 2 + 9?', background: true });
    assert.equal(queued.status, 'queued');
    assert.equal(queued.background, true);
    assert.equal(queued.output.length, 0);
    const done = await poll(client, queued.id, (s) => s !== 'queued' && s !== 'in_progress');
    assert.equal(done.status, 'completed');
    assert.ok(done.output.length > 0, 'a completed background response is never empty');
    assert.match(done.output_text, /\b11\b/);
    assert.ok(done.usage!.output_tokens > 0);
    const acct = await settled(server, account.id);
    assert.equal(toMicro(10) - toMicro(acct.credits), toMicro((done as any).svc));
    // The activity log has the run's row, like a POST's.
    const rows = (await server.admin('GET', `/activity?limit=50`)).body.data as { endpoint: string; account_id: string; status: number }[];
    assert.ok(rows.some((r) => r.account_id === account.id && r.endpoint === '/v1/responses' && r.status === 200));
    await assert.rejects(client.responses.cancel(done.id), (e: any) => e.status === 400 && e.code === 'response_not_cancellable');
  });

  test('refused before anything is stored: stream, store false, an unknown previous response; another account sees 404', async () => {
    const client = server.openai((await server.createKey()).key);
    await assert.rejects(client.responses.create({ model: 'agent', input: 'x', background: true, stream: true } as never), (e: any) => e.status === 400 && e.param === 'background');
    await assert.rejects(client.responses.create({ model: 'agent', input: 'x', background: true, store: false }), (e: any) => e.status === 400 && e.param === 'store');
    await assert.rejects(client.responses.create({ model: 'agent', input: 'x', background: true, previous_response_id: 'resp_nope' }), (e: any) => e.status === 404);
    const r = await client.responses.create({ model: 'agent', input: 'hello', background: true });
    const other = server.openai((await server.createKey()).key);
    await assert.rejects(other.responses.retrieve(r.id), (e: any) => e.status === 404);
    await assert.rejects(other.responses.cancel(r.id), (e: any) => e.status === 404);
  });
});

describe('cancelling a background response', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  before(async () => {
    upstream = await startFakeUpstream(async (_req, res) => {
      // A long stream: one word every 20 ms until the caller goes away.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 1000 && !res.destroyed; i++) {
        res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] })}\n\n`);
        await pause(20);
      }
      res.end();
    });
    server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20', UPSTREAM_BASE_URL: upstream.baseUrl, UPSTREAM_MODEL_AGENT: 'up', UPSTREAM_PRICE_INPUT_PER_MTOK: '1', UPSTREAM_PRICE_OUTPUT_PER_MTOK: '1', UPSTREAM_MAX_RETRIES: '0' });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('midway: cancelled, the upstream request aborted, only what ran charged, cancel again unchanged', async () => {
    const account = await server.createAccount(10);
    const client = server.openai((await server.createKey({ account_id: account.id })).key);
    const queued = await client.responses.create({ model: 'agent', input: 'write a long story', background: true, max_output_tokens: 4000 });
    await poll(client, queued.id, (s) => s === 'in_progress');
    for (let i = 0; i < 200 && upstream.requests.length === 0; i++) await pause(10);
    await pause(100); // some words have run
    const cancelled = await client.responses.cancel(queued.id);
    assert.equal(cancelled.status, 'cancelled');
    await Promise.race([upstream.requests.at(-1)!.closed, pause(3000).then(() => assert.fail('the upstream request was not aborted'))]);
    assert.equal((await client.responses.retrieve(queued.id)).status, 'cancelled');
    assert.equal((await client.responses.cancel(queued.id)).status, 'cancelled', 'unchanged');
    const acct = await settled(server, account.id);
    const charged = toMicro(10) - toMicro(acct.credits);
    assert.ok(charged > 0, 'what ran is charged');
    // 4000 output tokens at $1 a million would cost this much; far fewer ran.
    assert.ok(charged < toMicro((4000 / 1e6) * server.config.creditsPerUsd) / 2, `charged ${charged}`);
  });
});
