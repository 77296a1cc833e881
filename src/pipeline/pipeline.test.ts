// The pipeline without HTTP: the call runner (as a batch line, a WebSocket turn or a
// background job uses it) authenticates, admits, checks, runs, settles and logs a call
// with the same functions as a POST, with the same errors, charges and activity rows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { toMicro } from '../accounts/money.ts';
import { createChatCompletion } from '../contract/endpoints/chat.ts';
import { defineEndpoint } from '../contract/types.ts';
import { applied } from '../contract/fields.ts';
import { estimateInputTokens, Run } from '../credits/run.ts';
import { ApiError, serviceUnavailable } from '../errors.ts';
import { newId } from '../ids.ts';
import { Router } from '../http/router.ts';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import { newCall, type Call } from './call.ts';
import { authenticateCall } from './authenticate.ts';
import { finishCall } from './finish.ts';
import { runCall } from './runner.ts';

const withParams = defineEndpoint({
  operationId: 'testParams',
  method: 'GET',
  path: '/test/things/{thing_id}',
  family: 'test',
  summary: 'a route whose path parameter has a schema',
  params: { thing_id: z.string().regex(/^thing_/, 'must start with thing_') },
  response: { schema: z.object({ id: z.string() }) },
});

let server: TestServer;
before(async () => {
  server = await startTestServer({}, { routes: (r) => r.endpoint(withParams, async ({ params }) => ({ id: params.thing_id! })) });
});
after(() => server.close());

const silent = { level: 'silent', info() {}, warn() {}, error() {} };
const chatRoute = { auth: 'key' as const, contract: createChatCompletion, endpoint: '/v1/chat/completions' };

function handMadeCall(): Call {
  return newCall({ id: newId('req_'), method: 'POST', route: chatRoute, routeLabel: chatRoute.endpoint, ip: '127.0.0.1', log: silent });
}

async function rows(keyId: string) {
  await server.app.services.activity.flush();
  return server.app.services.store.db.selectFrom('activity').selectAll().where('key_id', '=', keyId).execute();
}

describe('a call without HTTP', () => {
  test('the runner takes it through authenticate, limits, contract, the handler with a Run, and finish: charged once, logged once', async () => {
    const services = server.app.services;
    const account = await server.createAccount(5);
    const { key, id: keyId } = await server.createKey({ account_id: account.id });
    let text = '';
    let slotHeld = false;
    const outcome = await runCall(services, { route: chatRoute, routeLabel: 'test', ip: '127.0.0.1', log: silent, key: { secret: key }, body: () => ({ model: 'agent', messages: [{ role: 'user', content: 'What is 6 * 7?' }], max_tokens: 50 }) }, async (call) => {
      slotHeld = call.slot !== null;
      assert.match(call.headers['x-ratelimit-limit-requests'] ?? '', /^\d+$/);
      const run = await Run.open(services, call, { key: call.key!, model: 'agent', input: estimateInputTokens(call.body.messages, 0), maxOutputTokens: 50 });
      for await (const e of run.meter(services.engines.for('chat', 'agent').chat({ model: 'agent', messages: [{ role: 'user', content: 'What is 6 * 7?' }], maxTokens: 50 }, run.signal))) {
        if (e.type === 'text-delta') text += e.delta;
      }
      return (await run.close()).credits;
    });
    assert.equal(slotHeld, true);
    assert.equal(outcome.status, 200);
    const credits = outcome.value!;
    assert.match(text, /42/);

    const [row] = await rows(keyId);
    assert.ok(row);
    assert.equal(row.request_id, outcome.call.id);
    assert.equal(row.status, 200);
    assert.equal(Number(row.credits_settled), credits);
    assert.ok(Number(row.output_tokens) > 0);
    const after = (await server.admin('GET', `/accounts/${account.id}`)).body;
    assert.equal(toMicro(5) - toMicro(after.credits), credits, 'the ledger charged what the row says');
    assert.equal(after.reserved_credits, 0);
    assert.equal(outcome.call.slot, null, 'the slot was given back');
    // Finishing twice changes nothing.
    await finishCall(services, outcome.call, 200);
    assert.equal((await rows(keyId)).length, 1);
  });

  test('refusals are the same errors a POST gets, and are logged the same way', async () => {
    const services = server.app.services;
    const { key, id: keyId } = await server.createKey();
    const body = { model: 'agent', messages: [{ role: 'user', content: 'hi' }], temperature: 9 };
    let ran = false;
    const refused = await runCall(services, { route: chatRoute, routeLabel: 'test', ip: '127.0.0.1', log: silent, key: { secret: key }, body: () => body }, async () => (ran = true));
    assert.equal(ran, false);
    assert.ok(refused.error instanceof ApiError);
    assert.equal(refused.status, 400);
    const viaHttp = await server.fetch('/v1/chat/completions', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.deepEqual(refused.error.toBody(), { ...(await viaHttp.json()) });
    const logged = await rows(keyId);
    assert.deepEqual(logged.map((r) => [r.status, r.error_code]).sort(), [[400, 'invalid_request'], [400, 'invalid_request']]);

    const wrongKey = await runCall(services, { route: chatRoute, routeLabel: 'test', ip: '127.0.0.1', log: silent, key: { secret: 'sk-agent-not-a-key' }, body: () => body }, async () => (ran = true));
    assert.equal(wrongKey.status, 401);
    assert.equal(ran, false);
  });

  test("a handler's own failure is a logged 500 that says nothing of it; a stopped call is the caller's error; the slot comes back either way", async () => {
    const services = server.app.services;
    const account = await server.createAccount(5);
    const { key } = await server.createKey({ account_id: account.id });
    const errors: unknown[] = [];
    const log = { ...silent, error: (o: object) => void errors.push(o) };
    const source = { route: chatRoute, routeLabel: 'test', ip: '127.0.0.1', log, key: { secret: key }, body: () => ({ model: 'agent', messages: [{ role: 'user', content: 'hi' }] }) };
    const failed = await runCall(services, source, async () => {
      throw new Error('internal detail');
    });
    assert.equal(failed.status, 500);
    assert.doesNotMatch(JSON.stringify(failed.error!.toBody()), /internal detail/);
    assert.equal(errors.length, 1);

    const stop = new AbortController();
    const stopped = await runCall(services, { ...source, signal: stop.signal, stopped: () => serviceUnavailable('stopped here') }, async (call) => {
      stop.abort();
      assert.equal(call.abort?.signal.aborted, true, "the caller's stop reaches the call");
      throw new Error('cut short');
    });
    assert.equal(stopped.error!.message, 'stopped here');
    assert.equal(errors.length, 1, 'a stopped call is no failure of ours');
    // Both slots are free: the account can run its full concurrency again.
    const again = await Promise.all(Array.from({ length: services.config.accountConcurrency }, () => runCall(services, source, async () => 'ok')));
    assert.deepEqual(new Set(again.map((o) => o.status)), new Set([200]));
  });

  test('a Run extends its reservation per step, and only as far as the account covers', async () => {
    const services = server.app.services;
    const account = await server.createAccount(1);
    const { key } = await server.createKey({ account_id: account.id });
    const call = handMadeCall();
    await authenticateCall(services, call, key);
    const run = await Run.open(services, call, { key: call.key!, model: 'agent', input: estimateInputTokens('x', 0), maxOutputTokens: 1_000 });
    const first = call.creditsReserved;
    await run.extend(estimateInputTokens('x'.repeat(100), 0), 1_000);
    assert.ok(call.creditsReserved > first, 'the next step holds more');
    const held = (await server.admin('GET', `/accounts/${account.id}`)).body.reserved_credits;
    assert.equal(toMicro(held), call.creditsReserved);
    // A step the account cannot cover is refused; what was held stays as it was.
    await assert.rejects(run.extend(estimateInputTokens('x'.repeat(100), 0), 10_000_000), (e: unknown) => e instanceof ApiError && e.code === 'insufficient_quota');
    assert.equal(toMicro((await server.admin('GET', `/accounts/${account.id}`)).body.reserved_credits), call.creditsReserved);
    await run.close();
    assert.equal((await server.admin('GET', `/accounts/${account.id}`)).body.reserved_credits, 0);
  });
});

describe('contract tables', () => {
  test('path parameters are checked from the table', async () => {
    const { key } = await server.createKey();
    assert.deepEqual(await (await server.fetch('/v1/test/things/thing_1', { key })).json(), { id: 'thing_1' });
    const res = await server.fetch('/v1/test/things/other', { key });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { param: string; message: string } };
    assert.equal(body.error.param, 'thing_id');
    assert.match(body.error.message, /must start with thing_/);
  });

  test('a table that cannot work stops registration, not a request', () => {
    const router = new Router(server.app.http, server.app.services);
    const missing = defineEndpoint({
      ...withParams,
      operationId: 'testBadTable',
      method: 'POST',
      path: '/test/bad',
      body: { type: 'json', required: ['nowhere'], fields: { x: applied(z.string()) } },
    });
    assert.throws(() => router.endpoint(missing, async () => ({})), /required field 'nowhere' is not in the table/);
    const orphan = defineEndpoint({ ...missing, body: { type: 'json', fields: { 'a.b': applied(z.string()) } } });
    assert.throws(() => router.endpoint(orphan, async () => ({})), /'a\.b' classifies a member of 'a'/);
  });
});
