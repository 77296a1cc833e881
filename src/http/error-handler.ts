// One place renders every failure, in the error shape of the root the request is under
// (contract/roots.ts; the compatible API's: {error: {message, type, param, code}}). Framework
// errors caused by the request (bad JSON, wrong content type, body too large) are
// 400s; anything unexpected is a logged 500 that reveals nothing internal.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { rootOf, type Root } from '../contract/roots.ts';
import { ApiError, bodyTooLarge, invalidRequest, notFound, serverError } from '../errors.ts';

/** The root whose error shape a request's answer takes: its route's, else the one its URL is under. */
export function rootFor(request: FastifyRequest): Root {
  return request.state?.route?.root ?? request.routeOptions.config?.agent?.root ?? rootOf(request.url, request.server.roots);
}

/** The request id headers of an answer under `root`: X-Request-Id, and the root's own name for it (the messages root's `request-id`). */
export function requestIdHeaders(root: Root, id: string): Record<string, string> {
  return root.requestIdHeader ? { 'x-request-id': id, [root.requestIdHeader]: id } : { 'x-request-id': id };
}

/** An error answer in the shape of the request's root. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError) {
  const { errors } = rootFor(request);
  return reply.code(errors.status(error)).send(errors.body(error, request.state?.id ?? String(request.id)));
}

function toApiError(err: FastifyError, bodyLimit: number, request: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge(`The request body is larger than the limit of ${bodyLimit} bytes.`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalidRequest(`Unsupported Content-Type: send the body as ${request.state?.route?.contract?.body?.type === 'multipart' ? 'multipart/form-data' : 'application/json'}.`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidRequest("The body is empty but Content-Type is 'application/json'.");
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidRequest(`We could not parse the JSON body of your request: ${err.message}`);
  }
  if (err instanceof SyntaxError || (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500)) {
    return invalidRequest(err instanceof SyntaxError ? `We could not parse the JSON body of your request: ${err.message}` : err.message);
  }
  return serverError();
}

export function errorHandler(bodyLimit: number) {
  return function handleError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const apiError = toApiError(err, bodyLimit, request);
    if (apiError.status >= 500 && !(err instanceof ApiError)) request.log.error({ err }, 'unhandled error');
    if (request.state) request.state.errorCode = apiError.code;
    if (apiError.headers) reply.headers(apiError.headers);
    // Fastify closes the connection after a body it could not read; the unread rest is
    // discarded instead (linger.ts), so the client can finish sending and read this answer.
    if (apiError.status < 500 && reply.getHeader('connection') === 'close') reply.removeHeader('connection');
    return sendError(request, reply, apiError);
  };
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0];
  return sendError(request, reply, notFound(`Unknown request URL: ${request.method} ${path}.`));
}
