// The Fastify instance and the one request pipeline of DESIGN.md, as hooks that every
// route on every root shares: request id → route → authenticate → limits → (body
// parsed) → contract → handler → finish (activity log).
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import { newId } from '../ids.ts';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import { authenticateStep } from './authenticate.ts';
import { contractStep } from './contract-step.ts';
import { clientErrorHandler, answerExpectationFailed, frameworkErrors } from './client-errors.ts';
import { errorHandler, notFoundHandler } from './error-handler.ts';
import { finishStep } from './finish-step.ts';
import { installJsonBodyParser } from './json-body.ts';
import { JsonParsePool } from '../pipeline/json/parse-pool.ts';
import { limitsStep } from './limits-step.ts';
import { installMultipartBodyParser } from './multipart-body.ts';
import { requestIdStep } from './request-id.ts';
import type { Call } from '../pipeline/call.ts';
import type { Root } from '../contract/roots.ts';
import './request-state.ts';

/** The longest a log line waits in the buffer before it is written. */
export const LOG_FLUSH_MS = 100;

/**
 * Stdout (or `dest`) for log lines, written asynchronously in batches: the lines gather
 * until 4 KB or LOG_FLUSH_MS. A write per line (one access line per request) costs a
 * thread-pool round trip each, whose wake-ups cost the event loop far more than the
 * line itself on a small machine. sonic-boom flushes what is pending on shutdown and
 * at process exit.
 */
export function logDestination(dest: number | string = 1) {
  return pino.destination({ dest, sync: false, minLength: 4096, periodicFlush: LOG_FLUSH_MS });
}

/** `logStream`: where log lines go instead of stdout (tests read them). */
export function createHttpServer(config: Config, logStream?: DestinationStream): FastifyInstance {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      stream: logStream ?? logDestination(),
      // Never log secrets or bodies: the finish step writes the one access line, and it
      // names the key by id. Redaction guards against a header slipping into a log call.
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]'],
    },
    // One access line per request (finish step) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: () => newId('req_'),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Ids longer than this are no id of ours: 414 in our error shape (frameworkErrors).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // The whole request must arrive within this (Node's default; Fastify's is none).
    requestTimeout: 300_000,
    // Node would answer a request without Host with a bare 400; request-id.ts answers it in our shape.
    http: { requireHostHeader: false },
    clientErrorHandler,
    frameworkErrors,
  });
  app.decorate('roots', [] as Root[]);
  app.server.on('checkExpectation', (request, res) => answerExpectationFailed(request, res, app.roots));
  return app;
}

export function installPipeline(app: FastifyInstance, services: Services): void {
  app.decorateRequest('state', null as unknown as Call);
  // One pool for every large JSON text, HTTP bodies and WebSocket messages alike.
  const jsonParsePool = new JsonParsePool();
  installJsonBodyParser(app, jsonParsePool);
  app.decorate('jsonParsePool', jsonParsePool);
  installMultipartBodyParser(app, services.blobs);
  app.decorate('metrics', services.metrics);
  // First, so every request is finished (and lingers for an unread body) whatever a later step answers.
  app.addHook('onRequest', finishStep(services));
  app.addHook('onRequest', requestIdStep);
  app.addHook('onRequest', authenticateStep(services));
  // Limits before the body is read: a request refused for them costs no parsing.
  app.addHook('preParsing', limitsStep(services));
  app.addHook('preValidation', contractStep);
  app.setErrorHandler(errorHandler(services.config.bodyLimitBytes));
  app.setNotFoundHandler(notFoundHandler);
}
