// A Responses WebSocket client for tests, driven with `ws`: messages queue up and are
// read one at a time; a close is read as a `socket.closed` pseudo-event (with its code),
// so a test waiting for an event never hangs on a socket the server closed.
import WebSocket from 'ws';
import type { TestServer } from '../../../test/helpers/test-server.ts';

const FINAL_EVENTS = ['response.completed', 'response.incomplete', 'response.failed', 'socket.closed'];

/**
 * The last event a message gets: a response's final event, the close, or a refusal (an
 * `error` event with an `error` object; the `error` event inside a failing stream has
 * none and is followed by response.failed).
 */
export const isLastEvent = (e: { type?: unknown; error?: unknown }) => FINAL_EVENTS.includes(e.type as string) || (e.type === 'error' && typeof e.error === 'object' && e.error !== null);

export async function connect(server: TestServer, key: string) {
  const ws = new WebSocket(`${server.baseURL.replace('http', 'ws')}/responses`, { headers: { authorization: `Bearer ${key}` } });
  const queue: any[] = [];
  const waiters: ((m: any) => void)[] = [];
  const deliver = (m: any) => {
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  };
  ws.on('message', (d) => deliver(JSON.parse(String(d))));
  let closed: { type: 'socket.closed'; code: number; reason: string } | null = null;
  ws.on('close', (code, reason) => deliver((closed = { type: 'socket.closed', code, reason: String(reason) })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  // Once closed, the close is all there is to read.
  const next = () => (queue.length ? Promise.resolve(queue.shift()) : closed ? Promise.resolve(closed) : new Promise<any>((r) => waiters.push(r)));
  /** Every event up to the last of one message: a final response event, an error, or the close. */
  const until = async () => {
    const events: any[] = [];
    for (;;) {
      const e = await next();
      events.push(e);
      if (isLastEvent(e)) return events;
    }
  };
  /** Every event of one response, to its last. */
  const turn = (body: Record<string, unknown>) => {
    ws.send(JSON.stringify({ type: 'response.create', ...body }));
    return until();
  };
  /** Raw bytes in one text frame (the client does not check them), then the events up to the last. */
  const sendText = (bytes: Buffer | string) => {
    ws.send(bytes, { binary: false });
    return until();
  };
  return { ws, next, turn, sendText };
}

/** A POST /v1/responses body as a response.create message: `"type"` added as its last member (so it wins over any earlier one). */
export function asCreateMessage(body: Buffer): Buffer {
  const end = body.lastIndexOf(0x7d); // }
  if (end < 0 || body.subarray(end + 1).toString('latin1').trim() !== '') return body;
  let before = end - 1;
  while (before >= 0 && [0x20, 0x09, 0x0a, 0x0d].includes(body[before]!)) before--;
  const empty = before >= 0 && body[before] === 0x7b; // {}
  return Buffer.concat([body.subarray(0, end), Buffer.from(`${empty ? '' : ','}"type":"response.create"}`)]);
}
