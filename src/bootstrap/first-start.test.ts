// A new user's first start, in a real process with nothing but DATA_DIR set (and, on the
// PostgreSQL pass, DATABASE_URL): the banner's key works at once with the openai SDK, its
// admin token opens the admin API, and no later start shows a secret again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { bannerSecrets, startServerProcess, userEnv } from '../../test/helpers/server-process.ts';
import { scratchDatabase } from '../../test/helpers/test-server.ts';

const onPostgres = process.env.TEST_DATABASE === 'postgres';

/** An empty data dir (and an empty PostgreSQL database on that pass), and nothing else. */
async function freshStart() {
  const scratch = await scratchDatabase();
  const env = userEnv({ PORT: '0', DATA_DIR: scratch.dir, ...(onPostgres ? { DATABASE_URL: scratch.url } : {}) });
  return { env, scratch };
}

test('a first start prints a key that works at once with the openai SDK and an admin token; a second start prints neither', async () => {
  const { env, scratch } = await freshStart();
  try {
    const first = await startServerProcess(env);
    let secrets: ReturnType<typeof bannerSecrets>;
    try {
      const out = await first.waitForOutput((o) => /Admin token: /.test(o.stderr), 'the banner');
      secrets = bannerSecrets(out.stderr);
      assert.match(secrets.apiKey ?? '', /^sk-agent-[A-Za-z0-9_-]{43}$/, out.stderr);
      assert.match(secrets.adminToken ?? '', /^agent-admin-[A-Za-z0-9_-]{43}$/);
      assert.match(out.stderr, /account "default" \(100 credits\), every switch on but Moderate requests/);

      // The summary line: listen URL, engine, database and where, admin API.
      assert.equal(first.summary.engine, 'offline');
      assert.match(first.summary.database!, onPostgres ? /^postgres 127\.0\.0\.1:\d+\/agent_api_test_\w+$/ : /^sqlite \/.*\/agent-api\.sqlite$/);
      assert.match(first.summary.admin!, /^on, admin token: stored \(rotate with `node bin\/agent-api\.js admin-token rotate`\)$/);
      assert.match(first.summary.url!, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      assert.ok(!out.stdout.includes(secrets.apiKey!) && !out.stdout.includes(secrets.adminToken!), 'secrets stay out of the log');

      const client = new OpenAI({ baseURL: `${first.origin}/v1`, apiKey: secrets.apiKey!, maxRetries: 0 });
      const { data, response } = await client.chat.completions
        .create({ model: 'agent', messages: [{ role: 'user', content: 'What is 12 * 7?' }] })
        .withResponse();
      assert.equal(response.status, 200);
      assert.match(data.choices[0]!.message.content ?? '', /84/);

      const accounts = await fetch(`${first.origin}/admin/v1/accounts`, { headers: { authorization: `Bearer ${secrets.adminToken}` } });
      assert.equal(accounts.status, 200);
      const [account] = ((await accounts.json()) as { data: { name: string; credits: number }[] }).data;
      assert.equal(account!.name, 'default');
      assert.ok(account!.credits > 99 && account!.credits < 100, `100 starting credits, less this request: ${account!.credits}`);
    } finally {
      assert.equal(await first.stop(), 0);
    }

    const second = await startServerProcess(env);
    try {
      const again = await fetch(`${second.origin}/admin/v1/accounts/default`, { headers: { authorization: `Bearer ${secrets.adminToken}` } });
      assert.equal(again.status, 200, 'the stored admin token still opens the admin API');
      const models = await new OpenAI({ baseURL: `${second.origin}/v1`, apiKey: secrets.apiKey!, maxRetries: 0 }).models.list();
      assert.equal(models.data.length, 2);
      assert.match(second.summary.admin!, /admin token: stored/);
    } finally {
      assert.equal(await second.stop(), 0);
    }
    const { stdout, stderr } = second.output();
    assert.deepEqual(bannerSecrets(stderr), {}, stderr);
    for (const secret of [secrets.apiKey!, secrets.adminToken!]) assert.ok(!stdout.includes(secret) && !stderr.includes(secret));
  } finally {
    await scratch.cleanup();
  }
});

test('AGENT_API_ADMIN_TOKEN set: it is used, no token is generated; AGENT_API_BOOTSTRAP_KEY set: no key is printed, its account gets the starting credits', async () => {
  const { env, scratch } = await freshStart();
  const bootstrapKey = 'sk-agent-bootstrap-first-start-0123456789';
  const adminToken = 'first-start-admin-token-0123456789';
  try {
    const server = await startServerProcess({ ...env, AGENT_API_ADMIN_TOKEN: adminToken, AGENT_API_BOOTSTRAP_KEY: bootstrapKey, AGENT_API_BOOTSTRAP_CREDITS: '7' });
    try {
      assert.equal(server.summary.admin, 'on, admin token: from AGENT_API_ADMIN_TOKEN');
      const res = await fetch(`${server.origin}/admin/v1/accounts/default`, { headers: { authorization: `Bearer ${adminToken}` } });
      assert.equal(((await res.json()) as { credits: number }).credits, 7);
      assert.equal((await fetch(`${server.origin}/v1/models`, { headers: { authorization: `Bearer ${bootstrapKey}` } })).status, 200);
    } finally {
      await server.stop();
    }
    assert.deepEqual(bannerSecrets(server.output().stderr), {}, 'nothing secret to show: both came from the environment');
  } finally {
    await scratch.cleanup();
  }
});

test('two instances starting at once on one PostgreSQL database: exactly one creates and prints the key', { skip: !onPostgres && 'PostgreSQL pass only (two processes migrating one SQLite file at the same instant is not supported)' }, async () => {
  const { env, scratch } = await freshStart();
  try {
    const servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    await Promise.all(servers.map((s) => s.stop()));
    const printed = servers.map((s) => bannerSecrets(s.output().stderr)).filter((s) => s.apiKey);
    assert.equal(printed.length, 1, servers.map((s) => s.output().stderr).join('\n---\n'));
    assert.ok(printed[0]!.adminToken);
  } finally {
    await scratch.cleanup();
  }
});
