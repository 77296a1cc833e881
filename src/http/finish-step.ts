// Step 7 as Fastify hooks: when the response is done (or the client went away),
// pipeline/finish.ts settles, releases and logs the call. Runs once per request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { finishCall } from '../pipeline/finish.ts';
import type { Services } from '../services.ts';
import { lingerOnClose, lingerUntilBodyEnds } from './linger.ts';

export function finishStep(services: Services) {
  return async function finish(request: FastifyRequest, reply?: FastifyReply): Promise<void> {
    const call = request.state;
    if (!call) return;
    // 499: the client went away before the response (nginx's convention).
    await finishCall(services, call, reply ? reply.statusCode : 499, reply ? reply.elapsedTime : undefined);
  };
}

/**
 * Watches for a client that disconnects before its response is complete (Fastify's
 * onRequestAbort only covers disconnects while the body is still arriving): aborts the
 * request's work and finishes it at once, so its slot is free again. A response that
 * went out before its body arrived lingers for the rest of it (linger.ts).
 */
export function clientGoneStep(finish: (request: FastifyRequest) => Promise<void>) {
  return async function watchClient(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!request.raw.complete) lingerOnClose(request.raw);
    reply.raw.once('close', () => {
      if (!request.raw.complete) lingerUntilBodyEnds(request.raw);
      if (reply.raw.writableFinished) return;
      request.state.abort?.abort();
      void finish(request);
    });
  };
}
