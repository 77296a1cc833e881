// Server-sent events through Fastify's reply (so the pipeline's onResponse step still
// runs): a PassThrough stream that respects backpressure.
//
// Events produced in the same turn (e.g. the several an upstream network chunk carries)
// are written together: each write is a syscall and a TCP segment, and a stream of one
// event per token would otherwise pay that per token. Nothing waits on a timer: the
// batch is flushed as soon as the current work yields to the event loop.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

export interface EventStream {
  /** Writes one `data:` event (objects are JSON-encoded). */
  send(data: unknown): Promise<void>;
  end(): void;
}

/** Above this many pending bytes a batch is written at once, and the sender waits for the socket. */
const MAX_BATCH = 64 * 1024;

export function openEventStream(reply: FastifyReply): EventStream {
  const stream = new PassThrough();
  reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no');
  void reply.send(stream);

  let pending = '';
  let scheduled = false;
  /** Writes the batch; false when the stream wants the sender to wait. */
  const flush = (): boolean => {
    scheduled = false;
    if (pending === '' || stream.destroyed || stream.writableEnded) return true;
    const text = pending;
    pending = '';
    return stream.write(text);
  };
  /** A deferred flush found the stream full: the next send waits for it to drain. */
  let full = false;
  // nextTick runs once the promise jobs queued now (the rest of this batch) are done.
  const flushLater = () => {
    if (!flush()) full = true;
  };
  const drained = () => Promise.race([once(stream, 'drain'), once(stream, 'close')]);

  return {
    async send(data) {
      if (stream.destroyed || stream.writableEnded) return;
      if (full) {
        full = false;
        if (stream.writableNeedDrain) await drained();
        if (stream.destroyed || stream.writableEnded) return;
      }
      pending += `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
      if (pending.length < MAX_BATCH) {
        if (!scheduled) {
          scheduled = true;
          process.nextTick(flushLater);
        }
        return;
      }
      if (!flush()) await drained();
    },
    end() {
      flush();
      if (!stream.writableEnded) stream.end();
    },
  };
}
