// The Responses `mcp` tool (issue 20 items 6 and 7) with the official openai SDK against a
// real @modelcontextprotocol/sdk server started here, which checks the header and token
// it was given and logs every call: listing (allowed_tools as names and as a filter, the
// listing reused along a previous_response_id chain), require_approval never / always /
// per tool, approve (exactly one call with exactly the stored arguments, the model not
// asked again) and decline (no call), an approval answered twice or unknown (400), a
// tool error, a refused server_url, events against the reference, a continuation on a
// second instance (PostgreSQL), and canary credentials through every flow (background
// included) absent from every table, blob and log line afterwards.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { startFakeMcp, type FakeMcp } from '../../../test/helpers/fake-mcp.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { checkStream, validateResponseObject } from './event-checks.test-support.ts';

const TOKEN = 'mcp-token-canary-93af01';
const HEADER = 'mcp-header-canary-5b7e22';
const T = { timeout: 120_000 };

let fake: FakeMcp;
let mcpUrl: string;
before(async () => {
  // Only with the header and token the tool entry gave.
  fake = await startFakeMcp(TOKEN, ['x-orders-key', HEADER]);
  mcpUrl = fake.url;
});
after(() => fake.close());

const logs = new PassThrough();
const logLines: string[] = [];
logs.on('data', (d: Buffer) => logLines.push(d.toString()));
let server: TestServer;
let key: string;
before(async () => {
  server = await startTestServer({ AGENT_API_OUTBOUND_ALLOW: '127.0.0.1', LOG_LEVEL: 'debug' }, { logStream: logs });
  key = (await server.createKey({ permissions: { remote_mcp: true } })).key;
});
after(() => server.close());

const orders = (extra: Record<string, unknown> = {}) => ({
  type: 'mcp' as const,
  server_label: 'orders',
  server_url: mcpUrl,
  headers: { 'X-Orders-Key': HEADER },
  authorization: TOKEN,
  ...extra,
});
const ask = (input: string, tool: Record<string, unknown>, more: Record<string, unknown> = {}) =>
  server.openai(key).responses.create({ model: 'agent', input, tools: [tool as never], parallel_tool_calls: false, ...more } as never) as Promise<any>;

test('never: the tools listed (allowed names only), the call run once with the model\'s arguments, header and token received', T, async () => {
  fake.calls.length = 0;
  const r = await ask('Look up order 42', orders({ require_approval: 'never', allowed_tools: ['lookup_order'] }));
  validateResponseObject(r);
  assert.deepEqual(r.output.map((i: any) => i.type), ['mcp_list_tools', 'mcp_call', 'message']);
  assert.deepEqual(r.output[0].tools.map((t: any) => t.name), ['lookup_order']);
  const call = r.output[1];
  assert.equal(call.status, 'completed');
  assert.equal(call.name, 'lookup_order');
  assert.match(call.output, /has shipped/);
  assert.equal(fake.calls.length, 1);
  assert.deepEqual(fake.calls[0]!.arguments, JSON.parse(call.arguments));
  assert.deepEqual([fake.calls[0]!.authorization, fake.calls[0]!.header], [`Bearer ${TOKEN}`, HEADER]);
  // The echoed tool keeps neither secret.
  assert.equal(JSON.stringify(r.tools).includes(TOKEN) || JSON.stringify(r.tools).includes(HEADER), false);
});

test('allowed_tools as a filter (read_only), and a tool error as a failed mcp_call', T, async () => {
  const r = await ask('Look up order 7', orders({ require_approval: 'never', allowed_tools: { read_only: true } }));
  assert.deepEqual(r.output[0].tools.map((t: any) => t.name), ['lookup_order']);
  const failed = await ask('Refund payment p-1', orders({ require_approval: 'never', allowed_tools: ['refund_payment'] }));
  const call = failed.output.find((i: any) => i.type === 'mcp_call');
  assert.equal(call.status, 'failed');
  assert.equal(call.error.type, 'mcp_tool_execution_error');
  assert.equal(failed.status, 'completed');
});

test('always (the default): the response ends with an approval request; approved, the stored call runs exactly once, without asking the model again', T, async () => {
  fake.calls.length = 0;
  const first = await ask('Cancel order 42', orders({ allowed_tools: ['cancel_order'] }));
  const request = first.output.at(-1);
  assert.equal(request.type, 'mcp_approval_request');
  assert.deepEqual([request.server_label, request.name], ['orders', 'cancel_order']);
  assert.equal(fake.calls.length, 0, 'nothing runs before approval');
  const listsBefore = fake.lists;

  const stream = await server.openai(key).responses.create({
    model: 'agent',
    previous_response_id: first.id,
    input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
    tools: [orders({ allowed_tools: ['cancel_order'] }) as never],
    stream: true,
  });
  const events: any[] = [];
  for await (const e of stream) events.push(e);
  const second = checkStream(events);
  assert.equal(fake.lists, listsBefore, 'the listing of the chain is reused');
  assert.deepEqual(second.output.map((i: any) => i.type), ['mcp_call', 'message']);
  const call = second.output[0];
  assert.deepEqual([call.approval_request_id, call.arguments, call.status], [request.id, request.arguments, 'completed']);
  assert.equal(fake.calls.length, 1);
  assert.deepEqual(fake.calls[0]!.arguments, JSON.parse(request.arguments));
  assert.match(second.output[1].content[0].text, /is cancelled/);

  // The same approval again, or an unknown one: 400, nothing runs.
  for (const id of [request.id, 'mcpr_unknown']) {
    await assert.rejects(
      server.openai(key).responses.create({ model: 'agent', previous_response_id: second.id, input: [{ type: 'mcp_approval_response', approval_request_id: id, approve: true }], tools: [orders() as never] }),
      (e: any) => e.status === 400 && e.error?.param === 'input[0].approval_request_id',
    );
  }
  assert.equal(fake.calls.length, 1);
});

test('declined: nothing runs and the model is told; per-tool approval runs the never tools at once', T, async () => {
  fake.calls.length = 0;
  const first = await ask('Cancel order 9', orders({ allowed_tools: ['cancel_order'] }));
  const request = first.output.at(-1);
  const declined = await server.openai(key).responses.create({
    model: 'agent',
    previous_response_id: first.id,
    input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false, reason: 'not now' } as never],
    tools: [orders({ allowed_tools: ['cancel_order'] }) as never],
  });
  assert.equal(fake.calls.length, 0);
  assert.equal(declined.status, 'completed');
  assert.match(declined.output_text, /declined/);

  const mixed = await ask('Look up order 5', orders({ require_approval: { never: { tool_names: ['lookup_order'] } } }));
  assert.ok(mixed.output.some((i: any) => i.type === 'mcp_call' && i.name === 'lookup_order'));
  const needs = await ask('Cancel order 5', orders({ require_approval: { never: { tool_names: ['lookup_order'] } } }));
  assert.equal(needs.output.at(-1).type, 'mcp_approval_request');
});

test('refused before any model runs: a private or non-https server_url, and a key without the switch', T, async () => {
  for (const url of ['https://10.0.0.1/mcp', 'http://example.com/mcp']) {
    await assert.rejects(ask('Look up order 1', orders({ server_url: url })), (e: any) => e.status === 400 && e.error?.param === 'tools[0].server_url');
  }
  // A hosted connector is refused by the tool's field table, naming the member.
  await assert.rejects(ask('x', { type: 'mcp', server_label: 'c', connector_id: 'connector_gmail', server_url: mcpUrl }), (e: any) => e.status === 400 && e.error?.param === 'tools[0].connector_id');
  const { key: plain } = await server.createKey({});
  await assert.rejects(server.openai(plain).responses.create({ model: 'agent', input: 'x', tools: [orders() as never] }), (e: any) => e.status === 403);
});

test('continued on a second instance', { ...T, skip: process.env.TEST_DATABASE !== 'postgres' && 'two instances share a database on PostgreSQL only' }, async () => {
  const other = await startTestServer({ AGENT_API_OUTBOUND_ALLOW: '127.0.0.1', DATABASE_URL: server.config.database.kind === 'postgres' ? server.config.database.url : '', AGENT_API_INSTANCE_ID: 'second' });
  try {
    fake.calls.length = 0;
    const first = await ask('Cancel order 77', orders({ allowed_tools: ['cancel_order'] }));
    const request = first.output.at(-1);
    const second = await other.openai(key).responses.create({
      model: 'agent',
      previous_response_id: first.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      tools: [orders({ allowed_tools: ['cancel_order'] }) as never],
    });
    assert.equal(second.output[0]!.type, 'mcp_call');
    assert.equal(fake.calls.length, 1);
  } finally {
    await other.close();
  }
});

test('background: runs with the credentials held in memory; afterwards neither canary is in any table, blob or log line', T, async () => {
  fake.calls.length = 0;
  const queued = await ask('Look up order 11', orders({ require_approval: 'never', allowed_tools: ['lookup_order'] }), { background: true });
  let done = queued;
  for (let i = 0; i < 600 && ['queued', 'in_progress'].includes(done.status); i++) {
    await new Promise((r) => setTimeout(r, 50));
    done = await server.openai(key).responses.retrieve(queued.id);
  }
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  assert.ok(fake.calls.some((c) => c.authorization === `Bearer ${TOKEN}` && c.header === HEADER), 'the server received them');

  await server.app.services.activity.flush();
  const { db } = server.app.services.store;
  const tables = await db.introspection.getTables();
  for (const t of tables) {
    const rows = await sql`select * from ${sql.table(t.name)}`.execute(db);
    const text = JSON.stringify(rows.rows, (_k, v) => (typeof v === 'bigint' ? String(v) : Buffer.isBuffer(v) ? v.toString('latin1') : v));
    assert.equal(text.includes(TOKEN), false, `token in table ${t.name}`);
    assert.equal(text.includes(HEADER), false, `header in table ${t.name}`);
  }
  const walk = (dir: string): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(path.join(dir, d.name)) : [path.join(dir, d.name)])) : []);
  for (const file of walk(server.config.blobDir)) {
    const bytes = fs.readFileSync(file).toString('latin1');
    assert.equal(bytes.includes(TOKEN) || bytes.includes(HEADER), false, `canary in blob ${file}`);
  }
  const logged = logLines.join('');
  assert.ok(logged.length > 0);
  assert.equal(logged.includes(TOKEN), false, 'token in the logs');
  assert.equal(logged.includes(HEADER), false, 'header in the logs');
});

test('a background response whose credentials were held by another process (a restart) ends failed saying why, and fake.calls nothing', T, async () => {
  fake.calls.length = 0;
  const { backgroundResponses } = await import('./background.ts');
  const { StoredResponses } = await import('./stored-responses.ts');
  const { ToolRegistry } = await import('../../tools/registry.ts');
  const services = server.app.services;
  const { id: keyId, key: secret } = await server.createKey({ permissions: { remote_mcp: true } });
  const record = (await services.keys.get(keyId))!;
  // Another process's background responses: it holds the credentials, this server's runner does not.
  const tools = new ToolRegistry({ outbound: services.outbound, webSearch: null, prices: { webSearchUsd: 0, pageUsd: 0 }, sandboxTimeoutMs: 1_000, webMaxUses: 1 });
  const before = backgroundResponses(services, { stored: new StoredResponses(services.store.db), tools });
  const body = { model: 'agent', input: 'Look up order 3', background: true, tools: [orders({ require_approval: 'never', allowed_tools: ['lookup_order'] })] };
  const queued = await before.enqueue({ body: body as never, call: { ip: '127.0.0.1' } as never, key: record });
  let done: any = queued;
  for (let i = 0; i < 600 && ['queued', 'in_progress'].includes(done.status); i++) {
    await new Promise((r) => setTimeout(r, 50));
    done = await server.openai(secret).responses.retrieve(queued.id);
  }
  assert.equal(done.status, 'failed');
  assert.match(done.error.message, /kept in memory only, and the service restarted/);
  assert.equal(fake.calls.length, 0);
});

test('one approval answered by several requests at once, or again with store false: its call runs exactly once', T, async () => {
  fake.calls.length = 0;
  const first = await ask('Cancel order 64', orders({ allowed_tools: ['cancel_order'] }));
  const request = first.output.at(-1);
  const answer = () =>
    server.openai(key).responses.create({
      model: 'agent',
      previous_response_id: first.id,
      store: false,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      tools: [orders({ allowed_tools: ['cancel_order'] }) as never],
    });
  const outcomes = await Promise.allSettled([answer(), answer(), answer()]);
  assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, JSON.stringify(outcomes.map((o) => o.status)));
  for (const o of outcomes) if (o.status === 'rejected') assert.equal((o.reason as any).status, 400);
  await assert.rejects(answer(), (e: any) => e.status === 400);
  assert.equal(fake.calls.length, 1);
});

test("what the model reads: each approval request's call followed at once by what it came to, whatever the input added", T, async () => {
  const { approvalOutcomes, toMessages } = await import('./to-messages.ts');
  const items = [
    { type: 'message', id: 'm1', role: 'user', content: [{ type: 'input_text', text: 'Cancel order 1' }] },
    { type: 'mcp_approval_request', id: 'mcpr_a', server_label: 'orders', name: 'cancel_order', arguments: '{"order":"1"}' },
    { type: 'mcp_approval_response', id: 'x1', approval_request_id: 'mcpr_a', approve: false },
    { type: 'message', id: 'm2', role: 'user', content: [{ type: 'input_text', text: 'and now?' }] },
  ] as any[];
  const approvals = approvalOutcomes(items);
  const messages = toMessages(items, { files: new Map(), earlier: new Map(), approvals });
  assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'user']);
  assert.match(String(messages[2]!.content), /declined/);
});
