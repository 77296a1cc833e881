// Server tools on the messages surface, from the one tool registry and run by the one
// agent loop: web_search through the configured backend (a fake SearxNG started here,
// which also serves the pages its results link to) and web_fetch through the outbound
// guard, shown as the SDKs type them (server_tool_use, web_search_tool_result with empty
// encrypted_content, web_fetch_tool_result), counted in usage.server_tool_use and
// charged; max_uses enforced; domain limits refused; the blocks accepted back.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { pdf } from '../../../test/helpers/documents.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let fake: http.Server;
let base: string;
const searches: string[] = [];
const PAGE = `<html><head><title>Valley trains</title></head><body><h1>Trains of the valley</h1><p>The valley railway opened in 1902 and still runs today.</p></body></html>`;

let server: TestServer;
let client: Anthropic;
let pdfBytes: Buffer;
const pdfHits: string[] = [];
before(async () => {
  pdfBytes = await pdf(['The iguana enclosure is warm.']);
  fake = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/search') {
      searches.push(url.searchParams.get('q') ?? '');
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ results: [{ url: `${base}/pages/trains`, title: 'Valley trains', content: 'The valley railway opened in 1902.' }] }));
    }
    if (url.pathname === '/docs/report.pdf') {
      pdfHits.push(url.pathname);
      return res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdfBytes);
    }
    if (url.pathname === '/pages/trains') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    res.writeHead(404).end('no such page');
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  server = await startTestServer({ WEB_SEARCH_BACKEND: 'searxng', WEB_SEARCH_URL: base, AGENT_API_OUTBOUND_ALLOW: '127.0.0.1' });
  const { key } = await server.createKey({ permissions: { function_calling: true } });
  client = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
});
after(async () => {
  await server.close();
  fake.close();
});

type Block = { type: string; [k: string]: any };

describe('documents by URL', () => {
  test('a PDF by URL is fetched through the outbound guard; a refused address or a page that is not a PDF is a 400 naming the source', async () => {
    const m = await client.messages.create({
      model: 'agent',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: `${base}/docs/report.pdf` } }, { type: 'text', text: 'What is this document about?' }] }],
    });
    assert.equal(m.stop_reason, 'end_turn');
    assert.equal(pdfHits.length, 1);
    // Offline, the PDF's text reaches the model, by URL and inline alike.
    const ask = async (source: Record<string, unknown>) =>
      ((await client.messages.create({ model: 'agent', max_tokens: 200, messages: [{ role: 'user', content: [{ type: 'document', source } as never, { type: 'text', text: 'Summarize the document.' }] }] })).content[0] as { text: string }).text;
    assert.match(await ask({ type: 'url', url: `${base}/docs/report.pdf` }), /iguana/);
    assert.match(await ask({ type: 'base64', media_type: 'application/pdf', data: pdfBytes.toString('base64') }), /iguana/);
    for (const [url, why] of [
      ['https://169.254.169.254/latest/meta-data', /source\.url/],
      [`${base}/pages/trains`, /not a PDF/],
    ] as const) {
      await assert.rejects(
        client.messages.create({ model: 'agent', max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url } }, { type: 'text', text: 'hi' }] }] }),
        (e: unknown) => (e as { status?: number }).status === 400 && why.test((e as Error).message) && /messages\[0\]\.content\[0\]\.source\.url/.test((e as Error).message),
      );
    }
  });
});

describe('server tools', () => {
  test('web_search: server_tool_use, results without encrypted content, usage counts the request', async () => {
    const before = searches.length;
    const m = await client.messages.create({
      model: 'agent',
      max_tokens: 500,
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
      messages: [{ role: 'user', content: 'Search the web: when did the valley railway open?' }],
    });
    const blocks = m.content as Block[];
    const use = blocks.find((b) => b.type === 'server_tool_use');
    assert.ok(use, JSON.stringify(blocks));
    assert.equal(use.name, 'web_search');
    assert.equal(typeof use.input.query, 'string');
    const result = blocks.find((b) => b.type === 'web_search_tool_result')!;
    assert.equal(result.tool_use_id, use.id);
    assert.equal(result.content[0].type, 'web_search_result');
    assert.equal(result.content[0].encrypted_content, '');
    assert.equal(result.content[0].url, `${base}/pages/trains`);
    assert.ok(blocks.at(-1)!.type === 'text');
    assert.ok(!('citations' in blocks.at(-1)!));
    assert.equal(m.usage.server_tool_use?.web_search_requests, searches.length - before);
    assert.ok((m.usage.server_tool_use?.web_search_requests ?? 0) >= 1);
    // The blocks are accepted back in a later turn.
    const next = await client.messages.create({
      model: 'agent',
      max_tokens: 200,
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      messages: [{ role: 'user', content: 'Search the web: when did the valley railway open?' }, { role: 'assistant', content: m.content as never }, { role: 'user', content: 'Thanks. Say it in one word.' }],
    });
    assert.equal(next.stop_reason, 'end_turn');
  });

  test('web_fetch: the page as a document block, counted', async () => {
    const m = await client.messages.create({
      model: 'agent',
      max_tokens: 500,
      tools: [{ type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2 } as never],
      messages: [{ role: 'user', content: `Read ${base}/pages/trains and tell me when the railway opened.` }],
    });
    const blocks = m.content as Block[];
    const use = blocks.find((b) => b.type === 'server_tool_use');
    assert.ok(use, JSON.stringify(blocks));
    assert.equal(use.name, 'web_fetch');
    const result = blocks.find((b) => b.type === 'web_fetch_tool_result')!;
    assert.equal(result.content.type, 'web_fetch_result');
    assert.equal(result.content.content.type, 'document');
    assert.match(result.content.content.source.data, /1902/);
    assert.equal((m.usage.server_tool_use as { web_fetch_requests?: number } | null)?.web_fetch_requests, 1);
  });

  test('streamed: the server tool blocks arrive as events and accumulate to the message', async () => {
    const stream = client.messages.stream({
      model: 'agent',
      max_tokens: 500,
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      messages: [{ role: 'user', content: 'Search the web: when did the valley railway open?' }],
    });
    const starts: string[] = [];
    stream.on('streamEvent', (e: { type: string; content_block?: { type: string } }) => {
      if (e.type === 'content_block_start') starts.push(e.content_block!.type);
    });
    const final = await stream.finalMessage();
    assert.ok(starts.includes('server_tool_use') && starts.includes('web_search_tool_result'), starts.join(','));
    assert.ok((final.content as Block[]).some((b) => b.type === 'web_search_tool_result'));
  });

  test('domain limits are refused, naming the member', async () => {
    await assert.rejects(
      client.messages.create({ model: 'agent', max_tokens: 50, tools: [{ type: 'web_search_20250305', name: 'web_search', allowed_domains: ['example.com'] }], messages: [{ role: 'user', content: 'hi' }] }),
      (e: unknown) => (e as { status?: number }).status === 400 && /tools\[0\]\.allowed_domains/.test((e as Error).message),
    );
  });
});

describe('key switches per tool', () => {
  test('server tools need no Function calling switch (as /v1/responses web_search); a custom tool does, named in the 403', async () => {
    const { key } = await server.createKey({ permissions: {} });
    const plain = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
    const m = await plain.messages.create({
      model: 'agent',
      max_tokens: 300,
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      messages: [{ role: 'user', content: 'Search the web for the valley railway.' }],
    });
    assert.ok(m.content.some((b) => b.type === 'server_tool_use'));
    await assert.rejects(
      plain.messages.create({
        model: 'agent',
        max_tokens: 50,
        tools: [{ type: 'web_search_20250305', name: 'web_search' }, { name: 'lookup', input_schema: { type: 'object', properties: {} } }],
        messages: [{ role: 'user', content: 'hi' }],
      }),
      (e: unknown) => (e as { status?: number }).status === 403 && /which 'tools' needs/.test((e as Error).message) && /function_calling/.test((e as Error).message),
    );
  });
});
