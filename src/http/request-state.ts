// Per-request state the pipeline steps share, attached to the Fastify request.
import type { EndpointContract } from '../contract/types.ts';
import type { KeyRecord } from '../keys/keys-service.ts';

export type AuthMode = 'key' | 'admin' | 'none';

export interface RouteConfig {
  auth: AuthMode;
  contract?: EndpointContract;
  /** For the activity log: the route as written in the contract, e.g. /v1/models/{model}. */
  endpoint: string;
}

export interface RequestState {
  key: KeyRecord | null;
  /** The checked body / query, after classification and validation. */
  body: Record<string, unknown>;
  query: Record<string, unknown>;
  ignored: string[];
  slotHeld: boolean;
  model: string | null;
  user: string | null;
  safetyIdentifier: string | null;
  usage: { inputTokens: number; outputTokens: number };
  /** micro-credits */
  creditsReserved: number;
  creditsSettled: number;
  /** micro-USD */
  costUsd: number;
  errorCode: string | null;
  done: boolean;
  /** performance.now() at arrival */
  startedAt: number;
  /** Created on demand by clientSignal(); aborted when the client goes away. */
  abort: AbortController | null;
  /**
   * The credit settlement of the request's model call, while one is open: the finish
   * step waits for it, so the activity row carries what the ledger charged even when
   * the client left mid-stream.
   */
  settlement: Settlement | null;
}

export interface Settlement {
  /** Resolves once the call has settled (usage and credits are on the state). */
  readonly settled: Promise<unknown>;
  /** Settles now with what ran so far (idempotent): for a call that has not ended in time. */
  settle(): Promise<unknown>;
}

export function newRequestState(): RequestState {
  return {
    key: null,
    body: {},
    query: {},
    ignored: [],
    slotHeld: false,
    model: null,
    user: null,
    safetyIdentifier: null,
    usage: { inputTokens: 0, outputTokens: 0 },
    creditsReserved: 0,
    creditsSettled: 0,
    costUsd: 0,
    errorCode: null,
    done: false,
    startedAt: performance.now(),
    abort: null,
    settlement: null,
  };
}

/** A signal that aborts when the client disconnects before its response is complete. */
export function clientSignal(state: RequestState): AbortSignal {
  state.abort ??= new AbortController();
  return state.abort.signal;
}

declare module 'fastify' {
  interface FastifyRequest {
    state: RequestState;
  }
  interface FastifyContextConfig {
    agent?: RouteConfig;
  }
}
