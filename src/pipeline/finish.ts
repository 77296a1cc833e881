// Step 7: when the call is done (answered, refused, or its caller gone), wait for its
// credit settlement, release the concurrency slot, record the metrics and access line,
// and write the activity row. Runs once per call, whoever carried it.
import type { Services } from '../services.ts';
import { recordCall } from '../observability/request-metrics.ts';
import type { Call } from './call.ts';

/**
 * How long a run whose caller has gone may take to wind down (its provider sees the
 * abort and the handler settles) before the finish step settles it itself.
 */
export const SETTLE_GRACE_MS = 5_000;

/** Waits for the call's open runs to settle, settling those still open after the grace period. */
async function settled(call: Call): Promise<void> {
  if (call.runs.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, SETTLE_GRACE_MS, 'late')));
  try {
    // A run may open another as it ends (a tool loop's next step): wait until none is open.
    while (call.runs.length > 0) {
      const open = [...call.runs];
      if ((await Promise.race([Promise.allSettled(open.map((s) => s.settled)), late])) === 'late') {
        await Promise.allSettled(call.runs.map((s) => s.settle()));
        return;
      }
    }
  } catch {
    // A failed settlement is logged by the ledger; the row still gets written.
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `status`: what the caller got (499: the caller went away first, nginx's convention).
 * `latencyMs` defaults to the time since the call arrived.
 */
export async function finishCall(services: Services, call: Call, status: number, latencyMs?: number): Promise<void> {
  if (call.done) return;
  call.done = true;
  // The slot and the row wait for the runs' settlements: their work holds the slot until
  // it has stopped, and the row carries what the ledger charged.
  await settled(call);
  if (call.slot) {
    const slot = call.slot;
    call.slot = null;
    await services.limits.release(slot);
  }
  const ms = Math.round(latencyMs ?? performance.now() - call.startedAt);
  recordCall(services.metrics, call, status, ms);
  const route = call.route;
  if (route?.auth !== 'key') return;
  services.activity.add({
    created_at: Date.now(),
    account_id: call.key?.accountId ?? null,
    key_id: call.key?.id ?? null,
    method: call.method,
    endpoint: route.endpoint,
    model: call.model,
    status,
    error_code: call.errorCode,
    request_id: call.id,
    client_request_id: call.clientRequestId,
    end_user: call.user,
    safety_identifier: call.safetyIdentifier,
    input_tokens: call.usage.inputTokens,
    output_tokens: call.usage.outputTokens,
    credits_reserved: call.creditsReserved,
    credits_settled: call.creditsSettled,
    cost_usd: call.costUsd,
    latency_ms: ms,
    moderation: call.moderation === null ? null : JSON.stringify({ flagged: call.moderation }),
    // Every row has the same columns (the SQLite appender prepares its statement from the first).
    upstream_id: call.upstream?.id ?? null,
    streamed: call.upstream ? (call.upstream.streamed ? 1 : 0) : null,
    finish_reason: call.upstream?.finishReason ?? null,
  });
}
