// Test support only: a fake OpenAI-compatible upstream on 127.0.0.1 (port 0) that
// records what it receives and lets each test decide how to answer (replaying a
// fixture stream, failing, stalling...).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The client's port: equal ports on two requests mean a reused (kept-alive) connection. */
  remotePort: number | undefined;
  /** Resolves when the server sees the request's connection close. */
  closed: Promise<void>;
}

export type Handler = (req: ReceivedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface FakeUpstream {
  /** e.g. http://127.0.0.1:54321/v1 */
  baseUrl: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

export async function startFakeUpstream(handler: Handler): Promise<FakeUpstream> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((raw, res) => {
    const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
    const chunks: Buffer[] = [];
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const req: ReceivedRequest = {
        method: raw.method ?? '',
        url: raw.url ?? '',
        headers: raw.headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
        remotePort: raw.socket.remotePort,
        closed,
      };
      requests.push(req);
      Promise.resolve(handler(req, res, raw)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function fixture(name: string): string {
  return readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
}

export interface ReplayOptions {
  /** 'event': one write per SSE event; a number: writes of that many bytes (splits events, lines, even UTF-8). */
  split?: 'event' | number;
  /** Rewrite line ends as \r\n. */
  crlf?: boolean;
  /** Pause between writes (default 1 ms; 0 = one event-loop turn). */
  delayMs?: number;
}

/** Writes an SSE fixture as a 200 text/event-stream response, then ends it. */
export async function replaySse(res: ServerResponse, text: string, options: ReplayOptions = {}): Promise<void> {
  const body = Buffer.from(options.crlf ? text.replace(/\n/g, '\r\n') : text, 'utf8');
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const pieces: Buffer[] = [];
  if (typeof options.split === 'number') {
    for (let i = 0; i < body.length; i += options.split) pieces.push(body.subarray(i, i + options.split));
  } else {
    const sep = Buffer.from(options.crlf ? '\r\n\r\n' : '\n\n');
    let start = 0;
    for (let at = body.indexOf(sep); at !== -1; at = body.indexOf(sep, start)) {
      pieces.push(body.subarray(start, at + sep.length));
      start = at + sep.length;
    }
    if (start < body.length) pieces.push(body.subarray(start));
  }
  for (const piece of pieces) {
    if (res.destroyed) return;
    res.write(piece);
    // A pause lets each write leave as its own TCP segment, so the client really sees split chunks.
    if (options.delayMs === 0) await new Promise((resolve) => setImmediate(resolve));
    else await delay(options.delayMs ?? 1);
  }
  res.end();
}
