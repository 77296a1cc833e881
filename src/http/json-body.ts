// The HTTP adapter of the one JSON parser (pipeline/json/text.ts): Fastify's
// application/json parser, a large body going to the worker pool; on a root whose
// bodies are raw (contract/roots.ts) a JSON or text body is left as its bytes.
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { clientGone, JsonParsePool } from '../pipeline/json/parse-pool.ts';
import { LARGE_JSON_BYTES, parseJsonBody } from '../pipeline/json/text.ts';

/** Whether a request's body may be large: declared over LARGE_JSON_BYTES, or of no declared length. */
export function mayBeLarge(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  if (length === undefined) return headers['transfer-encoding'] !== undefined;
  return !(Number(length) <= LARGE_JSON_BYTES);
}

/** A route on a root whose bodies are passed through unparsed (a gateway forwards them byte for byte). */
const rawBodies = (request: FastifyRequest) => request.state?.route?.root?.bodies === 'raw';

export function installJsonBodyParser(app: FastifyInstance, pool = new JsonParsePool()): void {
  app.addHook('onClose', () => pool.close());
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request: FastifyRequest, body: Buffer, done) => {
    if (rawBodies(request)) return done(null, body);
    if (body.length > LARGE_JSON_BYTES) {
      const gone = () => request.raw.socket?.destroyed ?? true;
      pool.parse(body, request.state?.route?.contract, gone).then(
        // A client gone while its body was parsed gets no handler run for it.
        (value) => (gone() ? done(clientGone(), undefined) : done(null, value)),
        (err: Error) => done(err, undefined),
      );
      return;
    }
    try {
      done(null, parseJsonBody(body));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // Fastify's own reads text as UTF-8, which replaces bytes that are not: a raw root forwards them as they came.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (request: FastifyRequest, body: Buffer, done) => done(null, rawBodies(request) ? body : body.toString('utf8')));
}

