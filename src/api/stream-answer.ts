// Shared by chat and text completions: answer a metered provider stream as SSE. The
// first event is awaited before anything is written, so a provider that fails at once
// still gets a JSON error (e.g. 502); later failures become an error event. Credits
// settle before the tail (the usage chunk carries them), then `data: [DONE]`.
import type { FastifyReply } from 'fastify';
import type { Run } from '../credits/run.ts';
import { ApiError, serverError, upstreamError } from '../errors.ts';
import { openEventStream } from '../http/sse.ts';
import { ProviderError, type ProviderEvent, type Usage } from '../providers/types.ts';

/** A provider failure as the client sees it; null when the client itself went away. */
export function providerFailure(err: unknown, signal: AbortSignal): ApiError | null {
  if (signal.aborted) return null;
  if (err instanceof ApiError) return err;
  if (err instanceof ProviderError) return upstreamError(`The model provider failed to answer: ${err.message}`);
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
  events: AsyncIterable<ProviderEvent>;
  signal: AbortSignal;
  /** Chunks written before the first event (e.g. the role chunk). */
  head?: unknown[];
  /** The chunk for an event, or null. */
  chunk(e: ProviderEvent): unknown | null;
  /** Chunks written after settlement, before [DONE]. */
  tail(credits: number, usage: Usage): unknown[];
  /** Runs when a stream is complete, before [DONE] (e.g. storing the completion). */
  done?(credits: number, usage: Usage): Promise<void>;
}

export async function streamAnswer(a: StreamAnswer): Promise<FastifyReply> {
  const it = a.events[Symbol.asyncIterator]();
  let first: IteratorResult<ProviderEvent>;
  try {
    first = await it.next();
  } catch (err) {
    await a.meter.close();
    const failure = providerFailure(err, a.signal);
    if (failure) throw failure;
    return a.reply;
  }
  const sse = openEventStream(a.reply);
  try {
    for (const c of a.head ?? []) await sse.send(c);
    for (let r = first; !r.done; r = await it.next()) {
      const c = a.chunk(r.value);
      if (c) await sse.send(c);
    }
    const { credits, usage } = await a.meter.close();
    for (const c of a.tail(credits, usage)) await sse.send(c);
    // Before [DONE]: a client that has seen the end can count on what was kept.
    await a.done?.(credits, usage);
    await sse.send('[DONE]');
  } catch (err) {
    // Settles whatever ran; a failure to settle is logged by the ledger, not thrown at a stream under way.
    await a.meter.close().catch((e: unknown) => a.reply.log.error({ err: e }, 'settling a failed stream failed'));
    const failure = streamFailure(err, a.signal, a.reply);
    if (failure) await sse.send({ error: failure.toBody().error });
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
