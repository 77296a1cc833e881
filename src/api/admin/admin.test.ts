// The admin API: accounts (by id or name), credits, keys (secret shown once, stored
// hashed), the activity log with its filters and pagination, the idempotent bootstrap key
// and its starting credits, the stored admin token.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createApp } from '../../app.ts';
import { createChatCompletion } from '../../contract/endpoints/chat.ts';
import { removeAdminToken, storeAdminToken } from '../../keys/admin-tokens.ts';
import { ADMIN_TOKEN, ALL_SWITCHES, startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const testChat = { ...createChatCompletion, operationId: 'testChatAdmin', path: '/test/chat/completions' } as const;
const BOOTSTRAP = 'sk-agent-bootstrap-test-secret-0123456789';

let server: TestServer;
before(async () => {
  server = await startTestServer({ AGENT_API_BOOTSTRAP_KEY: BOOTSTRAP }, { routes: (r) => r.endpoint(testChat, async () => ({ ok: true })) });
});
after(() => server.close());

describe('admin authentication', () => {
  test('the admin API needs the admin token; an API key is not enough', async () => {
    assert.equal((await server.fetch('/admin/v1/keys')).status, 401);
    assert.equal((await server.fetch('/admin/v1/keys', { key: 'wrong' })).status, 401);
    assert.equal((await server.fetch('/admin/v1/keys', { key: BOOTSTRAP })).status, 401);
    assert.equal((await server.fetch('/admin/v1/keys', { key: ADMIN_TOKEN })).status, 200);
  });

  test('without AGENT_API_ADMIN_TOKEN a stored token opens the admin API', async () => {
    const stored = await startTestServer({ AGENT_API_ADMIN_TOKEN: '', AGENT_API_KEY_CACHE_MS: '0' });
    try {
      assert.equal((await stored.fetch('/admin/v1/keys', { key: 'stored-token-0123456789' })).status, 401);
      await storeAdminToken(stored.app.services.store.db, 'stored-token-0123456789', { replace: true });
      assert.equal((await stored.fetch('/admin/v1/keys', { key: 'stored-token-0123456789' })).status, 200);
      assert.equal((await stored.fetch('/admin/v1/keys', { key: 'stored-token-012345678' })).status, 401);
      assert.equal((await stored.fetch('/admin/v1/keys')).status, 401);
    } finally {
      await stored.close();
    }
  });

  test('AGENT_API_ADMIN_TOKEN wins over a stored token', async () => {
    await storeAdminToken(server.app.services.store.db, 'stored-but-unused-0123456789', { replace: true });
    try {
      assert.equal((await server.fetch('/admin/v1/keys', { key: 'stored-but-unused-0123456789' })).status, 401);
      assert.equal((await server.fetch('/admin/v1/keys', { key: ADMIN_TOKEN })).status, 200);
    } finally {
      await removeAdminToken(server.app.services.store.db);
    }
  });

  test('without AGENT_API_ADMIN_TOKEN the admin API is closed', async () => {
    const closed = await startTestServer({ AGENT_API_ADMIN_TOKEN: '' });
    try {
      const res = await closed.fetch('/admin/v1/keys', { key: 'anything' });
      assert.equal(res.status, 401);
      assert.match(((await res.json()) as { error: { message: string } }).error.message, /AGENT_API_ADMIN_TOKEN/);
    } finally {
      await closed.close();
    }
  });
});

describe('accounts and credits', () => {
  test('create an account with credits, add and remove credits', async () => {
    const created = await server.admin('POST', '/accounts', { name: 'acme', credits: 12.5 });
    assert.equal(created.status, 201);
    assert.match(created.body.id, /^acct_/);
    assert.equal(created.body.credits, 12.5);
    const added = await server.admin('POST', `/accounts/${created.body.id}/credits`, { amount: 7.25 });
    assert.equal(added.body.credits, 19.75);
    const removed = await server.admin('POST', `/accounts/${created.body.id}/credits`, { amount: -4.75 });
    assert.equal(removed.body.credits, 15);
    assert.equal((await server.admin('GET', `/accounts/${created.body.id}`)).body.available_credits, 15);
    assert.equal((await server.admin('POST', '/accounts', { name: 'acme', credits: 1 })).status, 400, 'names are unique');
    assert.equal((await server.admin('POST', '/accounts/acct_missing/credits', { amount: 1 })).status, 404);
    const bad = await server.admin('POST', '/accounts', { name: 'x', credits: 'lots' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'credits');
  });

  test('an account is taken by name wherever an id is: credits, keys, filters; names cannot look like ids', async () => {
    const created = await server.admin('POST', '/accounts', { name: 'named-acct', credits: 1 });
    assert.equal((await server.admin('GET', '/accounts/named-acct')).body.id, created.body.id);
    assert.equal((await server.admin('POST', '/accounts/named-acct/credits', { amount: 2 })).body.credits, 3);
    const key = await server.admin('POST', '/keys', { account_id: 'named-acct', name: 'k' });
    assert.equal(key.status, 201);
    assert.equal(key.body.account_id, created.body.id);
    assert.deepEqual((await server.admin('GET', '/keys?account_id=named-acct')).body.data.map((k: { id: string }) => k.id), [key.body.id]);
    await server.fetch('/v1/models', { key: key.body.key });
    assert.equal((await server.admin('GET', '/activity?account_id=named-acct')).body.data.length, 1);
    assert.equal((await server.admin('GET', '/activity?account_id=nobody')).body.data.length, 0, 'an unknown account filters to nothing');
    const missing = await server.admin('POST', '/keys', { account_id: 'nobody', name: 'k' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.param, 'account_id');
    const lookalike = await server.admin('POST', '/accounts', { name: 'acct_123' });
    assert.equal(lookalike.status, 400);
    assert.equal(lookalike.body.error.param, 'name');
  });
});

describe('money takes bounded, finite, whole micro-credit values', () => {
  test('Infinity-sized, sub-micro and over-the-cap amounts are 400s naming the field; nothing changes', async () => {
    for (const credits of [1e308, 1e10, 1e-7, -1]) {
      const res = await server.admin('POST', '/accounts', { name: `bad-${credits}`, credits });
      assert.equal(res.status, 400, `credits ${credits}`);
      assert.equal(res.body.error.param, 'credits');
    }
    const account = await server.createAccount(5);
    for (const amount of [-1e308, 1e308, 1e-7, 0.0000001, 0]) {
      const res = await server.admin('POST', `/accounts/${account.id}/credits`, { amount });
      assert.equal(res.status, 400, `amount ${amount}`);
      assert.equal(res.body.error.param, 'amount');
      assert.equal(res.body.error.code, 'invalid_request');
    }
    assert.equal((await server.admin('GET', `/accounts/${account.id}`)).body.credits, 5);
    const rows = await server.app.services.store.db.selectFrom('credit_transactions').selectAll().where('account_id', '=', account.id).execute();
    assert.equal(rows.length, 1, 'only the initial grant: refused amounts record nothing');
  });

  test('a debit below zero is refused unless it is a correction; the balance cap holds', async () => {
    const account = await server.createAccount(5);
    const refused = await server.admin('POST', `/accounts/${account.id}/credits`, { amount: -5.000001 });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.param, 'amount');
    assert.match(refused.body.error.message, /below zero/);
    assert.equal((await server.admin('POST', `/accounts/${account.id}/credits`, { amount: -5 })).body.credits, 0);
    const corrected = await server.admin('POST', `/accounts/${account.id}/credits`, { amount: -2, correction: true, reason: 'undo a mistaken grant' });
    assert.equal(corrected.status, 200);
    assert.equal(corrected.body.credits, -2);
    // A grant to an account below zero is fine even when it stays below zero.
    assert.equal((await server.admin('POST', `/accounts/${account.id}/credits`, { amount: 1 })).body.credits, -1);
    assert.equal((await server.admin('POST', `/accounts/${account.id}/credits`, { amount: 0.000001 })).body.credits, -0.999999);

    const rich = await server.createAccount(999_999_999);
    const over = await server.admin('POST', `/accounts/${rich.id}/credits`, { amount: 2 });
    assert.equal(over.status, 400);
    assert.equal(over.body.error.param, 'amount');
    assert.equal((await server.admin('POST', `/accounts/${rich.id}/credits`, { amount: 1 })).body.credits, 1_000_000_000);
  });
});

describe('keys', () => {
  test('the secret is shown once, at creation, and never stored in plaintext', async () => {
    const account = await server.createAccount();
    const created = await server.admin('POST', '/keys', {
      account_id: account.id,
      name: 'ci',
      permissions: { embeddings: true, files: true },
      models: ['agent'],
      ip_allowlist: ['127.0.0.1', '10.0.0.0/8'],
      rpm: 60,
      max_output_tokens: 2048,
      limits: [{ metric: 'tokens', period: 'day', max: 10000 }],
      expires_at: Math.floor(Date.now() / 1000) + 3600,
    });
    assert.equal(created.status, 201);
    const secret: string = created.body.key;
    assert.match(secret, /^sk-agent-[A-Za-z0-9_-]{43}$/);
    assert.equal(created.body.permissions.embeddings, true);
    assert.equal(created.body.permissions.audio, false, 'switches are off until turned on');
    assert.deepEqual(created.body.models, ['agent']);
    assert.equal(created.body.rpm, 60);
    assert.equal(created.body.max_output_tokens, 2048);

    const fetched = await server.admin('GET', `/keys/${created.body.id}`);
    assert.equal(fetched.status, 200);
    assert.equal(fetched.body.key, undefined);
    assert.ok(!JSON.stringify(fetched.body).includes(secret));
    const listed = await server.admin('GET', `/keys?account_id=${account.id}`);
    assert.deepEqual(listed.body.data.map((k: { id: string }) => k.id), [created.body.id]);
    assert.ok(!JSON.stringify(listed.body).includes(secret));

    // Read the database itself: only the sha256 of the secret is there.
    const rows = await server.app.services.store.db.selectFrom('api_keys').selectAll().execute();
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(secret), 'the plaintext key is not in the database');
    assert.ok(!dump.includes(secret.slice(9, 30)), 'nor any long part of it');
    const row = rows.find((r) => r.id === created.body.id)!;
    assert.equal(row.key_hash, createHash('sha256').update(secret).digest('hex'));

    // And the key works.
    assert.equal((await server.fetch('/v1/models', { key: secret })).status, 200);
  });

  test('update and revoke; invalid input is a 400 with param', async () => {
    const { id, key } = await server.createKey();
    const patched = await server.admin('PATCH', `/keys/${id}`, { name: 'renamed', permissions: { audio: true }, rpm: null });
    assert.equal(patched.body.name, 'renamed');
    assert.equal(patched.body.permissions.audio, true);
    const revoked = await server.admin('DELETE', `/keys/${id}`);
    assert.equal(revoked.body.revoked, true);
    assert.equal((await server.fetch('/v1/models', { key })).status, 401);
    assert.equal((await server.admin('GET', '/keys/key_missing')).status, 404);

    const account = await server.createAccount();
    const badPermission = await server.admin('POST', '/keys', { account_id: account.id, name: 'x', permissions: { teleport: true } });
    assert.equal(badPermission.status, 400);
    assert.equal(badPermission.body.error.param, 'permissions');
    const badCidr = await server.admin('POST', '/keys', { account_id: account.id, name: 'x', ip_allowlist: ['300.1.1.1/8'] });
    assert.equal(badCidr.body.error.param, 'ip_allowlist[0]');
    const badLimit = await server.admin('POST', '/keys', { account_id: account.id, name: 'x', limits: [{ metric: 'tokens', period: 'year', max: 1 }] });
    assert.equal(badLimit.body.error.param, 'limits[0].period');
    const badModel = await server.admin('POST', '/keys', { account_id: account.id, name: 'x', models: ['gpt-4o'] });
    assert.equal(badModel.body.error.param, 'models[0]');
    assert.equal((await server.admin('POST', '/keys', { account_id: 'acct_missing', name: 'x' })).status, 404);
    const past = await server.admin('POST', '/keys', { account_id: account.id, name: 'x', expires_at: 1000 });
    assert.equal(past.body.error.param, 'expires_at');
  });
});

describe('activity log', () => {
  test('one row per request, found by key, request id and client request id, with pagination', async () => {
    const { id: keyId, key } = await server.createKey();
    const client = server.openai(key);
    const listed = await client.models.list({ headers: { 'X-Client-Request-Id': 'trace-abc-1' } }).withResponse();
    for (let i = 0; i < 4; i++) await server.fetch('/v1/models', { key });
    await server.fetch('/v1/test/chat/completions', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'x' }], user: 'end-user-7', safety_identifier: 'sid-9', temperature: 9 }),
    });

    const byClient = await server.admin('GET', '/activity?client_request_id=trace-abc-1');
    assert.equal(byClient.body.data.length, 1);
    const row = byClient.body.data[0];
    assert.equal(row.key_id, keyId);
    assert.equal(row.request_id, listed.request_id);
    assert.equal(row.endpoint, '/v1/models');
    assert.equal(row.method, 'GET');
    assert.equal(row.status, 200);
    assert.equal(typeof row.latency_ms, 'number');
    assert.ok(row.account_id.startsWith('acct_'));

    const byRequest = await server.admin('GET', `/activity?request_id=${listed.request_id}`);
    assert.equal(byRequest.body.data[0].id, row.id);

    const byKey = await server.admin('GET', `/activity?key_id=${keyId}`);
    assert.equal(byKey.body.data.length, 6);
    const failed = byKey.body.data[0];
    assert.equal(failed.status, 400, 'newest first; refused requests are logged too');
    assert.equal(failed.error_code, 'invalid_request');
    assert.equal(failed.model, 'agent');
    assert.equal(failed.user, 'end-user-7');
    assert.equal(failed.safety_identifier, 'sid-9');

    const page1 = await server.admin('GET', `/activity?key_id=${keyId}&limit=4`);
    assert.equal(page1.body.data.length, 4);
    assert.equal(page1.body.has_more, true);
    const page2 = await server.admin('GET', `/activity?key_id=${keyId}&limit=4&after=${page1.body.last_id}`);
    assert.equal(page2.body.data.length, 2);
    assert.equal(page2.body.has_more, false);
    const ids = [...page1.body.data, ...page2.body.data].map((r: { id: string }) => r.id);
    assert.equal(new Set(ids).size, 6);
    assert.deepEqual(ids, [...ids].sort().reverse());
  });
});

describe('bootstrap key', () => {
  test('AGENT_API_BOOTSTRAP_KEY gives account default and a key with every switch and no limits, idempotently', async () => {
    const res = await server.fetch('/v1/models', { key: BOOTSTRAP });
    assert.equal(res.status, 200);
    const keys = (await server.admin('GET', '/keys')).body.data.filter((k: { name: string }) => k.name === 'bootstrap');
    assert.equal(keys.length, 1);
    // Every switch but Moderate requests, a restriction the operator turns on.
    assert.deepEqual(keys[0].permissions, { ...ALL_SWITCHES, moderate: false });
    assert.deepEqual(keys[0].limits, []);
    assert.equal(keys[0].rpm, null);
    const account = await server.admin('GET', `/accounts/${keys[0].account_id}`);
    assert.equal(account.body.name, 'default');
    assert.equal(account.body.credits, 100, 'AGENT_API_BOOTSTRAP_CREDITS (default 100), granted once');

    // A second start on the same database changes nothing.
    const again = await createApp(server.config);
    await again.close();
    const after = (await server.admin('GET', '/keys')).body.data.filter((k: { name: string }) => k.name === 'bootstrap');
    assert.equal(after.length, 1);
    const defaults = (await server.admin('GET', '/accounts')).body.data.filter((a: { name: string }) => a.name === 'default');
    assert.equal(defaults.length, 1);
    assert.equal(defaults[0].credits, 100, 'the starting credits are not granted again');
  });
});
