// The body cases of POST /v1/responses sent again as `response.create` messages over the
// Responses WebSocket (issue 18), on sockets that stay open from case to case. Each
// message must get what the POST got: the same refusal (status, code, param) as an error
// event in the reference's shape with a request id (error.headers), or a response run to
// its last event; never a server_error; and the socket must still answer afterwards (a
// probe message, refused for its type). Only a message over twice the body limit may
// close it: with its error event first, then 1009.
import WebSocket from 'ws';
import { asCreateMessage, isLastEvent } from '../../src/api/responses/websocket.test-support.ts';
import { CATEGORIES, type Case, type Category } from './case.ts';
import type { Outcome, ViolationKind } from './checks.ts';
import type { RawRequest } from './raw-http.ts';

/** The categories about the HTTP request around the body (framing, headers, path, auth), which a WebSocket message has none of. */
const HTTP_ONLY = new Set<Category>(['proto-query', 'query-hostile', 'content-type', 'broken-multipart', 'multipart-fields', 'proto-form', 'bad-headers', 'bad-path', 'other-account', 'limited-key', 'bad-auth', 'wrong-method']);
/** The categories that are about the body alone. */
const BODY_CATEGORIES = new Set<Category>(CATEGORIES.filter((c) => !HTTP_ONLY.has(c)));

/** Bigger than this (× the body limit) the server does not read a message: error event, then close 1009. */
export const WS_READ_LIMIT_FACTOR = 2;

/** The message to send for a case, or null when the case is not a POST /v1/responses body case. */
export function wsMessage(c: Case, req: RawRequest): Buffer | null {
  if (c.op.id !== 'createResponse' || !BODY_CATEGORIES.has(c.category) || req.method !== 'POST' || !req.body) return null;
  // A lie about the framing (Content-Length, chunked) is HTTP's, not the body's.
  if (req.headers.some(([n]) => ['content-length', 'transfer-encoding'].includes(n.toLowerCase()))) return null;
  return asCreateMessage(req.body);
}

/** The case as a WebSocket message, for the report (its reproduction shows the message). */
export function wsCase(c: Case, message: Buffer): Case {
  return { ...c, op: { ...c.op, id: `${c.op.id} over the WebSocket` }, build: () => ({ method: 'WS', target: '/v1/responses', headers: [], body: message }) };
}

type Event = Record<string, any>;

export type WsResult =
  | { kind: 'answer'; events: Event[]; ms: number }
  | { kind: 'closed'; events: Event[]; code: number; ms: number }
  | { kind: 'timeout'; events: Event[]; ms: number }
  | { kind: 'no-socket'; error: string; ms: number };

/** One open socket; its messages queue up and are read in order. */
class Lane {
  private readonly queue: Event[] = [];
  private waiter: (() => void) | null = null;
  closed: { code: number } | null = null;

  private constructor(
    readonly port: number,
    private readonly ws: WebSocket,
  ) {
    ws.on('message', (d) => {
      let e: Event;
      try {
        e = JSON.parse(String(d)) as Event;
      } catch {
        e = { type: 'fz.not-json', text: String(d).slice(0, 200) };
      }
      this.queue.push(e);
      this.wake();
    });
    ws.on('close', (code) => {
      this.closed = { code };
      this.wake();
    });
    ws.on('error', () => undefined);
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  static open(port: number, secret: string, timeoutMs: number): Promise<Lane | string> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/responses`, { headers: { authorization: `Bearer ${secret}` }, handshakeTimeout: timeoutMs });
      ws.once('open', () => resolve(new Lane(port, ws)));
      ws.once('unexpected-response', (_req, res) => {
        resolve(`the upgrade was refused: ${res.statusCode}`);
        res.resume();
        ws.terminate();
      });
      ws.once('error', (err) => resolve(`no socket: ${err.message}`));
    });
  }

  get usable(): boolean {
    return !this.closed && this.ws.readyState === WebSocket.OPEN;
  }

  /** The next event, or the close, or null at the deadline. */
  private async next(deadline: number): Promise<Event | 'closed' | null> {
    for (;;) {
      if (this.queue.length) return this.queue.shift()!;
      if (this.closed) return 'closed';
      const left = deadline - performance.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  /** Sends one message in a text frame and reads its events to the last. */
  async exchange(message: Buffer | string, timeoutMs: number): Promise<WsResult> {
    const start = performance.now();
    const deadline = start + timeoutMs;
    const events: Event[] = [];
    this.ws.send(message, { binary: false });
    for (;;) {
      const e = await this.next(deadline);
      const ms = performance.now() - start;
      if (e === null) return { kind: 'timeout', events, ms };
      if (e === 'closed') return { kind: 'closed', events, code: this.closed!.code, ms };
      events.push(e);
      if (isLastEvent(e)) return { kind: 'answer', events, ms };
    }
  }

  /** After an answer the server closes: the close code, or null when it stays open past the deadline. */
  async closeCode(timeoutMs: number): Promise<number | null> {
    const e = await this.next(performance.now() + timeoutMs);
    return e === 'closed' ? this.closed!.code : null;
  }

  terminate(): void {
    this.ws.terminate();
  }
}

/** Sockets kept open between cases (one per worker at most), opened again after a restart. */
export class Lanes {
  private readonly idle: Lane[] = [];

  constructor(private readonly secret: string) {}

  async acquire(port: number, timeoutMs: number): Promise<Lane | string> {
    for (let lane = this.idle.pop(); lane; lane = this.idle.pop()) {
      if (lane.port === port && lane.usable) return lane;
      lane.terminate();
    }
    return Lane.open(port, this.secret, timeoutMs);
  }

  release(lane: Lane): void {
    if (lane.usable) this.idle.push(lane);
    else lane.terminate();
  }

  closeAll(): void {
    for (const lane of this.idle.splice(0)) lane.terminate();
  }
}

/** A message the server refuses for its type, cheaply: proof that the socket still reads messages. */
const PROBE = '{"type":"fz.probe"}';

export interface WsRun {
  result: WsResult;
  /** after the answer: the probe's refusal came back (null: not asked, the socket was to close) */
  usableAfter: boolean | null;
  /** for a message over the read limit: the code the socket closed with after the error event */
  closeCode: number | null;
}

/** Sends the message on a lane, then the probe (or, for a message too large to read, waits for the close). */
export async function runOnLane(lanes: Lanes, port: number, message: Buffer, readLimit: number, timeoutMs: number): Promise<WsRun> {
  const lane = await lanes.acquire(port, timeoutMs);
  if (typeof lane === 'string') return { result: { kind: 'no-socket', error: lane, ms: 0 }, usableAfter: null, closeCode: null };
  try {
    const result = await lane.exchange(message, timeoutMs);
    if (result.kind !== 'answer') return { result, usableAfter: null, closeCode: null };
    if (message.length > readLimit) return { result, usableAfter: null, closeCode: await lane.closeCode(Math.min(timeoutMs, 5_000)) };
    const probe = await lane.exchange(PROBE, timeoutMs);
    const refusal = probe.kind === 'answer' ? probe.events.at(-1) : undefined;
    return { result, usableAfter: refusal?.type === 'error' && refusal.error?.param === 'type', closeCode: null };
  } finally {
    lanes.release(lane);
  }
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Does the message parse as a JSON object at all (else the socket's refusal names no field, whatever the POST named)? */
function isJsonObject(message: Buffer): boolean {
  try {
    return isObject(JSON.parse(message.toString('utf8')));
  } catch {
    return true; // not JSON: the POST's refusal is the parser's too
  }
}

/**
 * The message's outcome against the POST's (`post`, already judged on its own). `limit`:
 * the body limit; `sentBody`: the POST's body (the message is a few bytes longer).
 */
export function judgeWs(run: WsRun, post: Outcome, message: Buffer, sentBody: Buffer, limit: number): Outcome {
  const out: Outcome = { label: '', status: null, requestId: null, param: undefined, code: undefined, shape: 'reference', preview: '', parserClose: false, violations: [], ids: [] };
  const v = (kind: ViolationKind, detail: string) => out.violations.push({ kind, detail });
  const { result } = run;
  if (result.kind === 'no-socket') {
    out.label = 'ws: no socket';
    v('no-answer', result.error);
    return out;
  }
  const shown = result.events.map((e) => JSON.stringify(e).slice(0, 300)).slice(-2).join(' ');
  out.preview = `${result.kind === 'closed' ? `closed ${result.code} after ` : ''}${shown}`;
  if (result.kind === 'timeout') {
    out.label = 'ws: timeout';
    v('timeout', `no last event within ${Math.round(result.ms)} ms (${result.events.length} events)`);
    return out;
  }
  if (result.kind === 'closed') {
    out.label = `ws: closed ${result.code}`;
    v('no-answer', `the socket closed (${result.code}) before the message's last event`);
    return out;
  }
  const last = result.events.at(-1)!;
  const refused = last.type === 'error';
  if (refused) {
    out.status = typeof last.status === 'number' ? last.status : null;
    out.label = `ws: error ${out.status ?? '?'}`;
    const e = last.error as Record<string, unknown>;
    const shapeWrong =
      out.status === null ? 'status is not a number' : typeof e.message !== 'string' ? 'error.message is not a string' : typeof e.type !== 'string' ? 'error.type is not a string' : typeof e.code !== 'string' ? 'error.code is not a string' : !(typeof e.param === 'string' || e.param === null) ? 'error.param is not a string or null' : null;
    if (shapeWrong) v('shape', shapeWrong);
    out.param = e.param as string | null;
    out.code = e.code as string;
    const rid = isObject(e.headers) ? e.headers['x-request-id'] : undefined;
    if (typeof rid === 'string' && rid.startsWith('req_')) out.requestId = rid;
    else v('no-request-id', 'no error.headers x-request-id');
    if ((out.status ?? 0) >= 500 || e.code === 'server_error') v('5xx', `error event ${out.status} ${String(e.code)}`);
  } else {
    out.status = 200;
    out.label = `ws: ${String(last.type)}`;
    const id = last.response?.id;
    if (typeof id === 'string') out.ids.push(id);
  }

  // What the POST got, the message must get. Where the socket differs by design: it drops
  // `stream`, refuses `background`, reads a message a few bytes longer than the body, and
  // answers JSON that is not an object before any field is looked at.
  const overLimit = message.length > limit;
  if (overLimit && sentBody.length <= limit) {
    if (!refused || out.status !== 400 || out.param !== null) v('status', `a message over the limit (${message.length} bytes) must be refused with 400 and no param`);
  } else if (refused && out.param === 'background') {
    // background: true is the POST's to run; the socket refuses it (documented).
  } else if (post.status !== null && post.status >= 400 && post.status < 500 && post.param !== 'stream') {
    if (!refused) v('accepted', `the POST was refused (${post.status} ${post.code}, param ${JSON.stringify(post.param)}); the message ran to ${String(last.type)}`);
    else {
      if (out.status !== post.status) v('status', `the POST got ${post.status}, the message ${out.status}`);
      else if (out.code !== post.code) v('code', `the POST got code ${post.code}, the message ${out.code}`);
      if (out.param !== post.param && isJsonObject(message)) v('param', `the POST named ${JSON.stringify(post.param)}, the message ${JSON.stringify(out.param)}`);
    }
  } else if (post.status !== null && post.status < 300 && refused) {
    v('status', `the POST was accepted (${post.status}); the message was refused: ${out.status} ${out.code} ${JSON.stringify(out.param)}`);
  }

  if (overLimit && message.length > limit * WS_READ_LIMIT_FACTOR) {
    if (run.closeCode !== 1009) v('no-answer', `a message over ${WS_READ_LIMIT_FACTOR}× the limit: after its error event the socket must close with 1009 (got ${run.closeCode ?? 'no close'})`);
  } else if (run.usableAfter === false) v('unusable', 'the socket did not answer a message after this one');
  return out;
}
