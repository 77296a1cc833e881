// The page reader against a local server exempted in the guard (as AGENT_API_OUTBOUND_ALLOW
// does in tests): HTML becomes readable text with its title (script, style, nav and image
// noise gone, links as their text), charsets are honoured, plain text, Markdown, JSON and
// XML are read as they are, anything else is refused as not text; error statuses,
// redirects, size, time and conversion limits each end in a PageFailed saying why. A guard
// without the exemption refuses the address before any request. findInPage is a plain,
// case-insensitive substring search.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { OutboundGuard, parseOutboundAllow } from '../../outbound/guard.ts';
import { findInPage } from './find-in-page.ts';
import { PageFailed, stripRawText, tidy } from './page-text.ts';
import { readPage } from './read-page.ts';

const ARTICLE = `<!doctype html>
<html><head>
<meta charset="utf-8">
<title>  Trains &amp; Rivers
 of the valley </title>
<style>.secret-style { color: red }</style>
<script>var secretScript = "<p>not text</p>";</script>
</head>
<body>
<nav><a href="/">Home</a> <a href="/menu">MenuEntry</a></nav>
<svg><title>IconTitle</title><path d="M0 0"/></svg>
<!-- a comment that is not text -->
<h1>The   valley railway</h1>
<p>Every    morning the trains
   cross the <a href="https://example.org/rivers-and-bridges">old bridge</a> over the river.</p>


<p>Crème brûlée is served on board.</p>
<img src="/photo.jpg" alt="photo-alt-text">
<ul><li>Monday</li><li><img src="/icon.png"></li><li>Friday</li></ul>
<table><tr><th>Station</th><th>Time</th></tr><tr><td>Lower End</td><td>08:15</td></tr></table>
<noscript>Enable JavaScript</noscript>
</body></html>`;

const LATIN1_HTML = Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><title>Café</title></head><body><p>Un café crème à Zürich.</p></body></html>', 'latin1');
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

let server: http.Server;
let base: string;
const seen: { path: string; headers: http.IncomingHttpHeaders }[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    seen.push({ path: req.url!, headers: req.headers });
    const send = (type: string | null, body: string | Buffer, status = 200) => {
      if (type) res.setHeader('content-type', type);
      res.writeHead(status).end(body);
    };
    switch (req.url) {
      case '/article':
        return send('text/html; charset=utf-8', ARTICLE);
      case '/latin1':
        return send('text/html', LATIN1_HTML);
      case '/latin1-text':
        return send('text/plain; charset=ISO-8859-1', Buffer.from('Grüße aus Köln', 'latin1'));
      case '/bogus-charset':
        return send('text/plain; charset=x-no-such-charset', Buffer.from('naïve café', 'utf8'));
      case '/plain':
        return send('text/plain', 'First line   \r\n\r\n\r\n\r\nSecond\u0007 line\t\n   indented stays\n\n\n');
      case '/markdown':
        return send('text/markdown; charset=utf-8', '# Heading\n\nSome *markdown* text.\n');
      case '/json':
        return send('application/json', JSON.stringify({ name: 'value', list: [1, 2, 3] }));
      case '/xml':
        return send('application/xml', '<?xml version="1.0"?><feed><entry>Item</entry></feed>');
      case '/no-type':
        return send(null, '<!DOCTYPE html><html><body><p>Sniffed as HTML</p></body></html>');
      case '/no-type-bom':
        return send(null, '\ufeff<html><body><p>Sniffed past a BOM</p></body></html>');
      case '/image':
        return send('image/png', PNG);
      case '/pdf':
        return send('application/pdf', '%PDF-1.7\n...');
      case '/binary-as-text':
        return send('text/plain', PNG);
      case '/missing':
        return send('text/html', '<h1>Not here</h1>', 404);
      case '/broken':
        return send('text/plain', 'oops', 503);
      case '/old':
        return res.writeHead(302, { location: '/article' }).end();
      case '/huge':
        return send('text/plain', Buffer.alloc(3 * 1024 * 1024, 0x61));
      case '/long-text':
        return send('text/plain', 'A line of text.\n'.repeat(20_000));
      case '/long-html':
        // About 1.2 MiB of paragraphs: more than is converted.
        return send('text/html', `<html><body>${'<p>Paragraph of a long page, with <b>some</b> markup.</p>\n'.repeat(21_000)}<p>THE-VERY-END</p></body></html>`);
      case '/many-children':
        return send('text/html', `<body>${'<span>w </span>'.repeat(25_000)}</body>`);
      case '/deep':
        return send('text/html', `<body><p>Shallow text.</p>${'<div>'.repeat(600)}Deep text.</body>`);
      case '/nested':
        return send('text/html', '<div>'.repeat(200_000));
      case '/slow':
        return; // never answers
      default:
        return send('text/plain', 'no such page', 404);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const guard = new OutboundGuard({ allow: parseOutboundAllow('127.0.0.1') });

/** The PageFailed a read ends in, its message matching `pattern`. */
async function fails(path: string, pattern: RegExp, opts: Parameters<typeof readPage>[2] = {}, g = guard): Promise<void> {
  await assert.rejects(readPage(g, `${base}${path}`, opts), (err: unknown) => {
    assert.ok(err instanceof PageFailed, `a PageFailed, not ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });
}

test('HTML: title and readable text; script, style, svg, comments, nav and images dropped; links as their text', async () => {
  seen.length = 0;
  const page = await readPage(guard, `${base}/article`);
  assert.equal(page.url, `${base}/article`);
  assert.equal(page.title, 'Trains & Rivers of the valley');
  assert.equal(page.truncated, false);
  const { text } = page;
  assert.match(text, /^The valley railway\n\nEvery morning the trains cross the old bridge over the river\.\n\nCrème brûlée is served on board\./);
  assert.match(text, /- Monday\n- Friday/);
  assert.match(text, /Station \| Time \|\nLower End \| 08:15 \|/);
  for (const noise of ['secret', 'not text', 'color', 'IconTitle', 'comment', 'MenuEntry', 'Home', 'photo', 'example.org', '[', 'Enable JavaScript', 'Trains']) {
    assert.ok(!text.includes(noise), `no ${noise} in ${JSON.stringify(text)}`);
  }
  assert.doesNotMatch(text, /\n\n\n|[ \t]\n|^\s|\s$/, 'whitespace collapsed');
  // The request: a modest User-Agent, an Accept preferring text.
  assert.equal(seen[0]!.headers['user-agent'], 'agent-api/0.1 (+open_page)');
  assert.match(seen[0]!.headers.accept!, /^text\/html, text\/plain;q=0\.9, application\/json;q=0\.8/);
});

test('charsets: from <meta> or Content-Type (iso-8859-1), an unknown label read as utf-8', async () => {
  const html = await readPage(guard, `${base}/latin1`);
  assert.equal(html.title, 'Café');
  assert.equal(html.text, 'Un café crème à Zürich.');
  assert.equal((await readPage(guard, `${base}/latin1-text`)).text, 'Grüße aus Köln');
  assert.equal((await readPage(guard, `${base}/bogus-charset`)).text, 'naïve café');
});

test('text types read as they are, tidied: plain, Markdown, JSON, XML; HTML sniffed when no type is given', async () => {
  const plain = await readPage(guard, `${base}/plain`);
  assert.deepEqual(plain, { url: `${base}/plain`, title: null, text: 'First line\n\nSecond line\n   indented stays', truncated: false });
  assert.equal((await readPage(guard, `${base}/markdown`)).text, '# Heading\n\nSome *markdown* text.');
  assert.deepEqual(JSON.parse((await readPage(guard, `${base}/json`)).text), { name: 'value', list: [1, 2, 3] });
  assert.match((await readPage(guard, `${base}/xml`)).text, /<entry>Item<\/entry>/);
  assert.equal((await readPage(guard, `${base}/no-type`)).text, 'Sniffed as HTML');
  assert.equal((await readPage(guard, `${base}/no-type-bom`)).text, 'Sniffed past a BOM');
});

test('not text: an image, a PDF, binary data labelled text', async () => {
  await fails('/image', /not text.*image\/png/);
  await fails('/pdf', /not text.*application\/pdf/);
  await fails('/binary-as-text', /not text.*binary/);
});

test('error statuses name the status', async () => {
  await fails('/missing', /^The page answered 404 Not Found$/);
  await fails('/broken', /^The page answered 503 Service Unavailable$/);
});

test('a redirect is followed: the final URL is given', async () => {
  const page = await readPage(guard, `${base}/old`);
  assert.equal(page.url, `${base}/article`);
  assert.equal(page.title, 'Trains & Rivers of the valley');
});

test('size: a body over maxBytes is refused with the guard\'s reason; long text is cut at maxChars', async () => {
  await fails('/huge', /^The answer is larger than 2097152 bytes$/);
  const text = await readPage(guard, `${base}/long-text`, { maxChars: 1000 });
  assert.equal(text.truncated, true);
  assert.ok(text.text.length <= 1000 && text.text.length > 900, String(text.text.length));
  assert.ok(text.text.startsWith('A line of text.\nA line of text.'));
  const html = await readPage(guard, `${base}/long-html`);
  assert.equal(html.truncated, true);
  assert.ok(html.text.length <= 20_000 && html.text.length > 19_000, String(html.text.length));
  assert.ok(html.text.startsWith('Paragraph of a long page, with some markup.\n\nParagraph'));
  // With room for all of it, the HTML past the conversion cap is still left out.
  const all = await readPage(guard, `${base}/long-html`, { maxChars: 10_000_000 });
  assert.equal(all.truncated, true);
  assert.ok(all.text.length > 400_000, String(all.text.length));
  assert.ok(!all.text.includes('THE-VERY-END'));
  // What html-to-text's own limits leave out (siblings past 20 000, nesting past 500) marks the page truncated.
  const many = await readPage(guard, `${base}/many-children`, { maxChars: 10_000_000 });
  assert.equal(many.truncated, true);
  assert.equal(many.text, Array(20_000).fill('w').join(' '));
  assert.deepEqual(await readPage(guard, `${base}/deep`), { url: `${base}/deep`, title: null, text: 'Shallow text.', truncated: true });
});

test('time: a page that does not answer, HTML too complex to convert in time', async () => {
  await fails('/slow', /^The page did not answer within 300 ms$/, { timeoutMs: 300 });
  await fails('/nested', /too complex to convert.*100 ms/, { convertTimeoutMs: 100 });
  // The converter is usable again after one was ended.
  assert.equal((await readPage(guard, `${base}/article`)).title, 'Trains & Rivers of the valley');
});

test('the caller\'s abort rejects with its reason, not a PageFailed', async () => {
  const controller = new AbortController();
  const reading = readPage(guard, `${base}/slow`, { signal: controller.signal });
  setTimeout(() => controller.abort(new Error('caller gave up')), 50);
  await assert.rejects(reading, /caller gave up/);
  await assert.rejects(readPage(guard, `${base}/article`, { signal: AbortSignal.abort(new Error('already')) }), /already/);
});

test('a guard without the exemption refuses loopback before any request, saying why', async () => {
  const strict = new OutboundGuard();
  seen.length = 0;
  // The guard's own reasons, without their final period (as every PageFailed).
  await fails('/article', /^Only https addresses may be fetched \(got http\)$/, {}, strict);
  const port = new URL(base).port;
  await assert.rejects(readPage(strict, `https://127.0.0.1:${port}/article`), (err: unknown) => err instanceof PageFailed && /^127\.0\.0\.1 is not a public address$/.test(err.message));
  await assert.rejects(readPage(strict, 'not a url'), (err: unknown) => err instanceof PageFailed && /not a valid URL/.test(err.message));
  assert.equal(seen.length, 0, 'the server saw no request');
});

test('a host that cannot be reached is a PageFailed', async () => {
  // A port nothing listens on: the server's, once closed, is not reused this soon.
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  await assert.rejects(readPage(guard, `http://127.0.0.1:${port}/`), (err: unknown) => err instanceof PageFailed && /^The page could not be reached \(ECONNREFUSED\)$/.test(err.message));
});

test('stripRawText cuts comments, script, style and svg in one pass, whatever their case', () => {
  assert.equal(stripRawText('a<!-- x -->b<SCRIPT type=x>if (a<b) {}</script >c<style>p{}</STYLE>d<svg><g/></svg>e<scripts>f'), 'abcde<scripts>f');
  assert.equal(stripRawText('a<script>never closed'), 'a');
  assert.equal(stripRawText('a<!-- never closed'), 'a');
});

test('tidy: control characters out, blank lines at most one, cut at maxChars without half a surrogate pair', () => {
  assert.deepEqual(tidy('\n\n a\u200b\u00a0b \n\n\n\nc\u0000d\n\n', 100), { text: ' a b\n\ncd', truncated: false });
  assert.deepEqual(tidy('ab😀cd', 3), { text: 'ab', truncated: true });
  assert.deepEqual(tidy('x'.repeat(1_000_000), 10), { text: 'x'.repeat(10), truncated: true });
  assert.deepEqual(tidy('abc', 3), { text: 'abc', truncated: false });
});

test('findInPage: case-insensitive plain substring, excerpts with context, capped', () => {
  const text = `Intro. ${'filler '.repeat(50)}The Bridge was built in 1901. ${'more '.repeat(50)}A second bridge (a.*b) followed; BRIDGE three.`;
  const page = { url: 'https://example.org/', title: null, text, truncated: false };
  const found = findInPage(page, 'bridge', { context: 10 });
  assert.equal(found.matches.length, 3);
  assert.deepEqual(
    found.matches.map((m) => text.slice(m.index, m.index + 6)),
    ['Bridge', 'bridge', 'BRIDGE'],
  );
  assert.equal(found.matches[0]!.excerpt, 'The Bridge was built', 'no word cut in half');
  assert.equal(found.matches[2]!.excerpt, 'followed; BRIDGE three.');
  assert.equal(findInPage('xxxxxxxxxxxxxxxbridgeyyyyyyyyyyyyyy', 'bridge', { context: 5 }).matches[0]!.excerpt, 'xxxxxbridgeyyyyy', 'a word is cut when there is no space');
  assert.equal(findInPage(text, 'bridge', { maxMatches: 2 }).matches.length, 2);
  // Pattern syntax is just text.
  assert.equal(findInPage(text, '(a.*b)').matches.length, 1);
  assert.equal(findInPage(text, '.*').matches.length, 1);
  assert.equal(findInPage(text, '.+').matches.length, 0);
  assert.deepEqual(findInPage(text, '   '), { matches: [] });
  assert.deepEqual(findInPage(text, 'nowhere'), { matches: [] });
  // Default context: about 200 characters either side.
  const wide = findInPage(text, 'built').matches[0]!;
  assert.ok(wide.excerpt.length > 300 && wide.excerpt.length < 420, String(wide.excerpt.length));
  // Indices stay right where lower-casing lengthens a character (İ).
  const turkish = 'İİİ then Target here';
  assert.equal(findInPage(turkish, 'target').matches[0]!.index, turkish.indexOf('Target'));
});
