// Transcriptions and translations on the upstream's POST {base}/audio/transcriptions and
// /audio/translations (OpenAI, LocalAI, a speaches / faster-whisper server, vLLM): the
// upload forwarded as a multipart form with the fields the client set, under their
// reference names (`timestamp_granularities[]` once per value), the model mapped
// (UPSTREAM_TRANSCRIPTION_MODELS), and the answer taken in the format the client asked
// for: JSON checked to be a transcription object, text formats as text.
import { readFile } from 'node:fs/promises';
import type { DecodedAudio, TranscriptionRequest, TranscriptionResult } from '../../types.ts';
import { answerError, errorInPayload, isRecord } from './errors.ts';
import { invalidAnswer, upstreamBytes, type UpstreamJsonDeps } from './json-call.ts';
import { multipartForm } from './transport.ts';

/** An answer larger than this is not a transcription of 25 MB of audio. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** The upstream model behind each of our transcription ids by default: ours runs on whisper-1, the rest under their own names. */
export const DEFAULT_TRANSCRIPTION_MODELS: Readonly<Record<string, string>> = { 'agent-transcribe': 'whisper-1' };

/** The form's text fields, in the order sent. */
export function formFields(upstreamModel: string, request: TranscriptionRequest): [string, string][] {
  const fields: [string, string][] = [['model', upstreamModel]];
  if (request.task === 'transcribe' && request.language !== undefined) fields.push(['language', request.language]);
  if (request.prompt !== undefined) fields.push(['prompt', request.prompt]);
  fields.push(['response_format', request.responseFormat]);
  if (request.temperature !== undefined) fields.push(['temperature', String(request.temperature)]);
  if (request.task === 'transcribe') for (const g of request.timestampGranularities ?? []) fields.push(['timestamp_granularities[]', g]);
  return fields;
}

export async function upstreamTranscribe(
  deps: UpstreamJsonDeps,
  upstreamModel: string,
  request: TranscriptionRequest,
  audio: DecodedAudio,
  signal: AbortSignal,
): Promise<TranscriptionResult> {
  signal.throwIfAborted();
  const body = multipartForm(formFields(upstreamModel, request), { field: 'file', filename: request.filename || 'audio', contentType: request.contentType, bytes: await readFile(audio.inputPath) });
  const operation = request.task === 'transcribe' ? 'transcription' : 'translation';
  const path = request.task === 'transcribe' ? '/audio/transcriptions' : '/audio/translations';
  const answer = await upstreamBytes(deps, { path, body, model: upstreamModel, operation, requestId: request.requestId, maxBytes: MAX_ANSWER_BYTES, what: operation }, signal);
  const text = answer.bytes.toString('utf8');
  if (request.responseFormat !== 'json' && request.responseFormat !== 'verbose_json') {
    // A text format; a JSON error object in its place is still an error.
    if (answer.contentType.includes('application/json')) {
      let payload: unknown;
      try {
        payload = JSON.parse(text);
      } catch {
        payload = undefined;
      }
      const error = errorInPayload(payload);
      if (error) throw answerError(error, deps.target.scrubber, 'in its answer');
    }
    return { kind: 'text', text };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    throw invalidAnswer(operation, 'not JSON');
  }
  const error = errorInPayload(payload);
  if (error) throw answerError(error, deps.target.scrubber, 'in its answer');
  if (!isRecord(payload) || typeof payload.text !== 'string') throw invalidAnswer(operation, 'no text');
  return { kind: 'json', body: payload };
}
