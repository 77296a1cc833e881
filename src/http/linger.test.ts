// The lingering close: a client still uploading after the answer is cut off once the
// linger period ends; one that finishes keeps its connection.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { lingerUntilBodyEnds } from './linger.ts';

async function serve(lingerMs: number) {
  const server = http.createServer((req, res) => {
    res.on('close', () => lingerUntilBodyEnds(req, lingerMs));
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end('refused');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port };
}

test('an upload that never ends is cut off after the linger period, after its answer', async () => {
  const { server, port } = await serve(50);
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d));
  socket.on('error', () => undefined);
  socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n' + 'a'.repeat(1000));
  // Keep trickling so only the linger timer can end it.
  const trickle = setInterval(() => socket.writable && socket.write('a'), 10);
  // Not events.once: it rejects on the 'error' (a reset) that may come before 'close'.
  await new Promise((resolve) => socket.once('close', resolve));
  clearInterval(trickle);
  assert.match(text, /^HTTP\/1.1 400/);
  server.close();
});

test('an upload that completes keeps the connection for the next request', async () => {
  const { server, port } = await serve(60_000);
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d));
  socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello');
  socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('close', resolve));
  assert.equal(text.match(/HTTP\/1.1 400/g)?.length, 2, 'both requests answered on one connection');
  server.close();
});
