// Step 4: limits. Requests per minute, key caps and the account's concurrency slot; the
// rate-limit headers go on the call for the transport to send (on errors too).
import { outOfCredits, rateLimited, tooManyConcurrent, usageLimitReached } from '../errors.ts';
import { formatReset } from '../limits/limits.ts';
import type { Services } from '../services.ts';
import type { Call } from './call.ts';

export interface AdmitOptions {
  /**
   * Wait for the account's concurrency slot instead of refusing the call (a batch line
   * shares the account with live calls); the wait ends when this signal aborts.
   */
  waitForSlot?: AbortSignal;
}

/** How often a waiting call asks for a slot again. */
const SLOT_RETRY_MS = 25;

export async function admitCall(services: Services, call: Call, now = Date.now(), options: AdmitOptions = {}): Promise<void> {
  const { limits, caps, config } = services;
  const key = call.key;
  if (!key) return;

  const rpm = key.rpm ?? config.maxRpm;
  // The window and the slot in one step (one round trip on Redis); the slot goes back if
  // a key cap refuses the call.
  const admission = await limits.admit(key.id, Math.min(rpm, config.maxRpm), key.accountId, config.accountConcurrency, now);
  const window = admission.window;
  let slot = admission.slot;
  call.headers['x-ratelimit-limit-requests'] = String(window.limit);
  call.headers['x-ratelimit-remaining-requests'] = String(window.remaining);
  call.headers['x-ratelimit-reset-requests'] = formatReset(window.resetMs);
  if (!window.allowed) {
    throw rateLimited(`Rate limit reached: ${window.limit} requests per minute for this API key. Try again in ${formatReset(window.resetMs)}.`);
  }

  const wait = options.waitForSlot;
  const busy = () => tooManyConcurrent(`Too many concurrent requests: this account may run ${config.accountConcurrency} at once.`);
  // Without a slot, a call that does not wait is refused before the key caps count it.
  if (!slot && !wait) throw busy();

  const admitted = await caps.admit(key, now).catch(async (err: unknown) => {
    if (slot) await limits.release(slot);
    throw err;
  });
  if (admitted.refused && slot) await limits.release(slot);
  if (admitted.tokens) {
    call.headers['x-ratelimit-limit-tokens'] = String(admitted.tokens.limit);
    call.headers['x-ratelimit-remaining-tokens'] = String(admitted.tokens.remaining);
    call.headers['x-ratelimit-reset-tokens'] = formatReset(admitted.tokens.resetMs);
  }
  if (admitted.refused) {
    const { metric, period, max } = admitted.refused.limit;
    throw usageLimitReached(`Usage limit reached: this API key may use ${max} ${metric} per ${period === 'ever' ? 'lifetime' : period}.`);
  }

  while (!slot) {
    if (!wait) throw busy();
    wait.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, SLOT_RETRY_MS));
    slot = await limits.acquire('slot', key.accountId, config.accountConcurrency);
  }
  if (call.done) {
    // The caller went away while this waited and the call is finished: nothing would
    // release a slot taken now, so it goes straight back (the transport runs nothing more).
    await limits.release(slot);
    return;
  }
  call.slot = slot;
  // Credits are checked by the reservation the handler takes before any model runs
  // (credits/run.ts): one conditional update, no separate read here.
}

/**
 * Refuses a call whose account has no credits left to reserve (balance - reserved <= 0),
 * before any work on its input: a cheap read, taken where that work is large (a large
 * body on an endpoint that runs a model). The reservation stays the guard.
 */
export async function admitCredits(services: Services, call: Call): Promise<void> {
  const key = call.key;
  if (!key) return;
  if ((await services.ledger.available(key.accountId)) <= 0) {
    throw outOfCredits('This account has no credits available (its balance is spent or held by running requests). Add credits.');
  }
}
