// cache_control through an upstream: with UPSTREAM_CACHE_CONTROL=true the breakpoints a
// request marks (system blocks, a tool result, automatic caching) reach the upstream as
// `cache_control` on the last text part of those messages, and the upstream's cached
// prompt tokens come back as cache_read_input_tokens; without it (the default) no part
// carries a field a strict server would refuse.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { toWireMessage } from '../../providers/remote/openai-compatible/request-mapping.ts';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let upstream: FakeUpstream;
let server: TestServer;
let client: Anthropic;
before(async () => {
  upstream = await startFakeUpstream(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-x',
        object: 'chat.completion',
        created: 1,
        model: 'upstream-small',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 2000, completion_tokens: 3, total_tokens: 2003, prompt_tokens_details: { cached_tokens: 1800 } },
      }),
    );
  });
  server = await startTestServer({ UPSTREAM_BASE_URL: upstream.baseUrl, UPSTREAM_API_KEY: 'sk-upstream-secret', UPSTREAM_MODEL_AGENT: 'upstream-small', UPSTREAM_MAX_RETRIES: '0', UPSTREAM_CACHE_CONTROL: 'true' });
  const { key } = await server.createKey();
  client = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
});
after(async () => {
  await server.close();
  await upstream.close();
});

test('breakpoints reach the upstream as cache_control; its cached tokens are cache reads', async () => {
  const m = await client.messages.create({
    model: 'agent',
    max_tokens: 50,
    system: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
  });
  const sent = upstream.requests.at(-1)!.body.messages as { role: string; content: unknown }[];
  assert.deepEqual(sent[0], { role: 'system', content: [{ type: 'text', text: 'You are terse.\nLong rules.', cache_control: { type: 'ephemeral', ttl: '1h' } }] });
  assert.equal(sent[1]!.content, 'Hello', 'an unmarked message is sent as before');
  assert.equal(m.usage.cache_read_input_tokens, 1800);
  assert.equal(m.usage.input_tokens, 200);
  // Automatic caching marks the last message.
  await client.messages.create({ model: 'agent', max_tokens: 50, cache_control: { type: 'ephemeral' }, messages: [{ role: 'user', content: 'Hi there' }] } as never);
  const last = (upstream.requests.at(-1)!.body.messages as { content: unknown }[]).at(-1)!;
  assert.deepEqual(last.content, [{ type: 'text', text: 'Hi there', cache_control: { type: 'ephemeral' } }]);
});

test('without UPSTREAM_CACHE_CONTROL a breakpoint adds nothing to the wire', () => {
  assert.deepEqual(toWireMessage({ role: 'user', content: 'Hi', cacheBreakpoint: {} }), { role: 'user', content: 'Hi' });
  assert.deepEqual(toWireMessage({ role: 'tool', tool_call_id: 'c', content: 'r', cacheBreakpoint: {} }, true), { role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: 'r', cache_control: { type: 'ephemeral' } }] });
});
