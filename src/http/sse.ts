// Server-sent events through Fastify's reply (so the pipeline's onResponse step still
// runs): a PassThrough stream that respects backpressure.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

export interface EventStream {
  /** Writes one `data:` event (objects are JSON-encoded). */
  send(data: unknown): Promise<void>;
  end(): void;
}

export function openEventStream(reply: FastifyReply): EventStream {
  const stream = new PassThrough();
  reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no');
  void reply.send(stream);
  return {
    async send(data) {
      if (stream.destroyed || stream.writableEnded) return;
      const ok = stream.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
      if (!ok) await Promise.race([once(stream, 'drain'), once(stream, 'close')]);
    },
    end() {
      if (!stream.writableEnded) stream.end();
    },
  };
}
