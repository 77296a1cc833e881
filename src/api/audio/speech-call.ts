// One speech request (POST /v1/audio/speech, SPEC "Audio"): the model's engine found
// (503 naming what to install when it cannot run here, charged nothing), the input's
// price held (speech is paid per input character, as the reference's tts-1), the engine
// started, and its audio answered as it is made. The body is the audio, so the credits
// go in a header, `X-Service-Svc`: known before the first byte, since the price is per
// character. The run settles when the audio ends: the whole input once it is whole; cut
// short (the client gone, a failure mid-stream), what was read aloud so far offline, and
// the whole input on an upstream (which bills it once it answers).
import { SVC_HEADER } from '../../contract/fields.ts';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { fromMicro } from '../../accounts/money.ts';
import type { createSpeech } from '../../contract/endpoints/audio.ts';
import type { BodyOf } from '../../contract/types.ts';
import { microCreditsFor, usdFor } from '../../credits/pricing.ts';
import { Run, type InputEstimate } from '../../credits/run.ts';
import { invalidRequest, serviceUnavailable } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { Call } from '../../pipeline/call.ts';
import type { SpeechAudio, SpeechFormat, SpeechProvider } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { countTokensAsync } from '../../text/tokenizer.ts';
import { providerFailure } from '../stream-answer.ts';

export type SpeechBody = BodyOf<typeof createSpeech>;

/** The response header that carries the credits a speech answer costs (the body being audio). */

export const CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = { mp3: 'audio/mpeg', wav: 'audio/wav', pcm: 'audio/pcm' };

/** Characters as the 4096 limit counts them (UTF-16 code units), each one charged. */
class CharacterEstimate implements InputEstimate {
  constructor(readonly bound: number) {}
  async counted(): Promise<number> {
    return this.bound;
  }
}

/** Answers the checked body with its audio; `reply` once the audio has started (or the client went away before). */
export async function createSpeechAudio(services: Services, call: Call, body: SpeechBody, key: KeyRecord, reply: FastifyReply): Promise<FastifyReply> {
  const model = body.model!;
  const provider: SpeechProvider = services.engines.for('speech', model);
  if (provider.missing) throw serviceUnavailable(`Speech is not available on this server: ${provider.missing}.`);
  const input = body.input!;
  if (input.trim() === '') throw invalidRequest('The input has nothing to read aloud: send some text.', 'input');
  const format = (body.response_format ?? 'mp3') as SpeechFormat;
  const price = services.engines.price('speech', model);
  const run = await Run.open(services, call, { key, price, input: new CharacterEstimate(input.length), maxOutputTokens: 0 });
  // The fields the contract passed, as the client sent them (with the contract's defaults).
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) if (value !== undefined) fields[name] = value;
  // The format is what the answer's content type says: sent even when left to its default.
  fields.response_format = format;
  let audio: SpeechAudio;
  try {
    audio = await provider.speak(
      { model, input, ...(body.voice ? { voice: body.voice } : {}), format, speed: body.speed ?? 1, fields, requestId: call.id },
      run.signal,
    );
  } catch (err) {
    await run.close();
    const failure = providerFailure(err, run.signal);
    if (failure) throw failure;
    return reply;
  }
  const whole = microCreditsFor(usdFor(price, { inputTokens: input.length, outputTokens: 0 }), services.config.creditsPerUsd);
  const settle = async () => {
    const chars = Math.min(audio.charged(), input.length);
    run.report({ inputTokens: chars === 0 ? 0 : await countTokensAsync(input.slice(0, chars)), outputTokens: 0 }, usdFor(price, { inputTokens: chars, outputTokens: 0 }));
    await run.close();
  };
  async function* bytes(): AsyncGenerator<Uint8Array> {
    try {
      yield* audio.chunks;
    } catch (err) {
      // Audio has gone out: the answer can only be cut. A client gone is no failure.
      if (!run.signal.aborted) services.log.warn({ err, request_id: call.id }, 'speech audio failed mid-stream');
      throw err;
    } finally {
      await settle().catch((err: unknown) => services.log.error({ err, request_id: call.id }, 'settling a speech answer failed'));
    }
  }
  reply.header('content-type', CONTENT_TYPES[format]).header(SVC_HEADER, String(fromMicro(whole)));
  return reply.send(Readable.from(bytes(), { objectMode: false }));
}
