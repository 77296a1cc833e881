// Answers for requests that never reach the pipeline, in the same error shape and
// with a request id: what Node's HTTP parser refuses (bad header bytes, a bad
// Content-Length or Transfer-Encoding, headers over the size limit), and what the
// router refuses (an undecodable path, a path parameter over the length limit).
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { newId } from '../ids.ts';
import { rootOf, type Root } from '../contract/roots.ts';
import { type ApiError, expectationFailed, headersTooLarge, invalidRequest, requestTimeout, uriTooLong } from '../errors.ts';
import { requestIdHeaders, rootFor, sendError } from './error-handler.ts';

/** The parser's refusal, as our error: 431 for oversized headers, 408 for a request that took too long, else 400. */
export function parserError(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return headersTooLarge('The request line and headers are larger than the server accepts (16 KB).');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return requestTimeout('The request was not received in time.');
    case 'HPE_INVALID_HEADER_TOKEN':
      return invalidRequest('A request header has an invalid name or value (control characters are not allowed).');
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return invalidRequest('The Content-Length header is invalid.');
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
      return invalidRequest('The Transfer-Encoding header or the chunked body is invalid.');
    default:
      return invalidRequest('The HTTP request is malformed.');
  }
}

/**
 * The target of the request line the refused bytes start with (Node hands over the
 * chunk it was parsing: a small request's all of it), or null.
 */
export function requestLineTarget(raw: unknown): string | null {
  if (!Buffer.isBuffer(raw)) return null;
  const line = raw.subarray(0, 16_384).toString('latin1').split('\r\n', 1)[0]!;
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (\/\S*) HTTP\/1\.[01]$/.exec(line)?.[1] ?? null;
}

/**
 * Node's 'clientError': write the answer on the raw socket, where it still takes one,
 * then close. In the shape of the root the request line names, when the refused bytes
 * hold it; else (not read, or in an earlier chunk) no root is known: the compatible API's.
 * `this` is the Fastify instance (its roots).
 */
export function clientErrorHandler(this: { roots?: readonly Root[] }, err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already under way on this socket cannot be followed by another.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const error = parserError(err.code);
    const target = requestLineTarget(err.rawPacket);
    const root = rootOf(target ?? '/', target ? (this?.roots ?? []) : []);
    const requestId = newId('req_');
    const body = JSON.stringify(root.errors.body(error, requestId));
    const status = root.errors.status(error);
    const ids = Object.entries(requestIdHeaders(root, requestId)).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `${ids}Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroySoon();
}

/**
 * Node's 'checkExpectation' (an `Expect` header other than 100-continue): without a
 * listener Node answers a bare 417; this answers it in our shape.
 */
export function answerExpectationFailed(request: IncomingMessage, res: ServerResponse, roots: readonly Root[]): void {
  const error = expectationFailed('The Expect header can only be 100-continue.');
  const root = rootOf(request.url ?? '/', roots);
  const requestId = newId('req_');
  const body = JSON.stringify(root.errors.body(error, requestId));
  res.writeHead(root.errors.status(error), { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...requestIdHeaders(root, requestId), connection: 'close' });
  res.end(body);
}

/** Fastify's frameworkErrors: the router's refusals, before any hook has run. */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const error =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? uriTooLong('A path parameter of this URL is longer than the server accepts.')
      : err.code === 'FST_ERR_BAD_URL'
        ? invalidRequest('The URL path is not valid (it has a malformed percent-encoding).')
        : invalidRequest('The request could not be routed.');
  void sendError(request, reply.headers(requestIdHeaders(rootFor(request), request.id)), error);
}
