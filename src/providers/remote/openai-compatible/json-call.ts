// One non-streamed JSON call to the upstream (embeddings, moderations, one decision
// question): POST {base}{path} on the provider's pool, retries and timeouts
// (transport.ts), the answer read up to a byte cap and parsed, and the call told to the
// observer however it ends. Errors come back as the transport explains them.
import { ProviderError } from '../../types.ts';
import type { UpstreamCallReport } from '../../upstream-observer.ts';
import type { UpstreamConfig } from './config.ts';
import { UpstreamCall, type RawBody, type TransportOptions, type UpstreamTarget } from './transport.ts';

/** What one upstream call reports when it ends (the provider's observer; see provider.ts). */
export type Tell = (
  call: UpstreamCall,
  operation: UpstreamCallReport['operation'],
  model: string,
  requestId: string | undefined,
  startedAt: number,
  firstByteAt: number | undefined,
  finished: boolean,
  thrown: unknown,
) => void;

export interface UpstreamJsonDeps {
  config: UpstreamConfig;
  target: UpstreamTarget;
  transport: TransportOptions;
  tell: Tell;
}

export interface JsonCall {
  path: string;
  /** JSON (most calls), or a multipart form as its bytes (/audio/*, /images/edits). */
  body: Record<string, unknown> | RawBody;
  /** The upstream model, for the observer. */
  model: string;
  operation: UpstreamCallReport['operation'];
  requestId: string | undefined;
  /** The answer's bytes at most (an upstream that sends more is failing). */
  maxBytes: number;
  /** What the answer is, for the error message of one that is too large or not JSON. */
  what: string;
}

export const invalidAnswer = (what: string, why: string) => new ProviderError(`upstream sent an invalid ${what} answer: ${why}`, undefined, false);

/** The whole answer of one call, as bytes with its content type (text formats, or JSON to parse). */
export async function upstreamBytes(deps: UpstreamJsonDeps, request: JsonCall, signal: AbortSignal): Promise<{ contentType: string; bytes: Buffer }> {
  signal.throwIfAborted();
  const call = new UpstreamCall(deps.config, deps.target, signal, deps.transport);
  const startedAt = performance.now();
  let firstByteAt: number | undefined;
  let finished = false;
  let thrown: unknown;
  try {
    const opened = await call.open(request.path, request.body, false);
    firstByteAt = performance.now();
    const chunks: Uint8Array[] = [opened.first];
    let bytes = opened.first.byteLength;
    for (let chunk = await call.read(); chunk; chunk = await call.read()) {
      bytes += chunk.byteLength;
      if (bytes > request.maxBytes) throw invalidAnswer(request.what, `an answer over ${request.maxBytes} bytes`);
      chunks.push(chunk);
    }
    finished = true;
    return { contentType: opened.contentType, bytes: Buffer.concat(chunks) };
  } catch (err) {
    thrown = call.explain(err);
    throw thrown;
  } finally {
    call.close(finished);
    deps.tell(call, request.operation, request.model, request.requestId, startedAt, firstByteAt, finished && thrown === undefined, thrown);
  }
}

/** The parsed answer of one call. */
export async function upstreamJson(deps: UpstreamJsonDeps, request: JsonCall, signal: AbortSignal): Promise<unknown> {
  const { bytes } = await upstreamBytes(deps, request, signal);
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    throw invalidAnswer(request.what, 'not JSON');
  }
}

/**
 * Runs `work(0..count-1)`, `parallel` at a time. The first failure stops the others
 * (their calls are aborted with it) and is the one thrown; the caller's abort wins.
 */
export async function inParallel(count: number, parallel: number, signal: AbortSignal, work: (index: number, signal: AbortSignal) => Promise<void>): Promise<void> {
  let next = 0;
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const worker = async () => {
    while (next < count && !stop.signal.aborted) await work(next++, stop.signal);
  };
  try {
    await Promise.all(
      Array.from({ length: Math.min(parallel, count) }, () =>
        worker().catch((err: unknown) => {
          if (!stop.signal.aborted) stop.abort(err);
          throw err;
        }),
      ),
    );
  } catch {
    // The first failure is the one to report (the others may be its consequences).
    throw signal.aborted ? signal.reason : stop.signal.reason;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
