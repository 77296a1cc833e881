// The CLI works on the configured database: accounts, credits, keys (created, listed,
// paused, revoked), and a running server sees the result.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../test/helpers/test-server.ts';

const run = promisify(execFile);
const bin = path.resolve(import.meta.dirname, '../bin/agent-api.js');

let server: TestServer;
let cliEnv: NodeJS.ProcessEnv;
before(async () => {
  server = await startTestServer({ AGENT_API_KEY_CACHE_MS: '0' });
  const db = server.config.database;
  cliEnv = { ...process.env, DATA_DIR: server.config.dataDir, DATABASE_URL: db.kind === 'postgres' ? db.url : `sqlite:${db.file}` };
});
after(() => server.close());

async function cli(...args: string[]) {
  const { stdout } = await run(process.execPath, [bin, ...args], { env: cliEnv });
  return JSON.parse(stdout);
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

test('bad arguments exit with status 2 and a message', async () => {
  await assert.rejects(run(process.execPath, [bin, 'keys', 'create', '--account', 'acct_x'], { env: cliEnv }), (e: { code: number; stderr: string }) => {
    assert.equal(e.code, 2);
    assert.match(e.stderr, /no such account|--name/);
    return true;
  });
});
