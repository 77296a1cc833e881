// A failure after a stream has started ends it with an error event, whatever failed:
// never a silent close that a client would read as a complete (but short) answer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ChatBackend } from '../providers/index.ts';
import type { ChatProvider, StreamPart } from '../providers/types.ts';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

/** Streams two words, then fails the way a bug would (a plain Error, not a provider error). */
const breaking: ChatProvider = {
  name: 'breaking',
  async *chat(): AsyncGenerator<StreamPart> {
    yield { type: 'text-start', id: 't' };
    yield { type: 'text-delta', id: 't', delta: 'Hello' };
    yield { type: 'text-delta', id: 't', delta: ' there' };
    throw new Error('an unexpected failure inside the service');
  },
  async *complete(): AsyncGenerator<StreamPart> {
    yield { type: 'text-start', id: 't' };
    yield { type: 'text-delta', id: 't', delta: 'Hello' };
    throw new TypeError('another one');
  },
};
const backend: ChatBackend = { provider: breaking, price: () => ({ inputPerMTok: 1, outputPerMTok: 1 }), describe: 'breaking' };

let server: TestServer;
before(async () => {
  server = await startTestServer({}, { chat: backend });
});
after(() => server.close());

for (const [path, body] of [
  ['/v1/chat/completions', { model: 'agent', messages: [{ role: 'user', content: 'hi' }], stream: true }],
  ['/v1/completions', { model: 'agent', prompt: 'hi', stream: true }],
] as const) {
  test(`${path}: an error thrown mid-stream ends the stream with an error event`, async () => {
    const { key } = await server.createKey();
    const res = await server.fetch(path, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /Hello/);
    const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
    const last = JSON.parse(events.at(-1)!.slice(6)) as { error?: { code: string; type: string; message: string } };
    assert.equal(last.error?.code, 'server_error');
    assert.equal(last.error?.type, 'server_error');
    assert.ok(!last.error?.message.includes('unexpected failure'), 'nothing internal is revealed');
    assert.ok(!text.includes('[DONE]'), 'an incomplete answer does not end with [DONE]');
    // The service is fine afterwards, and what ran was settled.
    assert.equal((await server.fetch('/healthz')).status, 200);
  });
}

test('/v1/responses: an error thrown mid-stream ends with an error event, then response.failed', async () => {
  const { key } = await server.createKey();
  const res = await server.fetch('/v1/responses', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'agent', input: 'hi', stream: true }) });
  assert.equal(res.status, 200);
  const text = await res.text();
  const events = text.split('\n\n').filter((e) => e.includes('data: ')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)) as { type: string; code?: string; message?: string; response?: { status: string; error: { code: string } } });
  const [error, failed] = events.slice(-2);
  assert.equal(error?.type, 'error');
  assert.equal(error?.code, 'server_error');
  assert.ok(!error?.message?.includes('unexpected failure'), 'nothing internal is revealed');
  assert.equal(failed?.type, 'response.failed');
  assert.equal(failed?.response?.status, 'failed');
  assert.equal(failed?.response?.error.code, 'server_error');
  assert.equal((await server.fetch('/healthz')).status, 200);
});
