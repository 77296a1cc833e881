// The upstream provider's observer: every call into the metrics, and one warning per
// failed call (kind or status, host, model, request id; never the key, a header or a body).
import type { FastifyBaseLogger } from 'fastify';
import type { UpstreamCallReport, UpstreamObserver } from '../providers/upstream-observer.ts';
import type { Metrics } from './metrics.ts';

export function upstreamCallRecorder(metrics: Metrics, log: FastifyBaseLogger): UpstreamObserver {
  return {
    callEnded(r: UpstreamCallReport) {
      metrics.upstreamCall(r);
      if (r.outcome !== 'error' || !r.failure) return;
      log.warn(
        {
          request_id: r.requestId,
          upstream: r.host,
          model: r.model,
          operation: r.operation,
          kind: r.failure.kind,
          status: r.failure.status,
          reason: r.failure.reason,
          latency_ms: Math.round(r.seconds * 1000),
        },
        'upstream call failed',
      );
    },
  };
}
