// The outbound guard refuses every non-public address however it is written, a name
// resolving to one, and a redirect to one, before any connection reaches it: a loopback
// listener the test watches sees none. An exempted test server (AGENT_API_OUTBOUND_ALLOW's
// host:port) is reached, over plain http, with caps on size and redirects, and headers
// meant for it do not follow a redirect elsewhere.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { loadConfig } from '../config.ts';
import { isPublicAddress, isValidOutboundAllow, OutboundGuard, OutboundRefused, OutboundTooLarge, parseOutboundAllow } from './guard.ts';

/** A loopback listener that records every connection it gets. */
let watched: http.Server;
let watchedPort: number;
let connections = 0;
/** The exempted server: pages, redirects, a large answer. */
let site: http.Server;
let sitePort: number;
const seenHeaders: Record<string, string | undefined>[] = [];
let release!: () => void;
const released = new Promise<void>((r) => (release = r));

before(async () => {
  watched = http.createServer((_req, res) => res.end('secret'));
  watched.on('connection', () => connections++);
  await new Promise<void>((r) => watched.listen(0, '127.0.0.1', r));
  watchedPort = (watched.address() as AddressInfo).port;
  site = http.createServer((req, res) => {
    seenHeaders.push({ path: req.url, authorization: req.headers.authorization });
    if (req.url === '/page') return res.end('<html><body>hello</body></html>');
    if (req.url === '/to-watched') return res.writeHead(302, { location: `http://127.0.0.1:${watchedPort}/` }).end();
    if (req.url === '/to-watched-https') return res.writeHead(307, { location: `https://[::ffff:127.0.0.1]:${watchedPort}/` }).end();
    if (req.url === '/to-rebind') return res.writeHead(302, { location: `https://rebind.example:${watchedPort}/` }).end();
    if (req.url === '/to-private-name') return res.writeHead(301, { location: 'https://intranet.example/' }).end();
    if (req.url === '/to-metadata') return res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (req.url === '/hop') return res.writeHead(302, { location: '/page' }).end();
    if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    if (req.url === '/large') return res.end(Buffer.alloc(300_000, 0x61));
    if (req.url === '/stream') {
      // The first part now, the rest only once the test has read the first.
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: first\n\n');
      return void released.then(() => res.end('data: second\n\n'));
    }
    if (req.url === '/endless') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const tick = setInterval(() => res.write(Buffer.alloc(16_384, 0x61)), 5);
      return void res.on('close', () => clearInterval(tick));
    }
    if (req.url === '/silent') return; // never answers
    if (req.url === '/hold') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders(); // headers, then nothing
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  sitePort = (site.address() as AddressInfo).port;
});
after(() => {
  release();
  watched.close();
  site.close();
  site.closeAllConnections();
});

const names: Record<string, string[]> = {
  'intranet.example': ['10.1.2.3'],
  'mixed.example': ['93.184.216.34', '127.0.0.1'],
  'rebind.example': ['127.0.0.1'],
  'public.example': ['93.184.216.34'],
};
const lookup = async (host: string) => {
  const found = names[host];
  if (!found) throw new Error('ENOTFOUND');
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const guard = () => new OutboundGuard({ allow: parseOutboundAllow(`127.0.0.1:${sitePort}`), lookup });

test('addresses: only public unicast passes', () => {
  for (const a of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::', '2001::1', 'ff02::1']) {
    assert.equal(isPublicAddress(a), false, a);
  }
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) assert.equal(isPublicAddress(a), true, a);
});

test('refused before any connection: http, loopback in every spelling, private, metadata, names resolving to private addresses', async () => {
  const g = guard();
  const refused = [
    `http://example.com/`,
    `https://127.0.0.1:${watchedPort}/`,
    `https://[::1]:${watchedPort}/`,
    `https://[::ffff:127.0.0.1]:${watchedPort}/`,
    `https://2130706433:${watchedPort}/`,
    `https://0x7f.1:${watchedPort}/`,
    `https://017700000001:${watchedPort}/`,
    'https://10.0.0.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://intranet.example/',
    'https://mixed.example/',
    `https://rebind.example:${watchedPort}/`,
    'https://user:pass@public.example/',
    'not a url',
    `http://127.0.0.1:${watchedPort}/`,
  ];
  for (const url of refused) {
    await assert.rejects(g.fetch(url, { timeoutMs: 5_000 }), (e: unknown) => e instanceof OutboundRefused, url);
  }
  assert.equal(connections, 0, 'nothing reached the watched listener');
});

test('an exempted server is reached over http; redirects are checked at every hop; caps hold; credentials stay with their origin', async () => {
  const g = guard();
  const base = `http://127.0.0.1:${sitePort}`;
  const page = await g.fetch(`${base}/page`);
  assert.equal(page.status, 200);
  assert.match(page.body.toString(), /hello/);
  const hopped = await g.fetch(`${base}/hop`);
  assert.equal(hopped.url, `${base}/page`);

  for (const path of ['/to-watched', '/to-watched-https', '/to-rebind', '/to-private-name', '/to-metadata']) {
    await assert.rejects(g.fetch(`${base}${path}`, { headers: { authorization: 'Bearer canary' } }), (e: unknown) => e instanceof OutboundRefused, path);
  }
  assert.equal(connections, 0, 'a redirect to the watched listener never connected');
  await assert.rejects(g.fetch(`${base}/loop`), /More than 5 redirects/);
  await assert.rejects(g.fetch(`${base}/large`, { maxBytes: 100_000 }), /larger than 100000 bytes/);

  // A redirect within the origin keeps the credentials; none went anywhere else.
  seenHeaders.length = 0;
  await g.fetch(`${base}/hop`, { headers: { authorization: 'Bearer canary' } });
  assert.deepEqual(seenHeaders, [
    { path: '/hop', authorization: 'Bearer canary' },
    { path: '/page', authorization: 'Bearer canary' },
  ]);
});

test('AGENT_API_OUTBOUND_ALLOW: hosts, host:port pairs and CIDRs', () => {
  const allow = parseOutboundAllow(' localhost , 127.0.0.1:8080, 10.0.0.0/8, [::1]:9000 ');
  assert.deepEqual([...allow.hosts], ['localhost']);
  assert.deepEqual([...allow.hostPorts].sort(), ['127.0.0.1:8080', '[::1]:9000']);
  assert.equal(allow.ranges.length, 1);
  const g = new OutboundGuard({ allow, lookup });
  assert.equal(g.checkUrl('http://10.2.3.4/x').hostname, '10.2.3.4');
  assert.throws(() => g.checkUrl('http://127.0.0.1:8081/'), OutboundRefused);
  assert.equal(g.checkUrl('http://127.0.0.1:8080/').port, '8080');
  assert.equal(isValidOutboundAllow('10.0.0.0/99'), false);
  assert.throws(() => loadConfig({ DATA_DIR: '/tmp/agent-api-guard-test', AGENT_API_OUTBOUND_ALLOW: '10.0.0.0/99' }), /AGENT_API_OUTBOUND_ALLOW/);
  assert.equal(loadConfig({ DATA_DIR: '/tmp/agent-api-guard-test' }).outboundAllow, undefined, 'off by default');
});

test('request(): the answer streams as it arrives, with the same checks, a byte cap while it streams, and a timeout for the headers only', async () => {
  const g = guard();
  const base = `http://127.0.0.1:${sitePort}`;

  // The first event is read while the server still holds the rest back.
  const streamed = await g.request(`${base}/stream`);
  assert.equal(streamed.status, 200);
  assert.equal(streamed.headers.get('content-type'), 'text/event-stream');
  assert.equal(streamed.url, `${base}/stream`);
  const reader = streamed.body!.getReader();
  const first = await reader.read();
  assert.equal(Buffer.from(first.value!).toString(), 'data: first\n\n');
  release();
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
  assert.equal(rest, 'data: second\n\n');

  // The cap errors the stream partway, whatever was read before.
  const endless = await g.request(`${base}/endless`, { maxBytes: 100_000 });
  await assert.rejects(endless.text(), (e: unknown) => e instanceof OutboundTooLarge && e instanceof OutboundRefused && /larger than 100000 bytes/.test(e.message));
  await assert.rejects(g.request(`${base}/large`, { maxBytes: 100_000 }), /larger than 100000 bytes/, 'a declared length past the cap is refused at once');

  // The caller's signal ends the body too.
  const aborter = new AbortController();
  const open = await g.request(`${base}/endless`, { signal: aborter.signal, maxBytes: 1e9 });
  const openReader = open.body!.getReader();
  await openReader.read();
  aborter.abort(new Error('caller went away'));
  await assert.rejects(async () => {
    for (;;) if ((await openReader.read()).done) break;
  });

  // Cancelled while a read waits for data: the read ends, nothing throws.
  const held = await g.request(`${base}/hold`);
  const heldReader = held.body!.getReader();
  const pending = heldReader.read();
  await heldReader.cancel();
  assert.equal((await pending).done, true);

  await assert.rejects(g.request(`${base}/silent`, { timeoutMs: 300 }), (e: unknown) => e instanceof DOMException && e.name === 'TimeoutError');
  // Once the headers came, the timeout no longer applies: the body is still read well after it.
  const long = await g.request(`${base}/endless`, { timeoutMs: 50, maxBytes: 1e9 });
  await new Promise((r) => setTimeout(r, 400));
  const longReader = long.body!.getReader();
  for (let i = 0; i < 50; i++) assert.equal((await longReader.read()).done, false);
  await longReader.cancel();

  // Redirects: every hop checked; credentials stay with their origin; a POST's body kept on 307.
  for (const path of ['/to-watched', '/to-watched-https', '/to-rebind', '/to-private-name', '/to-metadata']) {
    await assert.rejects(g.request(`${base}${path}`, { headers: { authorization: 'Bearer canary' } }), (e: unknown) => e instanceof OutboundRefused, path);
  }
  await assert.rejects(g.request(`${base}/loop`), /More than 5 redirects/);
  seenHeaders.length = 0;
  const hopped = await g.request(`${base}/hop`, { headers: { authorization: 'Bearer canary' } });
  assert.equal(hopped.url, `${base}/page`);
  assert.match(await hopped.text(), /hello/);
  assert.deepEqual(seenHeaders, [
    { path: '/hop', authorization: 'Bearer canary' },
    { path: '/page', authorization: 'Bearer canary' },
  ]);

  const none = new OutboundGuard({ lookup });
  for (const url of [`http://127.0.0.1:${watchedPort}/`, `https://127.0.0.1:${watchedPort}/`, `https://rebind.example:${watchedPort}/`, 'https://intranet.example/']) {
    await assert.rejects(none.request(url, { timeoutMs: 5_000 }), (e: unknown) => e instanceof OutboundRefused, url);
  }
  assert.equal(connections, 0, 'nothing reached the watched listener');
});

test('also refused: the IPv4-compatible IPv6 form, Azure WireServer, a metadata name with a trailing dot', () => {
  assert.equal(isPublicAddress('::7f00:1'), false);
  assert.equal(isPublicAddress('::8.8.8.8'), false);
  assert.equal(isPublicAddress('168.63.129.16'), false);
  assert.equal(isPublicAddress('8.8.8.8'), true);
  const guard = new OutboundGuard();
  assert.throws(() => guard.checkUrl('https://metadata.google.internal./computeMetadata/v1/'), /cloud metadata/);
  assert.throws(() => guard.checkUrl('https://[::7f00:1]/'), /not a public address/);
});
