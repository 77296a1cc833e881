// What a remote provider reports about each upstream call, for metrics and logs. The
// provider knows the call (attempts, first byte, how it failed); whoever creates it
// (app.ts) decides what to record, so providers/ never depends on the HTTP layer.

/**
 * How a call failed: `status` (a non-2xx answer), `timeout` (total or first byte),
 * `connection` (nothing received: refused, reset, DNS, an empty answer), `stream`
 * (the answer broke after it started: cut, an error event, a malformed or unfinished answer).
 */
export type UpstreamFailureKind = 'status' | 'timeout' | 'connection' | 'stream';

export interface UpstreamCallReport {
  operation: 'chat' | 'completion' | 'embeddings' | 'moderation' | 'decision' | 'speech' | 'transcription' | 'translation' | 'images';
  /** The upstream model name. */
  model: string;
  /** The upstream's host (host:port), never the whole URL. */
  host: string;
  /** `aborted`: the caller went away or stopped reading; not the upstream's fault. */
  outcome: 'ok' | 'error' | 'aborted';
  failure?: {
    kind: UpstreamFailureKind;
    /** The upstream's HTTP status (or an error payload's numeric code), when there is one. */
    status?: number;
    /** The upstream's error type and code, when it gave them as short identifiers (`invalid_request_error`, `context_length_exceeded`). */
    type?: string;
    code?: string;
    /**
     * Our own description, only for kinds whose text carries nothing of the upstream's
     * body (timeout, connection): `status` and `stream` failures quote upstream payloads.
     */
    reason?: string;
  };
  /** From the call's start to the first byte of the answer (retries included); absent when none came. */
  firstByteSeconds?: number;
  /** From the call's start to its end (the whole stream). */
  seconds: number;
  /** The service's request id, when the caller gave it (ChatRequest.requestId). */
  requestId?: string;
}

export interface UpstreamObserver {
  callEnded(report: UpstreamCallReport): void;
}
