// One transcription or translation (POST /v1/audio/transcriptions, /v1/audio/translations;
// SPEC "Audio"): the engine found by model (offline, or the upstream's /audio/*), a
// missing engine a 503 naming what to install (charged nothing), the upload copied into
// a private temp directory and decoded by ffmpeg (judged by content: what is not audio
// is a 400 naming `file`), then the price of the measured duration reserved before any
// recognition runs (per started second at the model's price per minute), the audio
// recognized or forwarded, and the answer formatted; the charge settles to that duration.
// JSON answers carry `svc`; text formats (text, srt, vtt) carry it in X-Service-Svc.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fromMicro } from '../../accounts/money.ts';
import type { UploadedFile } from '../../contract/form.ts';
import { Run, type InputEstimate } from '../../credits/run.ts';
import { serviceUnavailable, unsupportedParameter } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { callSignal, type Call } from '../../pipeline/call.ts';
import type { TranscriptionRequest } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { consume } from '../stream-answer.ts';
import { formatTranscript, type Formatted } from './transcription-format.ts';

/** The checked form, as the contract gives it (transcription fields; a translation has fewer). */
export interface TranscriptionForm {
  file?: UploadedFile;
  model?: string;
  language?: string;
  prompt?: string;
  response_format?: TranscriptionRequest['responseFormat'];
  temperature?: number;
  timestamp_granularities?: 'word' | 'segment' | ('word' | 'segment')[];
}

/** The header that carries the credits of an answer that is not JSON. */

/** Seconds of audio as a Run's "input tokens" (the price is per million seconds: engines.ts transcriptionPrice). */
class AudioSeconds implements InputEstimate {
  constructor(readonly bound: number) {}
  async counted(): Promise<number> {
    return this.bound;
  }
}

export function requestOf(task: TranscriptionRequest['task'], body: TranscriptionForm, requestId: string): TranscriptionRequest {
  const g = body.timestamp_granularities;
  return {
    task,
    model: body.model!,
    filename: body.file!.filename,
    contentType: body.file!.contentType,
    responseFormat: body.response_format ?? 'json',
    ...(task === 'transcribe' && body.language !== undefined ? { language: body.language.toLowerCase() } : {}),
    ...(body.prompt !== undefined ? { prompt: body.prompt } : {}),
    ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
    ...(task === 'transcribe' && g !== undefined ? { timestampGranularities: [...new Set(Array.isArray(g) ? g : [g])] } : {}),
    requestId,
  };
}

/** The answer (a JSON object with svc, or a text body and its credits), or null when the caller went away. */
export async function transcribe(
  services: Services,
  call: Call,
  task: TranscriptionRequest['task'],
  body: TranscriptionForm,
  key: KeyRecord,
): Promise<{ json: Record<string, unknown>; svc: number } | { text: string; svc: number } | null> {
  const request = requestOf(task, body, call.id);
  const provider = services.engines.for('transcription', request.model);
  const status = provider.status();
  if (!status.available) {
    throw serviceUnavailable(`Transcription is not available here: ${status.reason}; or configure an upstream (UPSTREAM_TRANSCRIPTION=upstream). Nothing was charged.`);
  }
  if (request.language !== undefined && provider.languages && !provider.languages.includes(request.language)) {
    throw unsupportedParameter(
      'language',
      `The offline transcription engine recognizes English only (language "en"), not "${request.language}". Send English audio, leave language out, or configure an upstream (UPSTREAM_TRANSCRIPTION=upstream).`,
    );
  }
  const signal = callSignal(call);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-api-audio-'));
  try {
    const inputPath = path.join(dir, 'upload');
    await pipeline(await services.blobs.get(body.file!.blob.key), createWriteStream(inputPath, { mode: 0o600 }), { signal });
    const audio = await provider.decode(inputPath, dir, signal);
    // Charged per started second, at least one.
    const billed = Math.max(1, Math.ceil(audio.seconds - 1e-9));
    const price = services.engines.price('transcription', request.model);
    const run = await Run.open(services, call, { key, price, input: new AudioSeconds(billed), maxOutputTokens: 0 });
    const ran = await consume(run, run.signal, async () => {
      const heard = await provider.transcribe(request, audio, run.signal);
      run.report({ inputTokens: 0, outputTokens: 0 }, (billed * price.inputPerMTok) / 1_000_000);
      return heard;
    });
    if (!ran) return null;
    const svc = fromMicro(ran.credits);
    const heard = ran.value;
    let formatted: Formatted;
    if (heard.kind === 'segments') formatted = await formatTranscript(request, heard, audio.seconds, billed);
    else if (heard.kind === 'json') formatted = { json: heard.body };
    else formatted = { text: heard.text };
    return 'json' in formatted ? { json: { ...formatted.json, svc }, svc } : { text: formatted.text, svc };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
