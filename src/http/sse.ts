// Server-sent events, written straight to the response socket. The reply is hijacked
// from Fastify (the pipeline's finish step still runs: it owns the response's close):
// piping a stream through Fastify costs a Transform per response and a stream hop per
// event.
//
// Events produced in the same turn (e.g. the several an upstream network chunk carries)
// are written together: each write is a syscall and a TCP segment, and a stream of one
// event per token would otherwise pay that per token. Nothing waits on a timer: the
// batch is flushed as soon as the current work yields to the event loop.
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

export interface EventStream {
  /**
   * Queues one `data:` event (objects are JSON-encoded), with an `event:` line when
   * named (the Responses surface names each event by its type) and an `id:` line when
   * given (a stream a client may resume with Last-Event-ID); waits only when the client
   * is not keeping up. Refuses (rejects) an `event` or `id` holding CR or LF: a line
   * break there would add fields, or whole events, of its own to the stream.
   */
  send(data: unknown, event?: string, id?: string): Promise<void>;
  /** Writes what is queued and ends the response, in one write. Idempotent. */
  end(): void;
}

/** Above this many pending characters a batch is written at once, and the sender waits for the socket. */
const MAX_BATCH = 64 * 1024;
const LINE_BREAK = /[\r\n]/;

/** A comment line after this long without an event, so proxies and clients keep a slow stream open. */
export const KEEP_ALIVE_MS = 15_000;

/**
 * Resolves when the response can take more (drain) or has closed, removing both its
 * listeners: a long answer to a slow client waits here once per buffer's worth, and
 * leaving one listener behind per wait would pile them up on the response.
 */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

/** `keepAlive`: what an idle stream is sent (default a comment line; the messages surface sends its `ping` event). */
export function openEventStream(reply: FastifyReply, opts: { keepAliveMs?: number; keepAlive?: string } = {}): EventStream {
  const res = reply.raw;
  reply.hijack();
  reply.server.metrics.streamOpened(res);
  // The pipeline's headers (request id, rate limits, ignored parameters) were set on the reply.
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string | string[]>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });

  let pending = '';
  let scheduled = false;
  /** A deferred flush found the socket full: the next send waits for it to drain. */
  let full = false;
  const closed = () => res.destroyed || res.writableEnded;
  /** Writes the batch; false when the socket wants the sender to wait. */
  const flush = (): boolean => {
    scheduled = false;
    if (pending === '' || closed()) return true;
    const text = pending;
    pending = '';
    return res.write(text);
  };
  // nextTick runs once the promise jobs queued now (the rest of this batch) are done.
  const flushLater = () => {
    if (!flush()) full = true;
  };
  let wrote = false;
  const keepAlive = setInterval(() => {
    if (!wrote && pending === '' && !closed()) res.write(opts.keepAlive ?? ': keep-alive\n\n');
    wrote = false;
  }, opts.keepAliveMs ?? KEEP_ALIVE_MS).unref();
  res.once('close', () => clearInterval(keepAlive));

  return {
    async send(data, event, id) {
      if ((event !== undefined && LINE_BREAK.test(event)) || (id !== undefined && LINE_BREAK.test(id))) {
        throw new Error(`An SSE ${event !== undefined && LINE_BREAK.test(event) ? 'event name' : 'id'} may not hold a line break.`);
      }
      if (closed()) return;
      wrote = true;
      if (full) {
        full = false;
        if (res.writableNeedDrain) await drained(res);
        if (closed()) return;
      }
      pending += `${event === undefined ? '' : `event: ${event}\n`}${id === undefined ? '' : `id: ${id}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
      if (pending.length < MAX_BATCH) {
        if (!scheduled) {
          scheduled = true;
          process.nextTick(flushLater);
        }
        return;
      }
      if (!flush()) await drained(res);
    },
    end() {
      clearInterval(keepAlive);
      if (closed()) return;
      const text = pending;
      pending = '';
      res.end(text);
    },
  };
}
