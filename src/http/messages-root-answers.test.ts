// Answers that no route of the messages root gives (an unknown URL or method under its
// prefix, what the router and Node's HTTP parser refuse) still take that root's shape:
// the vendor's error object and a `request-id` header equal to X-Request-Id, as its
// SDKs read them (the fuzz gate found these in /v1's shape or without `request-id`).
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

let server: TestServer;
let key: string;
let port: number;

before(async () => {
  server = await startTestServer();
  key = (await server.createKey()).key;
  port = Number(new URL(server.origin).port);
});
after(() => server.close());

const TYPES: Record<number, string> = { 400: 'invalid_request_error', 404: 'not_found_error', 413: 'request_too_large', 431: 'invalid_request_error', 417: 'invalid_request_error' };

function assertVendorError(status: number, headers: Record<string, string | null>, body: unknown, want: number, what: string): void {
  assert.equal(status, want, `${what}: ${JSON.stringify(body)}`);
  const requestId = headers['x-request-id'];
  assert.match(requestId ?? '', /^req_/, `${what}: X-Request-Id`);
  assert.equal(headers['request-id'], requestId, `${what}: request-id equals X-Request-Id`);
  assert.deepEqual(body, { type: 'error', error: { type: TYPES[want], message: (body as { error: { message: string } }).error.message }, request_id: requestId }, what);
}

/** One raw HTTP exchange (one write), up to the close: status, headers, JSON body. */
function raw(head: string): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length']);
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(text.slice(split + 4, split + 4 + length)) });
    });
    socket.end(head, 'latin1');
  });
}

describe('messages root: answers outside its routes are in its shape with request-id', () => {
  for (const [what, path, init, status] of [
    ['an unknown URL', '/api/messages/v1/nope', {}, 404],
    ['a method the path does not take', '/api/messages/v1/messages', { method: 'PUT', body: '{}', headers: { 'content-type': 'application/json' } }, 404],
    ['%00 in the URL', '/api/messages/v1/openapi.json%00', {}, 400],
    ['a malformed percent-encoding', '/api/messages/v1/models/%FF', {}, 400],
  ] as const) {
    test(what, async () => {
      const res = await server.fetch(path, { key, ...init });
      assertVendorError(res.status, { 'x-request-id': res.headers.get('x-request-id'), 'request-id': res.headers.get('request-id') }, await res.json(), status, what);
    });
  }

  const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;
  for (const [what, lines, status] of [
    ['an unknown method', ['FZ /api/messages/v1/messages HTTP/1.1', 'Host: x'], 400],
    ['an unknown Transfer-Encoding', ['POST /api/messages/v1/messages HTTP/1.1', 'Host: x', 'Transfer-Encoding: gzip'], 400],
    ['a bad Content-Length', ['POST /api/messages/v1/messages HTTP/1.1', 'Host: x', 'Content-Length: abc'], 400],
    ['headers over 16 KB', ['GET /api/messages/v1/models HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(20_000)}`], 431],
    ['an Expect other than 100-continue', ['GET /api/messages/v1/models HTTP/1.1', 'Host: x', 'Expect: fz-unknown'], 417],
  ] as const) {
    test(`from the HTTP parser: ${what}`, async () => {
      const answer = await raw(head([...lines]));
      assertVendorError(answer.status, answer.headers, answer.body, status, what);
    });
  }

  test('the compatible API keeps its own shape for the same faults', async () => {
    const answer = await raw(head(['FZ /v1/models HTTP/1.1', 'Host: x']));
    assert.equal(answer.status, 400);
    assert.equal(answer.headers['request-id'], undefined);
    assert.deepEqual(Object.keys((answer.body as { error: object }).error).sort(), ['code', 'message', 'param', 'type']);
  });
});
