// The assistant searches and reads pages on its own (issue 20 items 3 and 5), driven with
// the official openai SDK against a fake SearxNG started here that also serves the pages
// its results link to: chat and Responses answers cite the results (url_citation spans
// that are exactly the Markdown links), streamed and not; open_page answers from the
// page; a Responses web_search tool gives web_search_call items and events in the
// reference's order; nothing is searched with the switch off, with client tools, or
// with external_web_access false; allowed_domains holds; a backend failure is told, not
// a 500; with no backend the assistant says plainly it cannot browse.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { checkStream, validateResponseObject } from '../../api/responses/event-checks.test-support.ts';
import { callRuns } from '../../credits/ledger.ts';

let fake: http.Server;
let base: string;
let mode: 'ok' | '500' = 'ok';
const searches: string[] = [];
const pageHits: string[] = [];

const PAGE = `<html><head><title>Valley trains</title><style>p{}</style></head><body><nav>Home | About</nav>
<h1>Trains of the valley</h1><p>The valley railway opened in 1902 and still runs today.</p>
<p>Every morning the first train crosses the old stone bridge at 6:15.</p><script>var x = 1;</script></body></html>`;

before(async () => {
  fake = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/res/v1/web/search') {
      // The Brave Search API's shape.
      searches.push(url.searchParams.get('q') ?? '');
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ type: 'search', web: { type: 'search', results: [{ title: 'Valley trains', url: `${base}/pages/trains`, description: 'The valley railway opened in 1902.' }] } }));
    }
    if (url.pathname === '/search') {
      searches.push(url.searchParams.get('q') ?? '');
      if (mode === '500') return res.writeHead(500).end('down');
      res.setHeader('content-type', 'application/json');
      return res.end(
        JSON.stringify({
          results: [
            { url: `${base}/pages/trains`, title: 'Valley trains', content: 'The valley railway opened in 1902. Trains cross the bridge every morning.' },
            { url: 'https://elsewhere.test/rail', title: 'Rail elsewhere', content: 'Railways of another place.' },
            { url: `${base}/pages/bridge`, title: 'The stone bridge', content: 'The old stone bridge carries the line over the river.' },
          ],
        }),
      );
    }
    pageHits.push(url.pathname);
    if (url.pathname === '/pages/trains') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    res.writeHead(404).end('no such page');
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
});
after(() => fake.close());

/** Each `[title](url)` link of the text that an annotation covers exactly. */
function assertSpans(text: string, annotations: { start_index: number; end_index: number; url: string }[]): void {
  assert.ok(annotations.length > 0, 'the answer cites something');
  const cps = [...text];
  for (const a of annotations) {
    const span = cps.slice(a.start_index, a.end_index).join('');
    assert.match(span, /^\[[^\]]*\]\(([^)]+)\)$/, `annotation spans a link: ${span}`);
    assert.equal(span.slice(span.indexOf('](') + 2, -1), a.url);
  }
}

describe('with a search backend', () => {
  let server: TestServer;
  let agentKey: string;
  let plainKey: string;
  before(async () => {
    server = await startTestServer({ WEB_SEARCH_BACKEND: 'searxng', WEB_SEARCH_URL: base, AGENT_API_OUTBOUND_ALLOW: '127.0.0.1' });
    const account = await server.createAccount(100);
    agentKey = (await server.createKey({ account_id: account.id, permissions: { agent_tools: true, function_calling: true } })).key;
    plainKey = (await server.createKey({ account_id: account.id, permissions: { function_calling: true } })).key;
  });
  after(() => server.close());

  test('chat: a look-up searches once and the answer cites the results as url_citation annotations', async () => {
    searches.length = 0;
    const completion = await server.openai(agentKey).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Search the web for valley trains' }] });
    const message = completion.choices[0]!.message;
    assert.deepEqual(searches, ['valley trains']);
    assert.equal(message.tool_calls, undefined, 'internal calls never appear as tool_calls');
    const annotations = (message.annotations ?? []).map((a) => ({ ...a.url_citation, type: a.type }));
    assert.ok(annotations.every((a) => a.type === 'url_citation'));
    assertSpans(message.content!, annotations);
    assert.ok(annotations.some((a) => a.url === `${base}/pages/trains` && a.title === 'Valley trains'));
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
  });

  test('chat streamed: the annotations come in a chunk before the finish chunk', async () => {
    const stream = await server.openai(agentKey).chat.completions.create({ model: 'agent', stream: true, messages: [{ role: 'user', content: 'Look up valley trains' }] });
    let text = '';
    const order: string[] = [];
    let annotations: any[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      const delta = choice.delta as { content?: string; annotations?: any[]; tool_calls?: unknown };
      assert.equal(delta.tool_calls, undefined);
      if (delta.content) text += delta.content;
      if (delta.annotations) {
        annotations = delta.annotations;
        order.push('annotations');
      }
      if (choice.finish_reason) order.push(`finish:${choice.finish_reason}`);
    }
    assert.deepEqual(order, ['annotations', 'finish:stop']);
    assertSpans(text, annotations.map((a) => a.url_citation));
  });

  test('chat: given a URL it opens the page through the guard and answers from it', async () => {
    pageHits.length = 0;
    const completion = await server
      .openai(agentKey)
      .chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: `Open ${base}/pages/trains and tell me when the first train crosses the bridge.` }] });
    const message = completion.choices[0]!.message;
    assert.deepEqual(pageHits, ['/pages/trains']);
    assert.match(message.content!, /6:15/);
    assert.doesNotMatch(message.content!, /var x/, 'scripts are not page text');
    assertSpans(message.content!, (message.annotations ?? []).map((a) => a.url_citation));
  });

  test('each page opened is a run of the request too (at its price, 0 by default)', async () => {
    const res = await server
      .openai(agentKey)
      .chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: `Open ${base}/pages/trains and tell me when the railway opened.` }] })
      .withResponse();
    const requestId = res.response.headers.get('x-request-id')!;
    const { from, to } = callRuns(requestId);
    // Read straight from the database: first the settlements answered before their commit (PostgreSQL).
    await server.app.services.ledger.settling();
    const runs = await server.app.services.store.db.selectFrom('credit_reservations').select(['run_id', 'charged']).where('run_id', '>=', from).where('run_id', '<', to).orderBy('run_id').execute();
    assert.deepEqual(runs.map((r) => [r.run_id, Number(r.charged) > 0]), [[requestId, true], [`${requestId}.1`, false]]);
  });

  test('no search without the agent tools switch, or with client tools', async () => {
    searches.length = 0;
    const off = await server.openai(plainKey).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Search the web for valley trains' }] });
    assert.match(off.choices[0]!.message.content!, /cannot browse/);
    const withTools = await server.openai(agentKey).chat.completions.create({
      model: 'agent',
      messages: [{ role: 'user', content: 'Search the web for valley trains' }],
      tools: [{ type: 'function', function: { name: 'get_time', description: 'Current time', parameters: { type: 'object', properties: {} } } }],
    });
    assert.equal(withTools.choices[0]!.message.annotations?.length ?? 0, 0);
    assert.deepEqual(searches, []);
  });

  test('Responses web_search tool: web_search_call items, url_citation annotations, events in the reference order', async () => {
    searches.length = 0;
    const client = server.openai(plainKey);
    const response = await client.responses.create({ model: 'agent', input: 'Search the web for valley trains', tools: [{ type: 'web_search' }] });
    validateResponseObject(response);
    const call = response.output.find((i) => i.type === 'web_search_call') as any;
    assert.deepEqual([call.status, call.action.type, call.action.query], ['completed', 'search', 'valley trains']);
    const message = response.output.find((i) => i.type === 'message') as any;
    const part = message.content[0];
    assertSpans(part.text, part.annotations);
    assert.ok(part.annotations.every((a: any) => a.type === 'url_citation' && typeof a.title === 'string'));

    const stream = await client.responses.create({ model: 'agent', input: 'Search the web for valley trains', tools: [{ type: 'web_search_preview' }], stream: true });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const final = checkStream(events);
    const types = events.map((e) => e.type);
    const at = (t: string) => types.indexOf(t);
    assert.ok(at('response.web_search_call.in_progress') < at('response.web_search_call.searching'));
    assert.ok(at('response.web_search_call.searching') < at('response.web_search_call.completed'));
    assert.ok(at('response.web_search_call.completed') < at('response.output_text.delta'));
    assert.ok(at('response.output_text.annotation.added') < at('response.output_text.done'));
    assert.equal(final.output[0].type, 'web_search_call');
    assert.deepEqual(searches, ['valley trains', 'valley trains']);
  });

  test('Responses: allowed_domains filters the results; external_web_access false searches nothing', async () => {
    searches.length = 0;
    const client = server.openai(plainKey);
    const response = await client.responses.create({
      model: 'agent',
      input: 'Search the web for rail',
      tools: [{ type: 'web_search', filters: { allowed_domains: ['elsewhere.test'] } }],
    });
    const part = (response.output.find((i) => i.type === 'message') as any).content[0];
    assert.ok(part.annotations.length > 0);
    assert.ok(part.annotations.every((a: any) => a.url.startsWith('https://elsewhere.test/')));

    searches.length = 0;
    const offline = await client.responses.create({ model: 'agent', input: 'Search the web for rail', tools: [{ type: 'web_search', external_web_access: false } as never] });
    assert.deepEqual(searches, []);
    assert.equal(offline.output.some((i) => i.type === 'web_search_call'), false);
    assert.match(offline.output_text, /cannot browse/);
  });

  test('a backend failure is a failed web_search_call the answer owns up to, not a 500', async () => {
    mode = '500';
    try {
      const response = await server.openai(plainKey).responses.create({ model: 'agent', input: 'Search the web for valley trains', tools: [{ type: 'web_search' }] });
      const call = response.output.find((i) => i.type === 'web_search_call') as any;
      assert.equal(call.status, 'failed');
      assert.match(response.output_text, /did not work/);
    } finally {
      mode = 'ok';
    }
  });

  test('the assistant without tools in Responses searches too, and each search is a run of the request', async () => {
    searches.length = 0;
    const res = await server.openai(agentKey).responses.create({ model: 'agent', input: 'Look up valley trains' }).withResponse();
    assert.deepEqual(searches, ['valley trains']);
    assert.equal(res.data.output[0]!.type, 'web_search_call');
    const requestId = res.response.headers.get('x-request-id')!;
    const { from, to } = callRuns(requestId);
    // Read straight from the database: first the settlements answered before their commit (PostgreSQL).
    await server.app.services.ledger.settling();
    const runs = await server.app.services.store.db.selectFrom('credit_reservations').select(['run_id', 'charged']).where('run_id', '>=', from).where('run_id', '<', to).orderBy('run_id').execute();
    assert.deepEqual(runs.map((r) => r.run_id), [requestId, `${requestId}.1`], 'the model run and the search fee');
    assert.equal(Number(runs[1]!.charged), Math.ceil(0.01 * server.app.services.config.creditsPerUsd * 1_000_000));
  });
});

describe('with the Brave Search API shape', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ WEB_SEARCH_BACKEND: 'brave', WEB_SEARCH_URL: base, WEB_SEARCH_API_KEY: 'brave-test-key', AGENT_API_OUTBOUND_ALLOW: '127.0.0.1' });
  });
  after(() => server.close());

  test('a look-up searches the Brave backend and cites its results', async () => {
    searches.length = 0;
    const { key } = await server.createKey({ permissions: { agent_tools: true } });
    const completion = await server.openai(key).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Look up valley trains' }] });
    assert.deepEqual(searches, ['valley trains']);
    const message = completion.choices[0]!.message;
    assertSpans(message.content!, (message.annotations ?? []).map((a) => a.url_citation));
  });
});

describe('without a search backend', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({});
  });
  after(() => server.close());

  test('the assistant says plainly that it cannot browse, in chat and in Responses with web_search', async () => {
    const { key } = await server.createKey({ permissions: { agent_tools: true } });
    const chat = await server.openai(key).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Search the web for valley trains' }] });
    assert.match(chat.choices[0]!.message.content!, /cannot browse/);
    const response = await server.openai(key).responses.create({ model: 'agent', input: 'Search the web for valley trains', tools: [{ type: 'web_search' }] });
    assert.match(response.output_text, /cannot browse/);
    assert.equal(response.output.some((i) => i.type === 'web_search_call'), false);
  });
});
