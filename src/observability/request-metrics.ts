// What every finished request leaves besides its activity row: one access line at info
// (LOG_LEVEL=warn turns it off) and the request metrics. The finish step calls it with
// the figures it writes to the activity log.
import { fromMicro } from '../accounts/money.ts';
import type { Call } from '../pipeline/call.ts';
import type { Metrics } from './metrics.ts';

/** Levels at which the access line is written. */
const ACCESS_LEVELS = new Set(['info', 'debug', 'trace']);

/**
 * Labelled by `call.routeLabel`, the route as registered (e.g.
 * /v1/chat/completions/{completion_id}): never the URL, whose ids and query would make
 * every request its own label (and may carry secrets).
 */
export function recordCall(metrics: Metrics, call: Call, status: number, latencyMs: number): void {
  const state = call;
  const route = call.routeLabel;
  metrics.request({
    route,
    method: call.method,
    status,
    seconds: latencyMs / 1000,
    model: state.model,
    inputTokens: state.usage.inputTokens,
    outputTokens: state.usage.outputTokens,
    creditsReserved: state.creditsReserved,
    creditsSettled: state.creditsSettled,
  });
  // Checked first so a disabled line costs no object; call.log already carries request_id.
  if (!ACCESS_LEVELS.has(call.log.level)) return;
  call.log.info(
    {
      method: call.method,
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
