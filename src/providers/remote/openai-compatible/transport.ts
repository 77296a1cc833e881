// One upstream call: POST with retries before the first body byte, a first-byte
// timeout per attempt, a total timeout, and the caller's abort signal wired into
// the fetch so a client that goes away closes the upstream connection at once.
//
// Node's global fetch (undici) keeps connections alive and pools them per origin
// by default, so consecutive calls reuse sockets without extra setup.
import { ProviderError } from '../../types.ts';
import type { UpstreamConfig } from './config.ts';
import { messageFromErrorBody } from './errors.ts';

export interface TransportOptions {
  /** First retry delay; doubles each time (200, 400, 800 ms...). */
  retryBaseMs: number;
  fetch: typeof fetch;
}

export interface OpenedStream {
  contentType: string;
  /** The body, first chunk included; iterate once. */
  bytes: AsyncIterable<Uint8Array>;
}

const RETRYABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
const MAX_ERROR_BODY = 64 * 1024;
// After the answer is complete, how long/much of the body's tail we read to keep the socket.
const DRAIN_MS = 1000;
const MAX_DRAIN_BYTES = 64 * 1024;

/** A non-2xx answer; the upstream's Retry-After, if any, stretches the backoff. */
class UpstreamHttpError extends ProviderError {
  constructor(
    message: string,
    status: number,
    retryable: boolean,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message, status, retryable);
  }
}

// Abort reasons we set ourselves, to tell them apart from the caller's.
class TotalTimeout extends Error {}
class FirstByteTimeout extends Error {}

/** Waits `ms`, or rejects as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return text + decoder.decode();
}

export class UpstreamCall {
  private readonly total = new AbortController();
  private readonly totalTimer: NodeJS.Timeout;
  private readonly deadline: number;
  private attempt: AbortController | undefined;
  private firstByteTimer: NodeJS.Timeout | undefined;
  private streaming = false;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private bodyDone = false;

  constructor(
    private readonly config: UpstreamConfig,
    private readonly clientSignal: AbortSignal,
    private readonly options: TransportOptions,
  ) {
    this.deadline = Date.now() + config.timeoutMs;
    this.totalTimer = setTimeout(() => this.total.abort(new TotalTimeout()), config.timeoutMs);
  }

  /** POSTs `body` and resolves once the first byte of a 2xx body has arrived. */
  async open(path: string, body: unknown): Promise<OpenedStream> {
    const payload = JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      this.clientSignal.throwIfAborted();
      try {
        return await this.tryOnce(path, payload);
      } catch (err) {
        clearTimeout(this.firstByteTimer);
        const failure = this.explain(err);
        const retryable = failure instanceof ProviderError && failure.retryable && attempt < this.config.maxRetries;
        if (!retryable) throw failure;
        const backoff = this.options.retryBaseMs * 2 ** attempt;
        const wait = Math.max(backoff, failure instanceof UpstreamHttpError ? (failure.retryAfterMs ?? 0) : 0);
        if (Date.now() + wait >= this.deadline) throw failure; // no time left for another try
        await sleep(wait, AbortSignal.any([this.clientSignal, this.total.signal])).catch((e: unknown) => {
          throw this.explain(e);
        });
      }
    }
  }

  private async tryOnce(path: string, payload: string): Promise<OpenedStream> {
    const attempt = new AbortController();
    this.attempt = attempt;
    this.firstByteTimer = setTimeout(() => attempt.abort(new FirstByteTimeout()), this.config.connectTimeoutMs);
    const signal = AbortSignal.any([this.clientSignal, this.total.signal, attempt.signal]);

    const res = await this.options.fetch(`${this.config.baseUrl}${path}`, {
      method: 'POST',
      headers: this.headers(),
      body: payload,
      signal,
    });

    if (!res.ok) {
      const text = await readLimited(res.body, MAX_ERROR_BODY);
      const detail = messageFromErrorBody(text) ?? res.statusText;
      throw new UpstreamHttpError(
        `upstream returned ${res.status}${detail ? `: ${detail}` : ''}`,
        res.status,
        RETRYABLE.has(res.status),
        retryAfterMs(res.headers.get('retry-after')),
      );
    }
    if (!res.body) throw new ProviderError('upstream answered without a body', res.status, true);

    const reader = res.body.getReader();
    let first: Uint8Array | undefined;
    try {
      while (!first) {
        const { done, value } = await reader.read();
        if (done) break;
        if (value.byteLength > 0) first = value;
      }
    } catch (err) {
      reader.cancel().catch(() => {});
      throw err; // nothing received yet: explain() still calls it a (retryable) connection failure
    }
    if (!first) throw new ProviderError('upstream closed the response without sending anything', res.status, true);
    // Streaming has started: from here on nothing is retried and only the total timeout applies.
    this.streaming = true;
    clearTimeout(this.firstByteTimer);

    this.reader = reader;
    const firstChunk = first;
    const markDone = () => {
      this.bodyDone = true;
    };
    return {
      contentType: res.headers.get('content-type') ?? '',
      // Leaving this loop early does not cancel the body: close() decides between
      // draining it (keeps the socket reusable) and cutting it (abort, failure).
      bytes: (async function* () {
        yield firstChunk;
        for (;;) {
          const next = await reader.read();
          if (next.done) return markDone();
          if (next.value.byteLength > 0) yield next.value;
        }
      })(),
    };
  }

  private headers(): Headers {
    // set(), not an object spread: header names are case-insensitive, so a second
    // spelling would be appended ("Bearer a, Bearer b") instead of replaced.
    const h = new Headers({ accept: 'text/event-stream, application/json' });
    for (const [name, value] of Object.entries(this.config.headers)) h.set(name, value);
    h.set('content-type', 'application/json');
    if (this.config.apiKey) h.set('authorization', `Bearer ${this.config.apiKey}`);
    return h;
  }

  /**
   * What to throw for `err`: the caller's own abort reason when it aborted (never
   * wrapped, never retried), a ProviderError otherwise.
   */
  explain(err: unknown): unknown {
    if (this.clientSignal.aborted) return this.clientSignal.reason;
    if (err instanceof ProviderError) return err;
    if (this.total.signal.aborted) {
      return new ProviderError(`upstream timed out after ${this.config.timeoutMs} ms`, undefined, false);
    }
    if (this.attempt?.signal.reason instanceof FirstByteTimeout) {
      // Not retried: an upstream this slow is usually overloaded, and the total timeout would be eaten anyway.
      return new ProviderError(`upstream sent no response within ${this.config.connectTimeoutMs} ms`, undefined, false);
    }
    const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    if (this.streaming) return new ProviderError(`upstream stream failed: ${cause}`, undefined, false);
    // Nothing received yet (refused, reset, DNS...): a retry is safe.
    return new ProviderError(`upstream connection failed: ${cause}`, undefined, true);
  }

  /**
   * Releases timers and the connection. `finished`: the answer is complete (e.g.
   * `[DONE]` seen) and only the end of the body is outstanding; it is then read
   * off in the background, briefly, so the kept-alive socket can be reused.
   * Otherwise (abort, failure, consumer gone) the connection is cut at once.
   */
  close(finished = false): void {
    clearTimeout(this.totalTimer);
    clearTimeout(this.firstByteTimer);
    if (this.bodyDone) return;
    if (finished && this.reader && !this.clientSignal.aborted) {
      void this.drain(this.reader, this.attempt);
      return;
    }
    this.attempt?.abort();
    this.reader?.cancel().catch(() => {});
  }

  private async drain(reader: ReadableStreamDefaultReader<Uint8Array>, attempt: AbortController | undefined): Promise<void> {
    const timer = setTimeout(() => attempt?.abort(), DRAIN_MS);
    timer.unref();
    let bytes = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        bytes += value.byteLength;
        if (bytes > MAX_DRAIN_BYTES) return attempt?.abort(); // a server still talking after [DONE]: cut it
      }
    } catch {
      // aborted or reset: nothing to keep
    } finally {
      clearTimeout(timer);
    }
  }
}
