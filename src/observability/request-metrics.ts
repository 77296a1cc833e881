// What every finished request leaves besides its activity row: one access line at info
// (LOG_LEVEL=warn turns it off) and the request metrics. The finish step calls it with
// the figures it writes to the activity log.
import type { FastifyRequest } from 'fastify';
import { fromMicro } from '../accounts/money.ts';
import type { Metrics } from './metrics.ts';

/** Levels at which the access line is written. */
const ACCESS_LEVELS = new Set(['info', 'debug', 'trace']);

/**
 * The route as registered, e.g. /v1/chat/completions/{completion_id}: never the URL,
 * whose ids and query would make every request its own label (and may carry secrets).
 */
export function routeOf(request: FastifyRequest): string {
  return request.routeOptions.config.agent?.endpoint ?? request.routeOptions.url ?? 'unmatched';
}

export function recordRequest(metrics: Metrics, request: FastifyRequest, status: number, latencyMs: number): void {
  const state = request.state;
  const route = routeOf(request);
  metrics.request({
    route,
    method: request.method,
    status,
    seconds: latencyMs / 1000,
    model: state.model,
    inputTokens: state.usage.inputTokens,
    outputTokens: state.usage.outputTokens,
    creditsReserved: state.creditsReserved,
    creditsSettled: state.creditsSettled,
  });
  // Checked first so a disabled line costs no object; request.log already carries request_id.
  if (!ACCESS_LEVELS.has(request.log.level)) return;
  request.log.info(
    {
      method: request.method,
      route,
      status,
      latency_ms: latencyMs,
      key_id: state.key?.id,
      // Credits charged, for requests that reserved any (0: a call that ran nothing).
      credits: state.creditsReserved > 0 ? fromMicro(state.creditsSettled) : undefined,
      error_code: state.errorCode ?? undefined,
    },
    'request',
  );
}
