// max_uses end to end, with the vendor's SDK: an upstream model (a fake, replaying the
// reference's JSON shapes) that keeps asking for web_search gets one search, then the
// vendor's max_uses_exceeded block for the call past the cap; the search backend (a
// fake SearxNG) is asked once, usage.server_tool_use counts one request, and the answer
// ends normally.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let upstream: FakeUpstream;
let search: http.Server;
const queries: string[] = [];
let server: TestServer;
let client: Anthropic;

before(async () => {
  search = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    queries.push(url.searchParams.get('q') ?? '');
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ results: [{ url: 'https://trains.example/valley', title: 'Valley trains', content: 'The valley railway opened in 1902.' }] }));
  });
  await new Promise<void>((r) => search.listen(0, '127.0.0.1', r));
  // Asks for a search until it has read two tool results, then answers.
  upstream = await startFakeUpstream(async (req, res) => {
    const messages = (req.body.messages ?? []) as { role: string }[];
    const results = messages.filter((m) => m.role === 'tool').length;
    const message =
      results < 2
        ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${results}`, type: 'function', function: { name: 'web_search', arguments: JSON.stringify({ query: `valley railway ${results}` }) } }] }
        : { role: 'assistant', content: 'The valley railway opened in 1902.' };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion', created: 1, model: 'upstream-small', choices: [{ index: 0, message, finish_reason: results < 2 ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } }));
  });
  server = await startTestServer({
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_API_KEY: 'sk-upstream-secret',
    UPSTREAM_MODEL_AGENT: 'upstream-small',
    UPSTREAM_MAX_RETRIES: '0',
    WEB_SEARCH_BACKEND: 'searxng',
    WEB_SEARCH_URL: `http://127.0.0.1:${(search.address() as AddressInfo).port}`,
    AGENT_API_OUTBOUND_ALLOW: '127.0.0.1',
  });
  const { key } = await server.createKey({ permissions: { function_calling: true } });
  client = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
});
after(async () => {
  await server.close();
  await upstream.close();
  search.close();
});

test('web_search with max_uses 1: one search runs, the next call is max_uses_exceeded', async () => {
  const m = await client.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 300,
    tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }],
    messages: [{ role: 'user', content: 'When did the valley railway open? Search twice.' }],
  });
  const blocks = m.content as { type: string; [k: string]: any }[];
  assert.deepEqual(
    blocks.map((b) => b.type),
    ['server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_search_tool_result', 'text'],
  );
  assert.equal(blocks[1]!.content[0].type, 'web_search_result');
  assert.deepEqual(blocks[3]!.content, { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' });
  assert.equal(queries.length, 1, 'the backend was asked once');
  assert.equal(m.usage.server_tool_use?.web_search_requests, 1);
  assert.equal(m.stop_reason, 'end_turn');
});
