// Step 1: every response carries X-Request-Id; a caller's X-Client-Request-Id must be
// printable ASCII up to 512 characters (SPEC "Limits"). Creates the request's Call, the
// transport-neutral context every later step works on (pipeline/call.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalidRequest } from '../errors.ts';
import { requestIdHeaders, rootFor } from './error-handler.ts';
import { newCall } from '../pipeline/call.ts';

const CLIENT_REQUEST_ID = /^[\x20-\x7e]{1,512}$/;

export async function requestIdStep(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // Fastify builds routeOptions anew on every read: once.
  const options = request.routeOptions;
  const route = options.config.agent ?? null;
  const call = (request.state = newCall({
    id: request.id,
    method: request.method,
    route,
    routeLabel: route?.endpoint ?? options.url ?? 'unmatched',
    ip: request.ip,
    log: request.log,
  }));
  // By the root the URL is under when no route matched (an unknown URL is still answered in that root's shape).
  reply.headers(requestIdHeaders(rootFor(request), request.id));
  // A NUL is in no id, name or cursor of ours, and PostgreSQL cannot even compare one.
  if (request.url.includes('%00')) throw invalidRequest('The URL holds a NUL character (%00).');
  // HTTP/1.1 requires Host (RFC 9112 §3.2); Node's own refusal would not carry our shape.
  if (request.headers.host === undefined && request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1) {
    throw invalidRequest('The Host header is required.');
  }
  const clientId = request.headers['x-client-request-id'];
  if (clientId === undefined) return;
  if (typeof clientId !== 'string' || !CLIENT_REQUEST_ID.test(clientId)) {
    throw invalidRequest('X-Client-Request-Id must be printable ASCII of 1 to 512 characters.');
  }
  call.clientRequestId = clientId;
}
