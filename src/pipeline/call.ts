// One call through the pipeline, whatever carried it: an HTTP request, a batch line, a
// background job, a WebSocket turn. The steps (authenticate.ts, contract.ts, admit.ts,
// finish.ts) are plain functions over it; http/ adapts Fastify's hooks to them.
import type { Root } from '../contract/roots.ts';
import type { EndpointContract } from '../contract/types.ts';
import type { KeyRecord } from '../keys/keys-service.ts';
import type { Lease } from '../limits/limits.ts';

export type AuthMode = 'key' | 'admin' | 'none';

export interface RouteConfig {
  auth: AuthMode;
  contract?: EndpointContract;
  /** For the activity log: the route as written in the contract, e.g. /v1/models/{model}. */
  endpoint: string;
  /** The root it is under (its error shape); absent: the compatible API's. */
  root?: Root;
}

/** What the steps log through: pino's shape, so a Fastify request logger or a child logger fits. */
export interface CallLog {
  readonly level: string;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** The credit settlement of one of the call's runs, while it is open (credits/run.ts). */
export interface Settlement {
  /** Resolves once the run has settled (usage and credits are on the call). */
  readonly settled: Promise<unknown>;
  /** Settles now with what ran so far (idempotent): for a run that has not ended in time. */
  settle(): Promise<unknown>;
}

export interface Call {
  /** req_...: X-Request-Id of an HTTP request, the request id of a batch line. */
  readonly id: string;
  readonly method: string;
  /** The endpoint, when the call reached one (unknown paths and health checks have none). */
  route: RouteConfig | null;
  /** The metrics and access-line label: the route pattern, never a URL with ids. */
  routeLabel: string;
  clientRequestId: string | null;
  /** The caller's address, for key IP allowlists. */
  ip: string;
  log: CallLog;
  key: KeyRecord | null;
  /** The checked body / query / path parameters, after classification and validation. */
  body: Record<string, unknown>;
  query: Record<string, unknown>;
  params: Record<string, string>;
  ignored: string[];
  /** Response headers the steps decided (rate limits, ignored fields); the transport sends them. */
  headers: Record<string, string>;
  /** The account's concurrency slot while the call holds it (the finish step gives it back). */
  slot: Lease | null;
  model: string | null;
  user: string | null;
  safetyIdentifier: string | null;
  /** Summed over the call's settled runs. */
  usage: { inputTokens: number; outputTokens: number };
  /** micro-credits, summed over the call's runs */
  creditsReserved: number;
  creditsSettled: number;
  /** micro-USD, summed over the call's settled runs */
  costUsd: number;
  errorCode: string | null;
  /** What a gateway call's upstream said (its generation id, streamed, finish reason); null elsewhere. */
  upstream: { id: string | null; streamed: boolean; finishReason: string | null } | null;
  /** The Moderate requests switch's verdict for the activity row: the categories flagged (empty: passed); null when not moderated. */
  moderation: string[] | null;
  done: boolean;
  /** performance.now() at arrival */
  startedAt: number;
  /** Created on demand by callSignal(); aborted when the caller goes away or the call is cancelled. */
  abort: AbortController | null;
  /** The open runs the finish step waits for, so the activity row carries what the ledger charged. */
  runs: Settlement[];
  /** Runs opened so far: the next one's number in its run id (credits/ledger.ts runIdFor). */
  runCount: number;
}

export function newCall(init: { id: string; method: string; route: RouteConfig | null; routeLabel: string; ip: string; log: CallLog }): Call {
  // Field by field, not `{ ...init, ... }`: on Node 20's V8 every property added after a
  // spread takes a slow path that costs microseconds and kilobytes of garbage per call.
  return {
    id: init.id,
    method: init.method,
    route: init.route,
    routeLabel: init.routeLabel,
    ip: init.ip,
    log: init.log,
    clientRequestId: null,
    key: null,
    body: {},
    query: {},
    params: {},
    ignored: [],
    headers: {},
    slot: null,
    model: null,
    user: null,
    safetyIdentifier: null,
    usage: { inputTokens: 0, outputTokens: 0 },
    creditsReserved: 0,
    creditsSettled: 0,
    costUsd: 0,
    errorCode: null,
    moderation: null,
    upstream: null,
    done: false,
    startedAt: performance.now(),
    abort: null,
    runs: [],
    runCount: 0,
  };
}

/** A signal that aborts when the call's caller goes away (or its runner cancels it). */
export function callSignal(call: Call): AbortSignal {
  call.abort ??= new AbortController();
  return call.abort.signal;
}

/**
 * Stops the call's work (its caller went away, or it was cancelled). The signal is made
 * now when no step has asked for it yet, so work that starts later sees it aborted.
 */
export function abortCall(call: Call, reason?: unknown): void {
  callSignal(call);
  call.abort!.abort(reason);
}
