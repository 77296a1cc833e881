// The upstream provider's observer: every call into the metrics, and one warning per
// failed call (kind or status, the upstream's error type and code, host, model, request
// id; never the key, a header, a body or the upstream's message).
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
          upstream_type: r.failure.type,
          upstream_code: r.failure.code,
          reason: r.failure.reason,
          latency_ms: Math.round(r.seconds * 1000),
        },
        'upstream call failed',
      );
    },
  };
}
