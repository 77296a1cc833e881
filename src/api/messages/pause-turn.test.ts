// pause_turn on the messages surface, driven by both SDK generations: with a one-step
// agent loop (AGENT_API_AGENT_MAX_STEPS=1) a server tool the model still wants at the
// limit is shown (server_tool_use) but not run, and the message stops with
// `pause_turn`; sent back unchanged as the last assistant turn, the next request runs
// that call first (its result block opens the answer) and the turn goes on to
// `end_turn`. Streamed and not; web_search (the fake SearxNG here) and web_fetch.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Anthropic1 from '@anthropic-ai/sdk';
import Anthropic0 from 'anthropic-sdk-0';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let fake: http.Server;
let base: string;
const searches: string[] = [];
const pages: string[] = [];
const PAGE = `<html><head><title>Valley trains</title></head><body><p>The valley railway opened in 1902.</p></body></html>`;

let server: TestServer;
before(async () => {
  fake = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/search') {
      searches.push(url.searchParams.get('q') ?? '');
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ results: [{ url: `${base}/pages/trains`, title: 'Valley trains', content: 'The valley railway opened in 1902.' }] }));
    }
    if (url.pathname === '/pages/trains') {
      pages.push(url.pathname);
      return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    }
    res.writeHead(404).end('no such page');
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  server = await startTestServer({ WEB_SEARCH_BACKEND: 'searxng', WEB_SEARCH_URL: base, AGENT_API_OUTBOUND_ALLOW: '127.0.0.1', AGENT_API_AGENT_MAX_STEPS: '1' });
});
after(async () => {
  await server?.close();
  fake?.close();
});

type Block = { type: string; [k: string]: any };
type Client = InstanceType<typeof Anthropic1>;
const generations: [string, (apiKey: string) => Client][] = [
  ['@anthropic-ai/sdk 1.x', (apiKey) => new Anthropic1({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 })],
  ['@anthropic-ai/sdk 0.x', (apiKey) => new Anthropic0({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 }) as unknown as Client],
];

const search = { type: 'web_search_20250305' as const, name: 'web_search' as const };
const ask = 'Search the web: when did the valley railway open?';

for (const [generation, make] of generations) {
  describe(`pause_turn with ${generation}`, () => {
    let client: Client;
    before(async () => {
      client = make((await server.createKey({ permissions: { function_calling: true } })).key);
    });

    test('at the step limit a wanted search pauses the turn; sent back as-is, it continues to end_turn', async () => {
      const before = searches.length;
      const paused = await client.messages.create({ model: 'agent', max_tokens: 500, tools: [search], messages: [{ role: 'user', content: ask }] });
      assert.equal(paused.stop_reason, 'pause_turn');
      const blocks = paused.content as Block[];
      const use = blocks.at(-1)!;
      assert.equal(use.type, 'server_tool_use', JSON.stringify(blocks));
      assert.equal(use.name, 'web_search');
      assert.equal(typeof use.input.query, 'string');
      assert.ok(!blocks.some((b) => b.type === 'web_search_tool_result'), 'the paused call has not run');
      assert.equal(searches.length, before);
      assert.equal(paused.usage.server_tool_use?.web_search_requests, 0);

      const next = await client.messages.create({
        model: 'agent',
        max_tokens: 500,
        tools: [search],
        messages: [{ role: 'user', content: ask }, { role: 'assistant', content: paused.content }],
      });
      assert.equal(next.stop_reason, 'end_turn');
      const more = next.content as Block[];
      assert.equal(more[0]!.type, 'web_search_tool_result', JSON.stringify(more));
      assert.equal(more[0]!.tool_use_id, use.id, 'the result answers the paused call');
      assert.equal(more[0]!.content[0].url, `${base}/pages/trains`);
      assert.equal(more.at(-1)!.type, 'text');
      assert.equal(searches.length, before + 1);
      assert.equal(next.usage.server_tool_use?.web_search_requests, 1);
    });

    test('streamed: message_delta says pause_turn; the continuation streams its result first', async () => {
      const stopReasons: unknown[] = [];
      const stream = client.messages.stream({ model: 'agent', max_tokens: 500, tools: [search], messages: [{ role: 'user', content: ask }] });
      stream.on('streamEvent', (e) => {
        if (e.type === 'message_delta') stopReasons.push(e.delta.stop_reason);
      });
      const paused = await stream.finalMessage();
      assert.deepEqual(stopReasons, ['pause_turn']);
      assert.equal(paused.stop_reason, 'pause_turn');
      assert.equal((paused.content as Block[]).at(-1)!.type, 'server_tool_use');
      const starts: string[] = [];
      const again = client.messages.stream({ model: 'agent', max_tokens: 500, tools: [search], messages: [{ role: 'user', content: ask }, { role: 'assistant', content: paused.content }] });
      again.on('streamEvent', (e: { type: string; content_block?: { type: string } }) => {
        if (e.type === 'content_block_start') starts.push(e.content_block!.type);
      });
      const next = await again.finalMessage();
      assert.equal(next.stop_reason, 'end_turn');
      assert.equal(starts[0], 'web_search_tool_result', starts.join(','));
      assert.equal((next.content[0] as Block).tool_use_id, (paused.content as Block[]).at(-1)!.id);
    });

    test('web_fetch pauses and continues the same way; a paused turn sent back without its tool is a 400 naming the block', async () => {
      const fetchTool = { type: 'web_fetch_20250910', name: 'web_fetch' } as never;
      const question = `Read ${base}/pages/trains and tell me when the railway opened.`;
      const before = pages.length;
      const paused = await client.messages.create({ model: 'agent', max_tokens: 500, tools: [fetchTool], messages: [{ role: 'user', content: question }] });
      assert.equal(paused.stop_reason, 'pause_turn');
      const use = (paused.content as Block[]).at(-1)!;
      assert.equal(use.name, 'web_fetch');
      assert.equal(pages.length, before);
      const history = [{ role: 'user' as const, content: question }, { role: 'assistant' as const, content: paused.content }];
      const next = await client.messages.create({ model: 'agent', max_tokens: 500, tools: [fetchTool], messages: history });
      assert.equal(next.stop_reason, 'end_turn');
      assert.equal((next.content[0] as Block).type, 'web_fetch_tool_result');
      assert.match((next.content[0] as Block).content.content.source.data, /1902/);
      assert.equal(pages.length, before + 1);
      const at = (paused.content as Block[]).length - 1;
      await assert.rejects(
        client.messages.create({ model: 'agent', max_tokens: 500, messages: history }),
        (e: unknown) => (e as { status?: number }).status === 400 && new RegExp(`messages\\[1\\]\\.content\\[${at}\\]`).test((e as Error).message),
      );
    });
  });
}
