// /readyz with an upstream configured: a cached probe of GET {base}/models, 200 when
// the database and the upstream answer, 503 naming what is down otherwise.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { FakeSandbox } from '../containers/fake-sandbox.test-support.ts';

const UPSTREAM_KEY = 'sk-upstream-probe-secret';
const env = (baseUrl: string) => ({ UPSTREAM_BASE_URL: baseUrl, UPSTREAM_API_KEY: UPSTREAM_KEY, UPSTREAM_MODEL_AGENT: 'm' });

interface Ready {
  status: string;
  database: { ok: boolean; kind: string };
  redis?: { ok: boolean; error?: string };
  upstream?: { ok: boolean; host: string; checked_at: string; error?: string };
  containers?: { ok: boolean; error?: string };
  error?: { code: string; message: string };
}

async function ready(server: TestServer): Promise<{ status: number; body: Ready; text: string }> {
  const res = await server.fetch('/readyz');
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Ready, text };
}

describe('an upstream that answers', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  before(async () => {
    upstream = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[]}');
    });
    server = await startTestServer(env(upstream.baseUrl));
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('200 with the database and the upstream', async () => {
    const { status, body, text } = await ready(server);
    assert.equal(status, 200);
    assert.equal(body.status, 'ready');
    assert.deepEqual(body.database, { ok: true, kind: server.config.database.kind });
    assert.equal(body.upstream?.ok, true);
    assert.equal(body.upstream?.host, new URL(upstream.baseUrl).host);
    assert.ok(!Number.isNaN(Date.parse(body.upstream!.checked_at)));
    assert.equal(body.upstream?.error, undefined);
    assert.equal(text.includes(UPSTREAM_KEY), false);
    assert.equal(upstream.requests[0]!.url, '/v1/models');
    assert.equal(upstream.requests[0]!.headers.authorization, `Bearer ${UPSTREAM_KEY}`, 'with the configured key');
  });

  test('the probe is cached: many /readyz calls, at once or one after another, make one upstream call', async () => {
    await Promise.all(Array.from({ length: 10 }, () => ready(server)));
    for (let i = 0; i < 5; i++) assert.equal((await ready(server)).status, 200);
    assert.equal(upstream.requests.length, 1);
  });
});

describe('an upstream that is down', () => {
  test('answering 500: 503 naming the upstream, in the error shape too', async () => {
    const upstream = await startFakeUpstream((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"internal detail"}}');
    });
    const server = await startTestServer(env(upstream.baseUrl));
    try {
      const { status, body, text } = await ready(server);
      assert.equal(status, 503);
      assert.equal(body.status, 'unavailable');
      assert.equal(body.database.ok, true);
      assert.equal(body.upstream?.ok, false);
      assert.equal(body.upstream?.error, 'answered 500');
      assert.equal(body.error?.code, 'service_unavailable');
      assert.match(body.error?.message ?? '', /upstream/);
      assert.equal(text.includes('internal detail'), false, 'nothing of the upstream body');
      assert.equal(text.includes(UPSTREAM_KEY), false);
    } finally {
      await server.close();
      await upstream.close();
    }
  });

  test('a closed port: 503, connection failed', async () => {
    const srv = net.createServer();
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address() as net.AddressInfo;
    await new Promise((resolve) => srv.close(resolve));
    const server = await startTestServer(env(`http://127.0.0.1:${port}/v1`));
    try {
      const { status, body } = await ready(server);
      assert.equal(status, 503);
      assert.equal(body.upstream?.ok, false);
      assert.match(body.upstream?.error ?? '', /^connection failed: /);
    } finally {
      await server.close();
    }
  });
});

test('without an upstream, /readyz reports the database (and containers); 503 when the database does not answer', async () => {
  const server = await startTestServer();
  const store = server.app.services.store;
  const ping = store.ping;
  try {
    const { status, body } = await ready(server);
    assert.equal(status, 200);
    const { containers, ...rest } = body;
    assert.deepEqual(rest, { status: 'ready', database: { ok: true, kind: server.config.database.kind } });
    assert.equal(typeof containers?.ok, 'boolean', 'whether code can run on this machine');

    store.ping = () => Promise.reject(new Error('connect ECONNREFUSED postgres://user:pw@db'));
    const down = await ready(server);
    assert.equal(down.status, 503);
    assert.equal(down.body.status, 'unavailable');
    assert.deepEqual(down.body.database, { ok: false, kind: server.config.database.kind, error: 'not reachable' });
    assert.match(down.body.error?.message ?? '', /database/);
    assert.equal(down.text.includes('pw@db'), false);
  } finally {
    store.ping = ping;
    await server.close();
  }
});

test('containers that cannot run are reported, with why, and leave the service ready; they are back once the sandbox is', async () => {
  const sandbox = await FakeSandbox.create({ status: { available: false, reason: 'bubblewrap (bwrap) is not installed: install the bubblewrap package' } });
  const server = await startTestServer({}, { sandbox });
  try {
    const { status, body } = await ready(server);
    assert.equal(status, 200);
    assert.equal(body.status, 'ready');
    assert.deepEqual(body.containers, { ok: false, error: 'bubblewrap (bwrap) is not installed: install the bubblewrap package' });
    assert.equal(body.error, undefined);
    sandbox.currentStatus = { available: true, root: '/srv/containers' };
    assert.deepEqual((await ready(server)).body.containers, { ok: true }, 'no path on an endpoint without a key');
  } finally {
    await server.close();
    await sandbox.close();
  }
});

describe('Redis (REDIS_URL: limits shared by instances)', () => {
  test('answering: reported ok; not answering (a closed port): 503 naming Redis, with why and without the URL', async () => {
    const srv = net.createServer();
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address() as net.AddressInfo;
    await new Promise((resolve) => srv.close(resolve));
    const down = await startTestServer({ REDIS_URL: `redis://:secret-pw@127.0.0.1:${port}` });
    try {
      const { status, body, text } = await ready(down);
      assert.equal(status, 503);
      assert.equal(body.status, 'unavailable');
      assert.equal(body.redis?.ok, false);
      assert.match(body.redis?.error ?? '', /connection failed|not connected|timed out/);
      assert.equal(body.database.ok, true);
      assert.equal(body.error?.code, 'service_unavailable');
      assert.match(body.error?.message ?? '', /Redis is not answering/);
      assert.equal(text.includes('secret-pw'), false);
    } finally {
      await down.close();
    }
    const url = process.env.TEST_REDIS_URL;
    if (!url) return;
    const up = await startTestServer({ REDIS_URL: url });
    try {
      const { status, body } = await ready(up);
      assert.equal(status, 200);
      assert.deepEqual(body.redis, { ok: true });
    } finally {
      await up.close();
    }
  });
});
