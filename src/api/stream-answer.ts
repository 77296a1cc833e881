// Shared by chat and text completions: answer a metered provider stream as SSE. The
// first event is awaited before anything is written, so a provider that fails at once
// still gets a JSON error (e.g. 502); later failures become an error event. Credits
// settle before the tail (the usage chunk carries them), then `data: [DONE]`.
import type { FastifyReply } from 'fastify';
import type { Run } from '../credits/run.ts';
import { ApiError, serverError, upstreamError } from '../errors.ts';
import { openEventStream } from '../http/sse.ts';
import { ProviderError, type StreamPart, type Usage } from '../providers/types.ts';
import { outsideText, SecretScrubber } from '../secrets.ts';

// Providers word their errors and scrub what they quote; this is a last bound on what a client is shown.
const ANY_CREDENTIAL = new SecretScrubber();
const MAX_PROVIDER_MESSAGE = 500;

/** A provider failure as the client sees it; null when the client itself went away. */
export function providerFailure(err: unknown, signal: AbortSignal): ApiError | null {
  if (signal.aborted) return null;
  if (err instanceof ApiError) return err;
  if (err instanceof ProviderError) return upstreamError(`The model provider failed to answer: ${outsideText(err.message, ANY_CREDENTIAL, MAX_PROVIDER_MESSAGE)}`);
  throw err;
}

/**
 * Any failure after the stream has started, as the error event that ends it: the
 * client must learn the answer is incomplete, never see a silent close. An unexpected
 * failure is logged and shown as a server error revealing nothing.
 */
function streamFailure(err: unknown, signal: AbortSignal, reply: FastifyReply): ApiError | null {
  try {
    return providerFailure(err, signal);
  } catch {
    reply.log.error({ err }, 'stream failed');
    return serverError();
  }
}

export interface StreamAnswer {
  reply: FastifyReply;
  meter: Run;
  events: AsyncIterable<StreamPart>;
  signal: AbortSignal;
  /** Chunks written before the first event (e.g. the role chunk). */
  head?: unknown[];
  /** The chunk for an event (or several, as a list), or null. */
  chunk(e: StreamPart): unknown | unknown[] | null;
  /** Chunks written after settlement, before the terminator. */
  tail(credits: number, usage: Usage): unknown[] | Promise<unknown[]>;
  /** Runs when a stream is complete, before the terminator (e.g. storing the completion). */
  done?(credits: number, usage: Usage): Promise<void>;
  /** What ends a stream that failed once started; default the chat surface's `{error}` chunk. */
  failure?(error: ApiError): unknown[] | Promise<unknown[]>;
  /** The last line: `[DONE]` (chat surfaces) unless null (Responses ends with its final event). */
  terminator?: string | null;
  /** Each chunk is an object whose `type` names its SSE event (the Responses and messages surfaces). */
  named?: boolean;
  /** What an idle stream is sent instead of a comment line (the messages surface's ping event). */
  keepAlive?: string;
}

export async function streamAnswer(a: StreamAnswer): Promise<FastifyReply> {
  const it = a.events[Symbol.asyncIterator]();
  let first: IteratorResult<StreamPart>;
  try {
    first = await it.next();
  } catch (err) {
    await a.meter.close();
    const failure = providerFailure(err, a.signal);
    if (failure) throw failure;
    return a.reply;
  }
  const sse = openEventStream(a.reply, a.keepAlive ? { keepAlive: a.keepAlive } : {});
  const send = (c: unknown) => (a.named ? sse.send(c, (c as { type: string }).type) : sse.send(c));
  try {
    for (const c of a.head ?? []) await send(c);
    for (let r = first; !r.done; r = await it.next()) {
      const c = a.chunk(r.value);
      if (Array.isArray(c)) for (const x of c) await send(x);
      else if (c) await send(c);
    }
    const { credits, usage } = await a.meter.close();
    for (const c of await a.tail(credits, usage)) await send(c);
    // Before the terminator: a client that has seen the end can count on what was kept.
    await a.done?.(credits, usage);
    if (a.terminator !== null) await sse.send(a.terminator ?? '[DONE]');
  } catch (err) {
    // Settles whatever ran; a failure to settle is logged by the ledger, not thrown at a stream under way.
    await a.meter.close().catch((e: unknown) => a.reply.log.error({ err: e }, 'settling a failed stream failed'));
    const failure = streamFailure(err, a.signal, a.reply);
    if (failure) {
      const chunks = a.failure ? await Promise.resolve(a.failure(failure)).catch(() => [{ type: 'error', code: failure.code, message: failure.message, param: failure.param }]) : [{ error: failure.toBody().error }];
      for (const c of chunks) await send(c);
    }
  } finally {
    sse.end();
  }
  return a.reply;
}

/** Consumes a metered stream for a single JSON answer; null when the client went away. */
export async function consume<T>(meter: Run, signal: AbortSignal, run: () => Promise<T>): Promise<{ value: T; credits: number; usage: Usage } | null> {
  let value: T;
  try {
    value = await run();
  } catch (err) {
    await meter.close();
    const failure = providerFailure(err, signal);
    if (failure) throw failure;
    return null;
  }
  const { credits, usage } = await meter.close();
  return { value, credits, usage };
}
