// The search backends against fakes that answer as SearxNG and the Brave Search API do:
// the query, count, location and key each takes; results as {url, title, snippet};
// allowed domains enforced on results (subdomains included); each failure a SearchFailed
// saying why (SearxNG's 403 without the json format named), never a throw of its own.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { braveBackend, loadSearchBackend, onDomains, SearchFailed, searxngBackend } from './backends.ts';

const requests: { path: string; headers: http.IncomingHttpHeaders }[] = [];
let mode: 'ok' | '403' | 'html' | 'slow' | '500' = 'ok';
let server: http.Server;
let base: string;

const RESULTS = [
  { url: 'https://docs.example.org/trains', title: 'Trains  of the\nvalley', content: 'Every morning the trains cross.' },
  { url: 'https://example.org/rivers', title: 'Rivers', content: 'Rivers and towns.' },
  { url: 'https://other.test/x', title: 'Other', content: 'Elsewhere.' },
  { url: 'javascript:alert(1)', title: 'Bad', content: 'A link that is no page.' },
  { url: 'https://example.org/rivers', title: 'Rivers again', content: 'The same link twice.' },
];

before(async () => {
  server = http.createServer((req, res) => {
    requests.push({ path: req.url!, headers: req.headers });
    if (mode === 'slow') return; // never answers
    if (mode === '403') return res.writeHead(403).end('Forbidden');
    if (mode === '500') return res.writeHead(500).end('oops');
    if (mode === 'html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    const url = new URL(req.url!, 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname === '/search') return res.end(JSON.stringify({ query: url.searchParams.get('q'), number_of_results: 5, results: RESULTS.map((r) => ({ ...r, engine: 'fake' })) }));
    if (url.pathname === '/res/v1/web/search') return res.end(JSON.stringify({ type: 'search', web: { type: 'search', results: RESULTS.map((r) => ({ title: r.title, url: r.url, description: r.content })) } }));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

test('SearxNG: /search?q=...&format=json, results as url/title/snippet, bad and repeated links dropped', async () => {
  mode = 'ok';
  requests.length = 0;
  const results = await searxngBackend(base).search('trains', { count: 10 });
  assert.deepEqual(results, [
    { url: 'https://docs.example.org/trains', title: 'Trains of the valley', snippet: 'Every morning the trains cross.' },
    { url: 'https://example.org/rivers', title: 'Rivers', snippet: 'Rivers and towns.' },
    { url: 'https://other.test/x', title: 'Other', snippet: 'Elsewhere.' },
  ]);
  const url = new URL(requests[0]!.path, 'http://x');
  assert.deepEqual([url.pathname, url.searchParams.get('q'), url.searchParams.get('format')], ['/search', 'trains', 'json']);
  assert.equal((await searxngBackend(`${base}/`).search('trains', { count: 1 })).length, 1, 'count caps the results');
});

test('Brave: the subscription token, count and country; allowed domains enforced on results, subdomains included', async () => {
  mode = 'ok';
  requests.length = 0;
  const results = await braveBackend(base, 'brave-token').search('rivers', { count: 5, allowedDomains: ['example.org'], userLocation: { country: 'de', city: 'Berlin' } });
  assert.deepEqual(results.map((r) => r.url), ['https://docs.example.org/trains', 'https://example.org/rivers']);
  const { path, headers } = requests[0]!;
  const url = new URL(path, 'http://x');
  assert.equal(url.pathname, '/res/v1/web/search');
  assert.equal(url.searchParams.get('q'), 'rivers site:example.org');
  assert.equal(url.searchParams.get('count'), '5');
  assert.equal(url.searchParams.get('country'), 'DE');
  assert.equal(headers['x-subscription-token'], 'brave-token');
});

test('failures are SearchFailed with the reason: 403 (json format off), 500, not JSON, unreachable', async () => {
  for (const [m, pattern] of [
    ['403', /HTTP 403 \(SearxNG answers 403 until its settings enable the json format\)/],
    ['500', /HTTP 500/],
    ['html', /did not answer JSON/],
  ] as const) {
    mode = m;
    await assert.rejects(searxngBackend(base).search('q', { count: 3 }), (e: unknown) => e instanceof SearchFailed && pattern.test(e.message), m);
  }
  await assert.rejects(braveBackend('http://127.0.0.1:9', 'k').search('q', { count: 3 }), (e: unknown) => e instanceof SearchFailed && /could not be reached/.test(e.message));
  // The caller's abort is the caller's, not a backend failure.
  mode = 'slow';
  const stop = new AbortController();
  const pending = searxngBackend(base).search('q', { count: 3, signal: stop.signal });
  setTimeout(() => stop.abort(new Error('caller gone')), 50);
  await assert.rejects(pending, /caller gone/);
  mode = 'ok';
});

test('domains: a domain and its subdomains, nothing that merely ends the same', () => {
  assert.equal(onDomains('https://a.b.example.org/x', ['example.org']), true);
  assert.equal(onDomains('https://example.org./x', ['.example.org']), true);
  assert.equal(onDomains('https://badexample.org/x', ['example.org']), false);
  assert.equal(onDomains('https://example.org.evil.test/x', ['example.org']), false);
  assert.equal(onDomains('not a url', ['example.org']), false);
});

test('configuration: none is null (cannot browse), each backend needs what it needs', async () => {
  assert.equal(await loadSearchBackend({ backend: undefined, url: undefined, apiKey: undefined, module: undefined }), null);
  assert.equal((await loadSearchBackend({ backend: 'searxng', url: base, apiKey: undefined, module: undefined }))!.name, 'searxng');
  await assert.rejects(loadSearchBackend({ backend: 'brave', url: base, apiKey: undefined, module: undefined }), /WEB_SEARCH_API_KEY/);
  await assert.rejects(loadSearchBackend({ backend: 'searxng', url: undefined, apiKey: undefined, module: undefined }), /WEB_SEARCH_URL/);
});
