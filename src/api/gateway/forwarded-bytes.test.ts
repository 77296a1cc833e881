// Forwarded bodies go upstream byte for byte, as the bad-input gate checks, where it found
// two that did not: one past LARGE_JSON_BYTES (whose fields the gateway reads on the JSON
// worker pool, which took the body's own buffer and left it empty: it reached the upstream
// empty, reserved as if it had no input), and a text/plain one with bytes that are not
// UTF-8 (decoded as text, and re-encoded with replacement characters).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { LARGE_JSON_BYTES } from '../../pipeline/json/text.ts';
import { ALL_SWITCHES, startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const MODEL = 'openai/gpt-4o-mini';
const received: { path: string; length: string | undefined; sha: string; bytes: number }[] = [];
let upstream: http.Server;
let server: TestServer;

before(async () => {
  // An aggregator that lists one priced model and answers a chat completion with its cost.
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = req.url!.replace(/^\/api\/v1/, '');
      if (path === '/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ data: [{ id: MODEL, pricing: { prompt: '0.0000001', completion: '0.0000004' }, top_provider: { max_completion_tokens: 1000 } }] }));
      }
      received.push({ path, length: req.headers['content-length'], sha: createHash('sha256').update(body).digest('hex'), bytes: body.length });
      let parsed: { model?: unknown } | null = null;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {}
      if (parsed?.model !== MODEL || !req.headers['content-type']?.startsWith('application/json')) {
        res.writeHead(400, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { code: 400, message: 'not a valid request' } }));
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-generation-id': 'gen-large-1' });
      res.end(JSON.stringify({ id: 'gen-large-1', model: MODEL, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 90_000, completion_tokens: 1, total_tokens: 90_001, cost: 0.01 } }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  server = await startTestServer({ GATEWAY_UPSTREAM_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/api/v1`, GATEWAY_UPSTREAM_KEY: 'sk-or-test-upstream' });
});

after(async () => {
  await server.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

test('a JSON body over the size read on the worker pool reaches the upstream unchanged, and is charged the cost it reports', async () => {
  const account = await server.createAccount(1_000);
  const key = await server.createKey({ account_id: account.id, permissions: { ...ALL_SWITCHES, moderate: false } });
  // The fields the gateway reads come last, after 300 KB of message text.
  const text = 'lorem ipsum '.repeat(25_000);
  const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: text }], model: MODEL, max_tokens: 10 }));
  assert.ok(body.length > LARGE_JSON_BYTES, 'the body is one the gateway parses on the worker pool');

  const res = await server.fetch('/api/gateway/v1/chat/completions', { method: 'POST', key: key.key, headers: { 'content-type': 'application/json' }, body });
  const answer = (await res.json()) as { id?: string; error?: unknown };
  assert.equal(res.status, 200, JSON.stringify(answer));
  assert.equal(answer.id, 'gen-large-1');

  const got = received.at(-1)!;
  assert.equal(got.path, '/chat/completions');
  assert.equal(got.bytes, body.length, 'the upstream received every byte');
  assert.equal(got.length, String(body.length), 'Content-Length as the body');
  assert.equal(got.sha, createHash('sha256').update(body).digest('hex'), 'the same bytes');

  // In dollars: 1,000 credits at 100 a dollar granted, the 0.01 the upstream reported charged.
  const credits = await server.fetch('/api/gateway/v1/credits', { key: key.key });
  assert.deepEqual(((await credits.json()) as { data: unknown }).data, { total_credits: 10, total_usage: 0.01 });
});

test('a text/plain body with bytes that are not UTF-8 reaches the upstream unchanged (the upstream judges it)', async () => {
  const account = await server.createAccount(1_000);
  const key = await server.createKey({ account_id: account.id, permissions: { ...ALL_SWITCHES, moderate: false } });
  const body = Buffer.concat([Buffer.from(`{"model":"${MODEL}","x":"`), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('"}')]);

  const res = await server.fetch('/api/gateway/v1/chat/completions', { method: 'POST', key: key.key, headers: { 'content-type': 'text/plain; charset=utf-8' }, body });
  await res.arrayBuffer();
  const got = received.at(-1)!;
  assert.equal(got.bytes, body.length, 'the upstream received every byte, none replaced');
  assert.equal(got.sha, createHash('sha256').update(body).digest('hex'), 'the same bytes');
  // The upstream's refusal passed through, and nothing was charged for it.
  assert.equal(res.status, 400);
  const credits = await server.fetch('/api/gateway/v1/credits', { key: key.key });
  assert.deepEqual(((await credits.json()) as { data: unknown }).data, { total_credits: 10, total_usage: 0 });
});
