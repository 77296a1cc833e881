// The CLI works on the configured database: accounts (by id or name), credits, keys
// (created, listed, paused, revoked), the activity log, the admin token; a running server
// sees the result, and the CLI says when. Wrong command lines get one line and the usage.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../test/helpers/test-server.ts';

const run = promisify(execFile);
const bin = path.resolve(import.meta.dirname, '../bin/agent-api.js');

// Command-line parsing opens no database: the PostgreSQL pass need not repeat it.
const parsingOnly = process.env.TEST_DATABASE === 'postgres' && 'opens no database: the SQLite pass runs it';

let server: TestServer;
let cliEnv: NodeJS.ProcessEnv;
before(async () => {
  server = await startTestServer({ AGENT_API_KEY_CACHE_MS: '0' });
  const db = server.config.database;
  cliEnv = { ...process.env, DATA_DIR: server.config.dataDir, DATABASE_URL: db.kind === 'postgres' ? db.url : `sqlite:${db.file}`, AGENT_API_KEY_CACHE_MS: '0' };
});
after(() => server.close());

async function cli(...args: string[]) {
  const { stdout } = await run(process.execPath, [bin, ...args], { env: cliEnv });
  return JSON.parse(stdout);
}

/** Exit code and both outputs, failing or not. */
async function cliRaw(args: string[], env = cliEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Polls `check` until it returns true: a bounded number of tries, no timing assumptions. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`${what}: not seen after 200 tries`);
}

test('create an account and a key, use it, pause and revoke it', async () => {
  const account = await cli('accounts', 'create', '--name', 'cli-acct', '--credits', '3');
  assert.equal(account.credits, 3);
  assert.equal((await cli('credits', 'add', '--account', account.id, '--amount', '2')).credits, 5);
  const key = await cli('keys', 'create', '--account', account.id, '--name', 'from-cli', '--permissions', 'embeddings,files', '--models', 'agent', '--limit', 'requests:day:100', '--rpm', '30', '--max-output-tokens', '256');
  assert.match(key.key, /^sk-agent-/);
  assert.equal(key.max_output_tokens, 256);
  assert.equal(key.permissions.files, true);
  assert.deepEqual(key.limits, [{ metric: 'requests', period: 'day', max: 100 }]);

  const listed = await cli('keys', 'list', '--account', account.id);
  assert.equal(listed.length, 1);
  assert.equal(listed[0].key, undefined, 'list never shows the secret');

  const models = await server.openai(key.key).models.list();
  assert.deepEqual(models.data.map((m) => m.id), ['agent']);

  assert.equal((await cli('keys', 'pause', key.id)).paused, true);
  assert.equal((await server.fetch('/v1/models', { key: key.key })).status, 403);
  assert.equal((await cli('keys', 'unpause', key.id)).paused, false);
  assert.equal((await server.fetch('/v1/models', { key: key.key })).status, 200);
  assert.equal((await cli('keys', 'revoke', key.id)).revoked, true);
  assert.equal((await server.fetch('/v1/models', { key: key.key })).status, 401);
});

test('bad arguments exit with status 2 and a message (no such account)', async () => {
  await assert.rejects(run(process.execPath, [bin, 'keys', 'create', '--account', 'acct_x'], { env: cliEnv }), (e: { code: number; stderr: string }) => {
    assert.equal(e.code, 2);
    assert.match(e.stderr, /no such account|--name/);
    return true;
  });
});

test('an account is named by id or by name: credits add, keys create, keys list', async () => {
  const account = await cli('accounts', 'create', '--name', 'by-name', '--credits', '1');
  assert.equal((await cli('credits', 'add', '--account', 'by-name', '--amount', '4')).credits, 5);
  const key = await cli('keys', 'create', '--account', 'by-name', '--name', 'named');
  assert.equal(key.account_id, account.id);
  assert.deepEqual((await cli('keys', 'list', '--account', 'by-name')).map((k: { id: string }) => k.id), [key.id]);
  const missing = await cliRaw(['credits', 'add', '--account', 'nobody', '--amount', '1']);
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, "agent-api: no such account 'nobody' (give an account id or name)\n");
  const reserved = await cliRaw(['accounts', 'create', '--name', 'acct_lookalike']);
  assert.equal(reserved.code, 2);
  assert.match(reserved.stderr, /must not start with acct_/);
});

test('unknown commands and flags: one line naming the problem, then the usage; exit 2', { skip: parsingOnly }, async () => {
  const cases: [string[], string][] = [
    [['launch'], "agent-api: unknown command 'launch'"],
    [['keys', 'frobnicate'], "agent-api: unknown command 'keys frobnicate'"],
    [['keys', 'list', '--acount', 'x'], "agent-api: unknown option '--acount' for 'keys list'"],
    [['keys', 'pause'], "agent-api: 'keys pause' needs KEY_ID"],
    [['keys', 'create', '--name'], "agent-api: option '--name' needs a value"],
    [['--verbose'], "agent-api: unknown option '--verbose'"],
  ];
  for (const [args, line] of cases) {
    const out = await cliRaw(args);
    assert.equal(out.code, 2, args.join(' '));
    assert.equal(out.stdout, '');
    const [first, blank, usage] = out.stderr.split('\n');
    assert.equal(first, line);
    assert.equal(blank, '');
    assert.match(usage!, /^Usage: agent-api <command>/);
    assert.ok(!out.stderr.includes('    at '), 'no stack');
  }
});

test('--version prints the package version', { skip: parsingOnly }, async () => {
  const { version } = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../package.json'), 'utf8'));
  assert.equal((await cliRaw(['--version'])).stdout, `${version}\n`);
});

test('activity shows recent requests, newest first, by key or account', async () => {
  const account = await server.createAccount(10, 'activity-acct');
  const key = await server.createKey({ account_id: account.id });
  await server.openai(key.key).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'What is 2 + 2?' }] });
  await server.fetch('/v1/models', { key: key.key });
  await server.fetch('/v1/models/gpt-9', { key: key.key });

  let rows: { endpoint: string; status: number; model: string | null }[] = [];
  await eventually(async () => (rows = await cli('activity', '--key', key.id, '--json')).length === 3, 'three activity rows');
  assert.deepEqual(rows.map((r) => [r.endpoint, r.status]), [['/v1/models/{model}', 404], ['/v1/models', 200], ['/v1/chat/completions', 200]]);
  assert.equal((await cli('activity', '--account', 'activity-acct', '--limit', '1', '--json')).length, 1);

  const table = (await cliRaw(['activity', '--account', 'activity-acct'])).stdout.split('\n');
  assert.match(table[0]!, /^TIME \(UTC\)\s+STATUS\s+REQUEST\s+MODEL\s+TOKENS IN\/OUT\s+CREDITS\s+MS\s+KEY\s+REQUEST ID$/);
  assert.match(table[1]!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+404 model_not_found\s+GET \/v1\/models\/\{model\}/);
  assert.match(table[3]!, /200\s+POST \/v1\/chat\/completions\s+agent\s+\d+\/\d+\s+[\d.]+\s+\d+\s+key_\w+\s+req_\w+$/);
});

test('commands that change a key say when a running server applies the change', async () => {
  const { id } = await server.createKey();
  assert.match((await cliRaw(['keys', 'pause', id])).stderr, /^A running server applies this at once \(AGENT_API_KEY_CACHE_MS=0\)\.$/m);
  const slow = await cliRaw(['keys', 'unpause', id], { ...cliEnv, AGENT_API_KEY_CACHE_MS: '5000' });
  assert.match(slow.stderr, /^A running server applies this within 5 s \(AGENT_API_KEY_CACHE_MS=5000\)\.$/m);
  assert.match((await cliRaw(['keys', 'create', '--account', 'cli-acct', '--name', 'n'])).stderr, /works at once on a running server/);
});

test('admin-token rotate: a running server accepts the new token and refuses the old one within the cache time', async () => {
  const tokenServer = await startTestServer({ AGENT_API_ADMIN_TOKEN: '', AGENT_API_KEY_CACHE_MS: '100' });
  try {
    const db = tokenServer.config.database;
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: tokenServer.config.dataDir, DATABASE_URL: db.kind === 'postgres' ? db.url : `sqlite:${db.file}`, AGENT_API_KEY_CACHE_MS: '100' };
    delete env.AGENT_API_ADMIN_TOKEN;
    const status = async (token: string) => (await tokenServer.fetch('/admin/v1/accounts', { key: token })).status;
    const closed = await tokenServer.fetch('/admin/v1/accounts', { key: 'anything' });
    assert.match(((await closed.json()) as { error: { message: string } }).error.message, /admin-token rotate/);

    const rotate = async () => {
      const out = await cliRaw(['admin-token', 'rotate'], env);
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stderr, /A running server accepts it, and refuses the previous token, within 0\.1 s \(AGENT_API_KEY_CACHE_MS=100\)/);
      return JSON.parse(out.stdout).token as string;
    };
    const first = await rotate();
    assert.match(first, /^agent-admin-[A-Za-z0-9_-]{43}$/);
    await eventually(async () => (await status(first)) === 200, 'the first token accepted');
    const second = await rotate();
    await eventually(async () => (await status(second)) === 200, 'the new token accepted');
    assert.equal(await status(first), 401, 'the old token is refused once the new one is seen');

    const removed = await cliRaw(['admin-token', 'remove'], env);
    assert.equal(JSON.parse(removed.stdout).deleted, true);
    await eventually(async () => (await status(second)) === 401, 'the admin API closed');
  } finally {
    await tokenServer.close();
  }
});

test('credits follow the admin API money rules: whole micro-credits, bounded, no debit below zero without --correction', async () => {
  const account = await cli('accounts', 'create', '--name', `money-${Date.now()}`, '--credits', '2');
  for (const [flag, value] of [['--amount', '1e308'], ['--amount', '0.0000001'], ['--amount', '0']] as const) {
    const r = await cliRaw(['credits', 'add', '--account', account.name, flag, value]);
    assert.equal(r.code, 2, `${flag} ${value}`);
    assert.match(r.stderr, /^agent-api: --amount /);
  }
  const below = await cliRaw(['credits', 'add', '--account', account.name, '--amount', '-3']);
  assert.equal(below.code, 2);
  assert.match(below.stderr, /below zero.*--correction/);
  assert.equal((await cli('credits', 'add', '--account', account.name, '--amount', '-3', '--correction')).credits, -1);
  const created = await cliRaw(['accounts', 'create', '--name', `money-bad-${Date.now()}`, '--credits', '1e12']);
  assert.equal(created.code, 2);
});

test('with REDIS_URL, a key paused or revoked by the CLI is refused by a running server at once, despite its key cache', { skip: process.env.TEST_REDIS_URL ? false : 'TEST_REDIS_URL is not set (run with npm test)' }, async () => {
  const redis = process.env.TEST_REDIS_URL!;
  const cached = await startTestServer({ AGENT_API_KEY_CACHE_MS: '60000', REDIS_URL: redis });
  try {
    const db = cached.config.database;
    const env = { ...process.env, DATA_DIR: cached.config.dataDir, DATABASE_URL: db.kind === 'postgres' ? db.url : `sqlite:${db.file}`, REDIS_URL: redis };
    const { id, key } = await cached.createKey();
    assert.equal((await cached.fetch('/v1/models', { key })).status, 200);
    const paused = await cliRaw(['keys', 'pause', id], env);
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(paused.stderr, /^Every running server on this REDIS_URL applies this at once\.$/m);
    await eventually(async () => (await cached.fetch('/v1/models', { key })).status === 403, 'the pause applied');
    await cliRaw(['keys', 'revoke', id], env);
    await eventually(async () => (await cached.fetch('/v1/models', { key })).status === 401, 'the revocation applied');
  } finally {
    await cached.close();
  }
});
