// Step 5: limits. Requests per minute, key caps and the account's concurrency slot.
// Rate-limit headers on every authenticated response.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { formatReset } from '../limits/limits.ts';
import type { Services } from '../services.ts';
import { insufficientQuota } from '../errors.ts';

export function limitsStep(services: Services) {
  const { limits, caps, config } = services;

  return async function applyLimits(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const key = request.state.key;
    if (!key) return;
    const now = Date.now();

    const rpm = key.rpm ?? config.maxRpm;
    const window = await limits.hitRequestsPerMinute(key.id, Math.min(rpm, config.maxRpm), now);
    reply.header('x-ratelimit-limit-requests', String(window.limit));
    reply.header('x-ratelimit-remaining-requests', String(window.remaining));
    reply.header('x-ratelimit-reset-requests', formatReset(window.resetMs));
    if (!window.allowed) {
      throw insufficientQuota(`Rate limit reached: ${window.limit} requests per minute for this API key. Try again in ${formatReset(window.resetMs)}.`);
    }

    const admitted = await caps.admit(key, now);
    if (admitted.tokens) {
      reply.header('x-ratelimit-limit-tokens', String(admitted.tokens.limit));
      reply.header('x-ratelimit-remaining-tokens', String(admitted.tokens.remaining));
      reply.header('x-ratelimit-reset-tokens', formatReset(admitted.tokens.resetMs));
    }
    if (admitted.refused) {
      const { metric, period, max } = admitted.refused.limit;
      throw insufficientQuota(`Usage limit reached: this API key may use ${max} ${metric} per ${period === 'ever' ? 'lifetime' : period}.`);
    }

    if (!(await limits.acquireSlot(key.accountId, config.accountConcurrency))) {
      throw insufficientQuota(`Too many concurrent requests: this account may run ${config.accountConcurrency} at once.`);
    }
    request.state.slotHeld = true;
    // Credits are checked by the reservation the handler takes before any model runs
    // (credits/metered-run.ts): one conditional update, no separate read here.
  };
}
