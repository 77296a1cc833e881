// Step 7 as the one owner of finishing an HTTP request: the raw response's 'close'.
// Node emits it once for every response, however it ends: after the last byte was
// handed to the socket, when the client goes away before, during or after the answer,
// and for a reply hijacked from Fastify (SSE, WebSocket upgrades) as for any other.
// Fastify's onResponse is no owner: it runs on the response's 'finish' (reply.js
// setupResponseListeners), which Node skips when the socket closes between the last
// write and its callback (the bytes were handed over, so `writableFinished` is already
// true at the close); onRequestAbort only covers a body still arriving. pipeline/finish.ts settles, releases and logs the call; `call.done` makes
// it run once.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { abortCall } from '../pipeline/call.ts';
import { finishCall } from '../pipeline/finish.ts';
import type { Services } from '../services.ts';
import { lingerOnClose, lingerUntilBodyEnds } from './linger.ts';

/**
 * The first onRequest hook: finishes the request when its response closes. A response
 * we did not end (the client went away first) aborts the call's work and is logged as
 * 499 (nginx's convention). A response that went out before its body arrived lingers
 * for the rest of it (linger.ts).
 */
export function finishStep(services: Services) {
  return function watchResponse(request: FastifyRequest, reply: FastifyReply, next: HookHandlerDoneFunction): void {
    const req = request.raw;
    const res = reply.raw;
    if (!req.complete) lingerOnClose(req);
    const socket = req.socket;
    // A response queued behind another on a pipelined connection has no socket yet, and
    // Node never closes it should the socket die first (it only destroys the request).
    const queued = !res.socket && !!socket;
    const closed = () => {
      if (queued) socket.removeListener('close', closed);
      if (!req.complete) lingerUntilBodyEnds(req);
      const call = request.state;
      if (!call || call.done) return;
      const ended = res.writableEnded;
      if (!ended) abortCall(call);
      finishCall(services, call, ended ? res.statusCode : 499).catch((err: unknown) =>
        request.log.error({ err }, 'finishing a request failed'),
      );
    };
    res.once('close', closed);
    if (queued) socket.once('close', closed);
    next();
  };
}
