// The OpenAI-compatible upstream as a ChatProvider: map the request, open the
// stream (transport.ts), parse SSE, map chunks to stream parts.
//
// Abort contract: when `signal` aborts, the upstream request is aborted at once (the
// upstream sees its connection close) and the generator throws `signal.reason`
// unchanged (a DOMException named 'AbortError' when abort() was called without a
// reason). It never wraps an abort in ProviderError and never retries after one.
// Every other failure ends the stream with an `error` part holding a ProviderError.
import type { SecretScrubber } from '../../../secrets.ts';
import type { ChatProvider, ChatRequest, CompletionRequest, DecisionProvider, DecisionRequest, EmbeddingProvider, ImageRequest, ImageResult, ModerationProvider, SpeechAudio, SpeechRequest, StreamPart } from '../../types.ts';
import type { DecodedAudio, TranscriptionRequest, TranscriptionResult } from '../../types.ts';
import { ProviderError } from '../../types.ts';
import type { UpstreamCallReport, UpstreamObserver } from '../../upstream-observer.ts';
import type { UpstreamConfig } from './config.ts';
import { upstreamDecide } from './decisions.ts';
import { upstreamTranscribe } from './transcriptions.ts';
import { upstreamEmbed } from './embeddings.ts';
import { upstreamModerate } from './moderations.ts';
import { upstreamSpeak } from './speech.ts';
import type { Tell, UpstreamJsonDeps } from './json-call.ts';
import { upstreamImage } from './images.ts';
import { answerError, errorInPayload, isRecord } from './errors.ts';
import { toChatBody, toCompletionBody } from './request-mapping.ts';
import { SseParser, type SseEvent } from './sse-parser.ts';
import { StreamMapper } from './stream-mapping.ts';
import type { StreamKind } from './stream-mapping.ts';
import { probeUpstream } from './probe.ts';
import { newUpstreamPool, UpstreamCall, upstreamTarget } from './transport.ts';
import type { TransportOptions } from './transport.ts';

export type ProviderOptions = Partial<TransportOptions> & {
  /** Told about every upstream call when it ends (metrics, the failure warning). */
  observer?: UpstreamObserver;
  /** The service's own secrets (admin token...): scrubbed from upstream text like the key and headers. */
  secrets?: readonly (string | undefined)[];
};

export interface OpenAICompatibleProvider extends ChatProvider, Pick<EmbeddingProvider, 'embed'>, Pick<ModerationProvider, 'moderate'> {
  /** Answers decision questions on the upstream chat model `upstreamModel` (decisions.ts). */
  decide(upstreamModel: string, request: DecisionRequest, signal: AbortSignal): ReturnType<DecisionProvider['decide']>;
  /** Reads text aloud on the upstream's /audio/speech, model `upstreamModel` (speech.ts). */
  speak(upstreamModel: string, request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio>;
  /** A transcription or translation on the upstream model `upstreamModel` (transcriptions.ts). */
  transcribe(upstreamModel: string, request: TranscriptionRequest, audio: DecodedAudio, signal: AbortSignal): Promise<TranscriptionResult>;
  /** One image from the upstream's /images/* (images.ts). */
  image(request: ImageRequest, signal: AbortSignal): Promise<ImageResult>;
  /** Asks the upstream for its model list (GET {base}/models); rejects with a short reason when it is not answering. */
  probe(timeoutMs: number): Promise<void>;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderError(`upstream sent invalid JSON in ${what}`, undefined, false);
  }
}

async function readAll(call: UpstreamCall, first: Uint8Array): Promise<string> {
  const chunks = [first];
  for (let chunk = await call.read(); chunk; chunk = await call.read()) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** An `event: error` frame (OpenRouter and others report failures mid-stream this way). */
function errorEvent(sse: SseEvent, scrubber: SecretScrubber): ProviderError {
  let payload: unknown;
  try {
    payload = JSON.parse(sse.data);
  } catch {
    // plain-text error event: its text is the message
  }
  return answerError(errorInPayload(payload) ?? (isRecord(payload) ? {} : { message: sse.data }), scrubber);
}

export function createOpenAICompatibleProvider(config: UpstreamConfig, options: ProviderOptions = {}): OpenAICompatibleProvider {
  const ownPool = options.dispatcher ? undefined : newUpstreamPool();
  const transport: TransportOptions = {
    retryBaseMs: options.retryBaseMs ?? 200,
    dispatcher: options.dispatcher ?? ownPool!,
  };
  const target = upstreamTarget(config, options.secrets);
  const host = new URL(config.baseUrl).host;
  const observer = options.observer;

  /** Completes a call's report and hands it over; a metrics failure never touches the call. */
  function tell(report: UpstreamCallReport, startedAt: number, call: UpstreamCall, finished: boolean, thrown: unknown): void {
    try {
      report.seconds = (performance.now() - startedAt) / 1000;
      if (thrown instanceof ProviderError) {
        const kind = call.failureKind(thrown);
        report.outcome = 'error';
        report.failure = { kind };
        if (thrown.status !== undefined) report.failure.status = thrown.status;
        if (thrown.upstream?.type !== undefined) report.failure.type = thrown.upstream.type;
        if (thrown.upstream?.code !== undefined) report.failure.code = thrown.upstream.code;
        if (kind === 'timeout' || kind === 'connection') report.failure.reason = thrown.message;
      } else if (finished && thrown === undefined) {
        report.outcome = 'ok';
      }
      observer!.callEnded(report);
    } catch {
      // metrics and logs must never fail a model call
    }
  }

  /** The observer's report of one JSON call (json-call.ts makes them: embeddings, moderations, decisions). */
  const tellJson: Tell = (call, operation, model, requestId, startedAt, firstByteAt, finished, thrown) => {
    if (!observer) return;
    const report: UpstreamCallReport = { operation, model, host, requestId, outcome: 'aborted', seconds: 0 };
    if (firstByteAt !== undefined) report.firstByteSeconds = (firstByteAt - startedAt) / 1000;
    tell(report, startedAt, call, finished, thrown);
  };

  const jsonDeps: UpstreamJsonDeps = { config, target, transport, tell: tellJson };

  async function* run(kind: StreamKind, path: string, body: { stream?: unknown; model?: unknown }, requestId: string | undefined, signal: AbortSignal): AsyncGenerator<StreamPart> {
    signal.throwIfAborted();
    const call = new UpstreamCall(config, target, signal, transport);
    const mapper = new StreamMapper(kind, undefined, target.scrubber);
    const startedAt = performance.now();
    // Filled in as the call goes (built field by field: this runs on every call).
    const report: UpstreamCallReport | undefined = observer && { operation: kind, model: String(body.model), host, requestId, outcome: 'aborted', seconds: 0 };
    let thrown: unknown;
    let finished = false;
    try {
      const opened = await call.open(path, body, body.stream !== false);
      if (report) report.firstByteSeconds = (performance.now() - startedAt) / 1000;

      // A non-streamed answer, or a server that ignores `stream: true`: one JSON object.
      if (opened.contentType.includes('application/json')) {
        const events = mapper.whole(parseJson(await readAll(call, opened.first), 'its response'));
        finished = true;
        for (const event of events) {
          signal.throwIfAborted();
          yield event;
        }
        return;
      }

      const parser = new SseParser();
      let sawDone = false;
      let failure: unknown;
      // The SSE events of one network chunk, mapped; stops at [DONE] (the answer is
      // complete; close(true) reads off whatever follows) or at a failure, which is
      // thrown after the events before it.
      const map = (frames: SseEvent[]): StreamPart[] => {
        const out: StreamPart[] = [];
        try {
          for (const sse of frames) {
            if (sse.data === '[DONE]') {
              sawDone = true;
              break;
            }
            if (sse.event === 'error') throw errorEvent(sse, target.scrubber);
            for (const event of mapper.push(parseJson(sse.data, 'the stream'))) out.push(event);
          }
        } catch (err) {
          failure = err;
        }
        return out;
      };
      for (let chunk: Uint8Array | null = opened.first; chunk; chunk = sawDone ? null : await call.read()) {
        for (const event of map(parser.push(chunk))) {
          // Events already buffered must not leak out after the caller went away.
          signal.throwIfAborted();
          yield event;
        }
        if (failure) throw failure;
      }
      if (!sawDone) {
        yield* map(parser.end());
        if (failure) throw failure;
      }
      signal.throwIfAborted();
      const tail = mapper.end(sawDone);
      finished = true;
      yield* tail;
    } catch (err) {
      thrown = call.explain(err);
      if (!(thrown instanceof ProviderError) || signal.aborted) throw thrown;
      yield { type: 'error', error: thrown };
    } finally {
      call.close(finished);
      if (report) tell(report, startedAt, call, finished, thrown);
    }
  }

  return {
    name: 'openai-compatible',
    chat(request: ChatRequest, signal: AbortSignal) {
      return run('chat', '/chat/completions', toChatBody(request, config), request.requestId, signal);
    },
    complete(request: CompletionRequest, signal: AbortSignal) {
      return run('completion', '/completions', toCompletionBody(request, config), request.requestId, signal);
    },
    embed(request, signal) {
      return upstreamEmbed(jsonDeps, request, signal);
    },
    moderate(request, signal) {
      return upstreamModerate(jsonDeps, request, signal);
    },
    decide(upstreamModel, request, signal) {
      return upstreamDecide(jsonDeps, upstreamModel, request, signal);
    },
    speak(upstreamModel, request, signal) {
      return upstreamSpeak(jsonDeps, upstreamModel, request, signal);
    },
    transcribe(upstreamModel, request, audio, signal) {
      return upstreamTranscribe(jsonDeps, upstreamModel, request, audio, signal);
    },
    image(request, signal) {
      return upstreamImage(jsonDeps, request, signal);
    },
    probe(timeoutMs: number) {
      return probeUpstream(target, transport.dispatcher, timeoutMs);
    },
    async close() {
      await ownPool?.close();
    },
  };
}
