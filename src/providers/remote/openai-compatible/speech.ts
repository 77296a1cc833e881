// Speech on the upstream's POST {base}/audio/speech (OpenAI's; LocalAI, a speaches
// server and vLLM's audio servers take the same body): the request's fields as the
// client sent them, its model mapped (UPSTREAM_SPEECH_MODELS), and the upstream's audio
// bytes passed on as they arrive. Retries and timeouts are the transport's (retries only
// before the first byte); once audio flows, a failure cuts the answer.
import type { SpeechAudio, SpeechRequest } from '../../types.ts';
import type { UpstreamJsonDeps } from './json-call.ts';
import { UpstreamCall } from './transport.ts';

/** The upstream model for one of our speech ids: `agent-voice` runs tts-1 unless mapped; the rest run under their own names. */
export const upstreamSpeechModel = (models: Readonly<Record<string, string>>, model: string) => models[model] ?? (model === 'agent-voice' ? 'tts-1' : model);

export async function upstreamSpeak(deps: UpstreamJsonDeps, upstreamModel: string, request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio> {
  signal.throwIfAborted();
  const call = new UpstreamCall(deps.config, deps.target, signal, deps.transport);
  const startedAt = performance.now();
  const body = { ...request.fields, model: upstreamModel };
  let first: Uint8Array;
  try {
    first = (await call.open('/audio/speech', body, true)).first;
  } catch (err) {
    const thrown = call.explain(err);
    call.close(false);
    deps.tell(call, 'speech', upstreamModel, request.requestId, startedAt, undefined, false, thrown);
    throw thrown;
  }
  const firstByteAt = performance.now();
  async function* chunks(): AsyncGenerator<Uint8Array> {
    let finished = false;
    let thrown: unknown;
    try {
      yield first;
      for (let chunk = await call.read(); chunk; chunk = await call.read()) yield chunk;
      finished = true;
    } catch (err) {
      thrown = call.explain(err);
      throw thrown;
    } finally {
      call.close(finished);
      deps.tell(call, 'speech', upstreamModel, request.requestId, startedAt, firstByteAt, finished && thrown === undefined, thrown);
    }
  }
  // The upstream bills the whole input once it answers: so is the caller.
  return { chunks: chunks(), charged: () => request.input.length };
}
