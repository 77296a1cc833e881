// The MCP client against a real MCP server (the SDK's McpServer over Streamable HTTP,
// stateful, answers as SSE) on loopback, reached through an outbound guard that exempts
// 127.0.0.1: tools listed with their schemas and annotations; a call made once with the
// arguments as given, the caller's header and token arriving with it; a tool's failure
// and a JSON-RPC error as answers; time, cancellation, an unreachable port, a refused
// address, a 401 and a cross-origin redirect as McpFailed; output capped. Canary secrets
// are checked against every message that came back.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { McpServer as SdkServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { OutboundGuard, parseOutboundAllow } from '../../outbound/guard.ts';
import { callMcpTool, listMcpTools, McpFailed, type McpServer } from './mcp-client.ts';

const TOKEN = 'tok-canary-7f3a9c0e';
const HEADER = 'hdr-canary-51be02d4';
const T = { timeout: 120_000 };

/** Every HTTP request the MCP server got. */
const seen: { method: string; path: string; host: string; authorization?: string; custom?: string }[] = [];
/** Every tools/call it got, with the arguments exactly as sent. */
const calls: { name: string; arguments: unknown }[] = [];
/** Every message (thrown or answered) the client gave back: checked for the canaries at the end. */
const messages: string[] = [];
let slowStarted: (() => void) | undefined;
const sessions = new Map<string, StreamableHTTPServerTransport>();
let server: http.Server;
let port: number;
/** A loopback listener a refusing guard must never reach. */
let watched: http.Server;
let watchedPort: number;
let watchedConnections = 0;

function mcpServer(): SdkServer {
  const s = new SdkServer({ name: 'test-server', version: '1.0.0' });
  s.registerTool('add', { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  s.registerTool('echo', { description: 'Says back what it got.', inputSchema: { text: z.string(), tags: z.array(z.string()), nested: z.object({ n: z.number() }).optional() } }, async (args) => ({
    content: [{ type: 'text', text: JSON.stringify(args) }],
  }));
  // Fails, quoting the credentials it was sent (as a careless server might).
  s.registerTool('fail', { description: 'Always fails.' }, async (extra) => ({
    content: [{ type: 'text', text: `It broke. You sent ${String(extra.requestInfo?.headers.authorization)} and ${String(extra.requestInfo?.headers['x-custom'])}.` }],
    isError: true,
  }));
  s.registerTool('slow', { description: 'Answers after a minute, or never.' }, async (extra) => {
    slowStarted?.();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 60_000);
      extra.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()));
    });
    return { content: [{ type: 'text', text: 'finally' }] };
  });
  s.registerTool('big', { description: 'A long answer.' }, async () => ({ content: [{ type: 'text', text: 'x'.repeat(10_000) }] }));
  s.registerTool('huge', { description: 'More than the client takes.' }, async () => ({ content: [{ type: 'text', text: 'y'.repeat(9 * 1024 * 1024) }] }));
  s.registerTool('picture', { description: 'Text and an image.' }, async () => ({
    content: [
      { type: 'text', text: 'Here it is:' },
      { type: 'image', data: Buffer.from('not really a png').toString('base64'), mimeType: 'image/png' },
    ],
  }));
  return s;
}

/** The request's JSON, read here to record the calls; kept as `rawBody`, where the transport's request conversion (@hono/node-server) reads a body already consumed. */
async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  (req as { rawBody?: Buffer }).rawBody = raw;
  return raw.length ? JSON.parse(raw.toString()) : undefined;
}

before(async () => {
  server = http.createServer(async (req, res) => {
    const path = req.url ?? '';
    seen.push({ method: req.method!, path, host: req.headers.host ?? '', authorization: req.headers.authorization, custom: req.headers['x-custom'] as string | undefined });
    // A server refusing the credentials, and quoting them back in its answer.
    if (path === '/deny') return res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `bad token ${req.headers.authorization}` }));
    if (path === '/moved') return res.writeHead(307, { location: `http://other.test:${port}/mcp` }).end();
    if (path !== '/mcp' && path !== '/stateless') return res.writeHead(404).end();
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    for (const message of [body].flat()) {
      const m = message as { method?: string; id?: number; params?: { name?: string; arguments?: unknown } } | undefined;
      if (m?.method !== 'tools/call') continue;
      calls.push({ name: m.params!.name!, arguments: m.params!.arguments });
      // A JSON-RPC error (McpServer turns a tool's errors into results, so it is answered here).
      if (m.params!.name === 'rpc_error') {
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `No such thing (you sent ${req.headers.authorization})` } }));
      }
    }
    // A stateless server answering in plain JSON, without the GET stream (405, as the spec allows).
    if (path === '/stateless') {
      if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await mcpServer().connect(t);
      res.on('close', () => void t.close());
      return t.handleRequest(req, res, body);
    }
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || !isInitializeRequest(body)) return res.writeHead(400).end('no session');
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, t) });
      t.onclose = () => void (t.sessionId && sessions.delete(t.sessionId));
      await mcpServer().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  watched = http.createServer((_req, res) => res.end('secret'));
  watched.on('connection', () => watchedConnections++);
  await new Promise<void>((r) => watched.listen(0, '127.0.0.1', r));
  watchedPort = (watched.address() as AddressInfo).port;
});

after(async () => {
  for (const t of sessions.values()) await t.close().catch(() => undefined);
  server.closeAllConnections();
  server.close();
  watched.close();
});

const lookup = async (host: string) => {
  if (host === 'other.test' || host === 'rebind.test') return [{ address: '127.0.0.1', family: 4 }];
  throw new Error('ENOTFOUND');
};
const guard = new OutboundGuard({ allow: parseOutboundAllow('127.0.0.1,other.test'), lookup });
const target = (path = '/mcp'): McpServer => ({ label: 'tests', url: `http://127.0.0.1:${port}${path}`, headers: { 'X-Custom': HEADER }, authorization: TOKEN });

/** Awaits a rejection with McpFailed of the kind given, keeping its message for the canary check. */
async function fails(promise: Promise<unknown>, kind: McpFailed['kind'], pattern: RegExp): Promise<McpFailed> {
  let caught: unknown;
  await assert.rejects(promise, (e: unknown) => ((caught = e), true));
  assert.ok(caught instanceof McpFailed, `an McpFailed, not ${String(caught)}`);
  messages.push(caught.message);
  assert.equal(caught.kind, kind, caught.message);
  assert.match(caught.message, pattern);
  return caught;
}

test('listing: names, descriptions, input schemas and annotations; at most maxTools', T, async () => {
  const tools = await listMcpTools(guard, target());
  assert.deepEqual(
    tools.map((t) => t.name),
    ['add', 'echo', 'fail', 'slow', 'big', 'huge', 'picture'],
  );
  const add = tools[0]!;
  assert.equal(add.description, 'Adds two numbers.');
  assert.deepEqual(add.annotations, { readOnlyHint: true });
  const schema = add.input_schema as { type: string; properties: Record<string, { type: string }>; required: string[] };
  assert.equal(schema.type, 'object');
  assert.deepEqual(Object.keys(schema.properties), ['a', 'b']);
  assert.equal(schema.properties.a!.type, 'number');
  assert.deepEqual(schema.required, ['a', 'b']);
  assert.equal(tools[1]!.annotations, null, 'no annotations: null');

  assert.deepEqual(
    (await listMcpTools(guard, target(), { maxTools: 2 })).map((t) => t.name),
    ['add', 'echo'],
  );
});

test('a call: made once, with the arguments exactly as given; the header and the token reach the server; the session is ended', T, async () => {
  seen.length = 0;
  calls.length = 0;
  const args = { text: 'héllo "world"', tags: ['a', 'b'], nested: { n: 3 } };
  const result = await callMcpTool(guard, target(), 'echo', args);
  assert.deepEqual(result, { output: JSON.stringify(args) });
  assert.deepEqual(calls, [{ name: 'echo', arguments: args }]);

  assert.ok(seen.length >= 3, 'initialize, initialized, the call');
  for (const s of seen) {
    assert.equal(s.authorization, `Bearer ${TOKEN}`, `${s.method} ${s.path}`);
    assert.equal(s.custom, HEADER, `${s.method} ${s.path}`);
  }
  assert.ok(
    seen.some((s) => s.method === 'DELETE'),
    'the session was terminated',
  );

  assert.deepEqual(await callMcpTool(guard, target(), 'add', { a: 2, b: 40 }), { output: '42' });
  assert.deepEqual(await callMcpTool(guard, { ...target(), authorization: `Bearer ${TOKEN}` }, 'add', { a: 1, b: 1 }), { output: '2' }, 'a token given with its "Bearer " is not doubled');
  assert.equal(seen.at(-1)!.authorization, `Bearer ${TOKEN}`);
});

test("a tool's failure and a JSON-RPC error are answers, the credentials they quote blanked", T, async () => {
  const failed = await callMcpTool(guard, target(), 'fail', {});
  assert.ok('error' in failed);
  messages.push(failed.error, JSON.stringify(failed.detail));
  assert.equal(failed.error, 'It broke. You sent Bearer [redacted] and [redacted].');
  assert.deepEqual(failed.detail, { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: failed.error }] });

  const rpc = await callMcpTool(guard, target(), 'rpc_error', { x: 1 });
  assert.ok('error' in rpc);
  messages.push(rpc.error, JSON.stringify(rpc.detail));
  assert.equal(rpc.error, 'No such thing (you sent Bearer [redacted])');
  assert.deepEqual(rpc.detail, { type: 'mcp_protocol_error', code: -32602, message: rpc.error });

  // Arguments the tool's schema refuses: the server says so as a tool failure.
  const invalid = await callMcpTool(guard, target(), 'add', { a: 'two' });
  assert.ok('error' in invalid);
  messages.push(invalid.error);
  assert.match(invalid.error, /Input validation error|Invalid arguments/i);
});

test('a stateless server answering in JSON, with no GET stream (405), works the same', T, async () => {
  seen.length = 0;
  calls.length = 0;
  assert.equal((await listMcpTools(guard, target('/stateless'))).length, 7);
  assert.deepEqual(await callMcpTool(guard, target('/stateless'), 'add', { a: 20, b: 22 }), { output: '42' });
  assert.deepEqual(calls, [{ name: 'add', arguments: { a: 20, b: 22 } }]);
  await fails(callMcpTool(guard, target('/stateless'), 'huge', {}, { timeoutMs: 100_000 }), 'protocol', /^The MCP server 'tests' sent an answer that was refused: The answer is larger than \d+ bytes\.$/);
  assert.ok(seen.some((s) => s.method === 'GET'), 'the GET stream was tried');
  assert.ok(!seen.some((s) => s.method === 'DELETE'), 'no session, nothing to end');
});

test('output: text joined, other content described, cut past maxOutputChars with a note', T, async () => {
  const picture = await callMcpTool(guard, target(), 'picture', {});
  assert.deepEqual(picture, { output: 'Here it is:\n[image content: image/png, not shown]' });

  const big = await callMcpTool(guard, target(), 'big', {}, { maxOutputChars: 1_000 });
  assert.ok('output' in big);
  assert.equal(big.output, `${'x'.repeat(1_000)}\n[output truncated: 10000 characters, the first 1000 shown]`);

  // An answer past the byte cap ends the call at once (not at the time limit).
  await fails(callMcpTool(guard, target(), 'huge', {}, { timeoutMs: 100_000 }), 'protocol', /^The MCP server 'tests' sent an answer that was refused: The answer is larger than \d+ bytes\.$/);
});

test('time and cancellation: McpFailed, naming the server', T, async () => {
  calls.length = 0;
  await fails(callMcpTool(guard, target(), 'slow', {}, { timeoutMs: 1_500 }), 'timeout', /^The MCP server 'tests' did not answer within 1\.5 s\.$/);
  assert.deepEqual(calls, [{ name: 'slow', arguments: {} }], 'it was called, once');

  const controller = new AbortController();
  const started = new Promise<void>((r) => (slowStarted = r));
  const pending = callMcpTool(guard, target(), 'slow', {}, { signal: controller.signal, timeoutMs: 100_000 });
  await started;
  controller.abort();
  await fails(pending, 'aborted', /^The request to the MCP server 'tests' was cancelled\.$/);
  slowStarted = undefined;

  // Already cancelled: nothing is sent.
  seen.length = 0;
  await fails(listMcpTools(guard, target(), { signal: AbortSignal.abort() }), 'aborted', /cancelled/);
  assert.equal(seen.length, 0);
});

test('an unreachable port, a refused address, a 401 and a server that is no MCP server: McpFailed', T, async () => {
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  await fails(listMcpTools(guard, { ...target(), url: `http://127.0.0.1:${closedPort}/mcp` }), 'unreachable', /^The MCP server 'tests' is not reachable: the connection was refused\.$/);

  // Without the exemption: plain http, a loopback literal over https, a name resolving to loopback.
  const strict = new OutboundGuard({ lookup });
  await fails(listMcpTools(strict, { ...target(), url: `http://127.0.0.1:${watchedPort}/mcp` }), 'unreachable', /^The MCP server 'tests' is not reachable: Only https addresses may be fetched/);
  await fails(callMcpTool(strict, { ...target(), url: `https://127.0.0.1:${watchedPort}/mcp` }, 'add', { a: 1, b: 2 }), 'unreachable', /127\.0\.0\.1 is not a public address/);
  await fails(listMcpTools(strict, { ...target(), url: `https://rebind.test:${watchedPort}/mcp` }), 'unreachable', /rebind\.test resolves to an address that is not public/);
  assert.equal(watchedConnections, 0, 'the listener saw no connection');

  const denied = await fails(listMcpTools(guard, target('/deny')), 'refused', /^The MCP server 'tests' refused the request \(401\)\.$/);
  assert.equal(denied.status, 401);
  await fails(listMcpTools(guard, target('/nothing')), 'http', /answered with HTTP status 404/);
  await fails(listMcpTools(guard, { ...target(), url: 'not a url' }), 'unreachable', /not a valid URL/);
});

test('a redirect to another origin: the header and the token do not follow it', T, async () => {
  seen.length = 0;
  // The session headers do not follow either, so the other origin cannot serve it.
  await fails(listMcpTools(guard, target('/moved')), 'http', /^The MCP server 'tests' answered with HTTP status \d+\.$/);
  const elsewhere = seen.filter((s) => s.host.startsWith('other.test'));
  assert.ok(elsewhere.length > 0, 'the redirect was followed');
  for (const s of elsewhere) {
    assert.equal(s.authorization, undefined);
    assert.equal(s.custom, undefined);
  }
  assert.equal(seen.find((s) => s.path === '/moved')?.authorization, `Bearer ${TOKEN}`);
});

test('a header that is not a valid HTTP header is refused without being quoted or sent', T, async () => {
  seen.length = 0;
  await fails(listMcpTools(guard, { ...target(), headers: { 'x-custom': `${HEADER}\r\nx-evil: 1` } }), 'invalid', /^A header given for the MCP server 'tests' is not a valid HTTP header\.$/);
  await fails(listMcpTools(guard, { ...target(), headers: { [`bad name ${HEADER}`]: 'v' } }), 'invalid', /not a valid HTTP header/);
  await fails(listMcpTools(guard, { ...target(), authorization: `${TOKEN}\n` }), 'invalid', /authorization given for the MCP server 'tests' is not a valid token/);
  assert.equal(seen.length, 0);
});

test('no message that came back holds the header value or the token', () => {
  assert.ok(messages.length >= 15, `messages checked: ${messages.length}`);
  for (const m of messages) {
    assert.ok(!m.includes(TOKEN), m);
    assert.ok(!m.includes(HEADER), m);
  }
});
