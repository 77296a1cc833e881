// Step 7: when the response is done (or the client went away), release the
// concurrency slot and write the activity row. Runs exactly once per request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { recordRequest } from '../observability/request-metrics.ts';
import type { Services } from '../services.ts';
import { lingerOnClose, lingerUntilBodyEnds } from './linger.ts';
import { clientRequestId } from './request-id.ts';
import type { RequestState } from './request-state.ts';

/**
 * How long a call whose client has gone may take to wind down (its provider sees the
 * abort and the handler settles) before the finish step settles it itself.
 */
export const SETTLE_GRACE_MS = 5_000;

/** Waits for the request's model call to settle, settling it after the grace period. */
async function settled(state: RequestState): Promise<void> {
  const s = state.settlement;
  if (!s) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, SETTLE_GRACE_MS, 'late')));
  try {
    if ((await Promise.race([s.settled, late])) === 'late') await s.settle();
  } catch {
    // A failed settlement is logged by the ledger; the row still gets written.
  } finally {
    clearTimeout(timer);
  }
}

export function finishStep(services: Services) {
  return async function finish(request: FastifyRequest, reply?: FastifyReply): Promise<void> {
    const state = request.state;
    if (!state || state.done) return;
    state.done = true;
    // The slot and the row wait for the call's settlement: its work holds the slot until
    // it has stopped, and the row carries what the ledger charged.
    await settled(state);
    if (state.slotHeld && state.key) {
      state.slotHeld = false;
      await services.limits.releaseSlot(state.key.accountId);
    }
    const route = request.routeOptions.config.agent;
    const status = reply ? reply.statusCode : 499;
    const latencyMs = Math.round(reply ? reply.elapsedTime : performance.now() - state.startedAt);
    // The access line and the metrics, from the figures the activity row gets.
    recordRequest(services.metrics, request, status, latencyMs);
    if (route?.auth !== 'key') return;
    services.activity.add({
      created_at: Date.now(),
      account_id: state.key?.accountId ?? null,
      key_id: state.key?.id ?? null,
      method: request.method,
      endpoint: route.endpoint,
      model: state.model,
      // 499: the client went away before the response (nginx's convention).
      status,
      error_code: state.errorCode,
      request_id: request.id,
      client_request_id: clientRequestId(request),
      end_user: state.user,
      safety_identifier: state.safetyIdentifier,
      input_tokens: state.usage.inputTokens,
      output_tokens: state.usage.outputTokens,
      credits_reserved: state.creditsReserved,
      credits_settled: state.creditsSettled,
      cost_usd: state.costUsd,
      latency_ms: latencyMs,
    });
  };
}

/**
 * Watches for a client that disconnects before its response is complete (Fastify's
 * onRequestAbort only covers disconnects while the body is still arriving): aborts the
 * request's work and finishes it at once, so its slot is free again. A response that
 * went out before its body arrived lingers for the rest of it (linger.ts).
 */
export function clientGoneStep(finish: (request: FastifyRequest) => Promise<void>) {
  return async function watchClient(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!request.raw.complete) lingerOnClose(request.raw);
    reply.raw.once('close', () => {
      if (!request.raw.complete) lingerUntilBodyEnds(request.raw);
      if (reply.raw.writableFinished) return;
      request.state.abort?.abort();
      void finish(request);
    });
  };
}
