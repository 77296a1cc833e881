// A batch line runs through the same pipeline as a POST: the contract refuses what a
// POST would be refused (the line's response is the same error), the key's limits
// apply, credits are charged once and logged once, and more lines than the account's
// concurrency wait for a slot instead of failing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { toMicro } from '../../accounts/money.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { chatBatchEndpoint } from '../chat/chat-call.ts';
import { ToolRegistry } from '../../tools/registry.ts';
import { completionBatchEndpoint } from '../completions/completion-call.ts';
import { runLine } from './run-line.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({ AGENT_API_ACCOUNT_CONCURRENCY: '2' });
});
after(() => server.close());

const silent = { level: 'silent', info() {}, warn() {}, error() {} };
const noStore = { save: async () => undefined };

test('lines answer like POSTs, wait for slots, and are charged and logged once each', async () => {
  const services = server.app.services;
  const account = await server.createAccount(10);
  const { id: keyId } = await server.createKey({ account_id: account.id });
  const key = (await services.keys.get(keyId))!;
  const tools = new ToolRegistry({ outbound: services.outbound, webSearch: null, prices: { webSearchUsd: 0, pageUsd: 0 }, sandboxTimeoutMs: 1_000, webMaxUses: 1 });
  const chat = chatBatchEndpoint(services, noStore, tools);
  const signal = new AbortController().signal;
  const outcomes = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      runLine(services, chat, key, { customId: `line-${i}`, body: { model: 'agent', messages: [{ role: 'user', content: `What is ${i} + ${i}?` }] }, ip: '127.0.0.1', log: silent, signal }),
    ),
  );
  for (const [i, o] of outcomes.entries()) {
    assert.equal(o.response.status_code, 200, JSON.stringify(o.response.body));
    assert.equal(o.custom_id, `line-${i}`);
    assert.match(o.id, /^batch_req_/);
    assert.equal(o.response.body.object, 'chat.completion');
    assert.ok(JSON.stringify(o.response.body).includes(String(i + i)));
  }
  const bad = await runLine(services, chat, key, { customId: 'bad', body: { model: 'agent', messages: [], temperature: 9 }, ip: '127.0.0.1', log: silent, signal });
  assert.equal(bad.response.status_code, 400);
  assert.equal((bad.response.body as { error: { code: string } }).error.code, 'invalid_request');
  const streaming = await runLine(services, completionBatchEndpoint(services), key, { customId: 's', body: { model: 'agent', prompt: 'x', stream: true }, ip: '127.0.0.1', log: silent, signal });
  assert.equal(streaming.response.status_code, 400);

  await services.activity.flush();
  const rows = await services.store.db.selectFrom('activity').selectAll().where('key_id', '=', keyId).execute();
  assert.equal(rows.length, 10, 'one row per line, refused ones included');
  const charged = outcomes.reduce((s, o) => s + o.credits, 0);
  assert.equal(rows.reduce((s, r) => s + Number(r.credits_settled), 0), charged);
  const after = (await server.admin('GET', `/accounts/${account.id}`)).body;
  assert.equal(toMicro(10) - toMicro(after.credits), charged, 'the ledger charged what the lines report');
  assert.equal(after.reserved_credits, 0);
  for (const o of outcomes) assert.equal(toMicro((o.response.body as { svc: number }).svc), o.credits);
});

test('a revoked key refuses the lines that run after it', async () => {
  const services = server.app.services;
  const { id: keyId } = await server.createKey();
  await server.admin('DELETE', `/keys/${keyId}`);
  const key = (await services.keys.get(keyId))!;
  const out = await runLine(services, completionBatchEndpoint(services), key, { customId: 'r', body: { model: 'agent', prompt: 'x' }, ip: '127.0.0.1', log: silent, signal: new AbortController().signal });
  assert.equal(out.response.status_code, 401);
});
