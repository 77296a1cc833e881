// A forwarded answer larger than the response's write buffer passes through under
// backpressure: each chunk that fills the buffer waits for it to drain, and that wait
// must leave nothing behind on the response. An OpenRouter /models answer is megabytes,
// so this is every call of GET /models, not a corner.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

// About 4 MB in 64 KB writes: many more than the 10 listeners Node warns at.
const PIECE = Buffer.from(`{"id":"bench/model","pricing":{"prompt":"0.0000005","completion":"0.0000015"},"description":"${'x'.repeat(64 * 1024 - 120)}"},`);
const PIECES = 64;
const body = Buffer.concat([Buffer.from('{"data":['), ...Array.from({ length: PIECES }, () => PIECE), Buffer.from('{"id":"last"}]}')]);

let fake: http.Server;
let server: TestServer;
let key: string;

before(async () => {
  fake = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/api/v1/models') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":404,"message":"not here"}}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
    for (let at = 0; at < body.length; at += 64 * 1024) res.write(body.subarray(at, at + 64 * 1024));
    res.end();
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  server = await startTestServer({ GATEWAY_UPSTREAM_URL: `http://127.0.0.1:${(fake.address() as AddressInfo).port}/api/v1`, GATEWAY_UPSTREAM_KEY: 'sk-or-upstream' });
  key = (await server.createKey({ permissions: { ai_gateway: true } })).key;
});

after(async () => {
  await server?.close();
  await new Promise((resolve) => fake?.close(resolve));
});

test('a large forwarded answer waits for the client under backpressure without piling listeners on the response', async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => {
    if (w.name === 'MaxListenersExceededWarning') warnings.push(w);
  };
  process.on('warning', onWarning);
  try {
    const res = await server.fetch('/api/gateway/v1/models', { key });
    assert.equal(res.status, 200);
    // A slow reader, so writes wait for the socket to drain.
    const hash = createHash('sha256');
    const reader = res.body!.getReader();
    for (let i = 0; ; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      hash.update(value);
      if (i % 8 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(hash.digest('hex'), createHash('sha256').update(body).digest('hex'), 'the answer passed through byte for byte');
    // Warnings are emitted on a later tick.
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      warnings.map((w) => w.message),
      [],
    );
  } finally {
    process.off('warning', onWarning);
  }
});
