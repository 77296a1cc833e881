// The call runner: the pipeline's steps in their one order for every caller that is not
// an HTTP request (a WebSocket turn, a batch line, a background response, later a
// platform run): request id → authenticate → limits → body (the one JSON parser) →
// contract → handler → finish (slot, metrics, access line, activity row). An HTTP
// request takes the same step functions as Fastify hooks (http/server.ts), because
// Fastify reads the body between the limits and the contract; no caller sequences
// them itself. A failure at any step becomes the ApiError the caller renders in its own
// transport (an error event, a batch output line, a failed stored response).
import { ApiError, serverError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { KeyRecord } from '../keys/keys-service.ts';
import type { Services } from '../services.ts';
import { admitCall } from './admit.ts';
import { admitKey, authenticateCall } from './authenticate.ts';
import { abortCall, newCall, type Call, type CallLog, type RouteConfig } from './call.ts';
import { checkCall } from './contract.ts';
import { finishCall } from './finish.ts';
import type { JsonParsePool } from './json/parse-pool.ts';
import { LARGE_JSON_BYTES, parseJsonText } from './json/text.ts';

export interface CallSource {
  /** The call's request id (default: a new one). */
  id?: string;
  /** Default POST. */
  method?: string;
  route: RouteConfig;
  /** The metrics and access-line label, e.g. `batch /v1/chat/completions`. */
  routeLabel: string;
  ip: string;
  log: CallLog;
  /**
   * Who calls: a secret to authenticate, or a key already looked up, as it is now (a
   * batch line's and a background response's key, re-read when they run: revoked or
   * paused since is refused).
   */
  key: KeyRecord | { secret: string | null };
  /** The body, read at its step: parsed by the one JSON parser (jsonText) or a value parsed before. */
  body(): unknown;
  /**
   * The caller's stop: aborting it aborts the call's work. With `waitForSlot`, the call
   * waits for the account's concurrency slot (until this aborts) instead of being refused.
   */
  signal?: AbortSignal;
  waitForSlot?: boolean;
  /** The error for a call whose `signal` stopped it (default: a server error). */
  stopped?: () => ApiError;
  /** Refuses the call before its steps (the caller has decided it cannot run). */
  refuse?: ApiError;
}

export interface CallOutcome<T> {
  call: Call;
  /** What the caller got: 200, the error's status, or what the handler's `status` said. */
  status: number;
  value?: T;
  /** Why it failed, in the error catalogue: what the caller renders. */
  error?: ApiError;
  /** What the step or handler threw (a job's interruption, for one). */
  thrown?: unknown;
}

/**
 * Runs one call through every step and finishes it, however it ends. `status` reads the
 * status from the handler's value (a stream that failed after it began says so there).
 */
export async function runCall<T>(services: Services, source: CallSource, handler: (call: Call) => Promise<T>, status?: (value: T) => number): Promise<CallOutcome<T>> {
  const call = newCall({ id: source.id ?? newId('req_'), method: source.method ?? 'POST', route: source.route, routeLabel: source.routeLabel, ip: source.ip, log: source.log });
  const { signal } = source;
  const stop = () => abortCall(call, signal!.reason);
  if (signal?.aborted) stop();
  else signal?.addEventListener('abort', stop, { once: true });
  let outcome: CallOutcome<T>;
  try {
    if (source.refuse) {
      if (!('secret' in source.key)) call.key = source.key;
      throw source.refuse;
    }
    if ('secret' in source.key) await authenticateCall(services, call, source.key.secret);
    else admitKey(services, call, source.key);
    await admitCall(services, call, Date.now(), source.waitForSlot && signal ? { waitForSlot: signal } : {});
    signal?.throwIfAborted();
    checkCall(call, { body: await source.body() });
    const value = await handler(call);
    outcome = { call, status: status ? status(value) : 200, value };
  } catch (err) {
    let error: ApiError;
    if (err instanceof ApiError) error = err;
    else if (signal?.aborted) error = source.stopped?.() ?? serverError();
    else {
      call.log.error({ err, request_id: call.id }, `${source.routeLabel} failed`);
      error = serverError();
    }
    call.errorCode = error.code;
    outcome = { call, status: error.status, error, thrown: err };
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  await finishCall(services, call, outcome.status);
  return outcome;
}

export interface JsonTextSource {
  limit: number;
  /** What errors call the text ('message', 'request body'). */
  noun: string;
  /** Large texts are parsed on the pool's workers, never on the event loop. */
  pool: JsonParsePool;
  /** True once nobody waits for the answer (a large parse is then dropped). */
  gone: () => boolean;
}

/** A JSON text through the one parser: inline when small, on the worker pool when large. */
export async function jsonText(bytes: Buffer, source: JsonTextSource): Promise<unknown> {
  return bytes.length > LARGE_JSON_BYTES && bytes.length <= source.limit
    ? source.pool.parse(bytes, null, source.gone, source.noun)
    : parseJsonText(bytes, { limit: source.limit, noun: source.noun });
}
