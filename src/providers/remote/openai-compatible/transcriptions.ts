// Transcriptions and translations on the upstream's POST {base}/audio/transcriptions and
// /audio/translations (OpenAI, LocalAI, a speaches / faster-whisper server, vLLM): the
// upload forwarded as a multipart form with the fields the client set, under their
// reference names (`timestamp_granularities[]` once per value), the model mapped
// (UPSTREAM_TRANSCRIPTION_MODELS), and the answer taken in the format the client asked
// for: JSON checked to be a transcription object, text formats as text.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { DecodedAudio, TranscriptionRequest, TranscriptionResult } from '../../types.ts';
import { answerError, errorInPayload, isRecord } from './errors.ts';
import { invalidAnswer, type UpstreamJsonDeps } from './json-call.ts';
import { RawBody, UpstreamCall } from './transport.ts';

/** An answer larger than this is not a transcription of 25 MB of audio. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** The upstream model behind each of our transcription ids by default: ours runs on whisper-1, the rest under their own names. */
export const DEFAULT_TRANSCRIPTION_MODELS: Readonly<Record<string, string>> = { 'agent-transcribe': 'whisper-1' };

/** A header parameter's value: quotes and line breaks cannot end the header early. */
const quoted = (s: string) => s.replace(/[\r\n"\\]/g, (c) => (c === '"' ? '%22' : c === '\\' ? '\\\\' : ' '));

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

export function multipartBody(fields: [string, string][], file: { filename: string; contentType: string; bytes: Buffer }): RawBody {
  const boundary = `----agent-api-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`));
  }
  const type = /^[\w.+-]+\/[\w.+-]+$/.test(file.contentType) ? file.contentType : 'application/octet-stream';
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(file.filename || 'audio')}"\r\nContent-Type: ${type}\r\n\r\n`));
  parts.push(file.bytes, Buffer.from(`\r\n--${boundary}--\r\n`));
  return new RawBody(Buffer.concat(parts), `multipart/form-data; boundary=${boundary}`);
}

export async function upstreamTranscribe(
  deps: UpstreamJsonDeps,
  upstreamModel: string,
  request: TranscriptionRequest,
  audio: DecodedAudio,
  signal: AbortSignal,
): Promise<TranscriptionResult> {
  signal.throwIfAborted();
  const body = multipartBody(formFields(upstreamModel, request), { filename: request.filename, contentType: request.contentType, bytes: await readFile(audio.inputPath) });
  const operation = request.task === 'transcribe' ? 'transcription' : 'translation';
  const path = request.task === 'transcribe' ? '/audio/transcriptions' : '/audio/translations';
  const call = new UpstreamCall(deps.config, deps.target, signal, deps.transport);
  const startedAt = performance.now();
  let firstByteAt: number | undefined;
  let finished = false;
  let thrown: unknown;
  try {
    const opened = await call.open(path, body, false);
    firstByteAt = performance.now();
    const chunks: Uint8Array[] = [opened.first];
    let bytes = opened.first.byteLength;
    for (let chunk = await call.read(); chunk; chunk = await call.read()) {
      bytes += chunk.byteLength;
      if (bytes > MAX_ANSWER_BYTES) throw invalidAnswer(operation, `an answer over ${MAX_ANSWER_BYTES} bytes`);
      chunks.push(chunk);
    }
    finished = true;
    const text = Buffer.concat(chunks).toString('utf8');
    if (request.responseFormat !== 'json' && request.responseFormat !== 'verbose_json') {
      // A text format; a JSON error object in its place is still an error.
      if (opened.contentType.includes('application/json')) {
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
  } catch (err) {
    thrown = call.explain(err);
    throw thrown;
  } finally {
    call.close(finished);
    deps.tell(call, operation, upstreamModel, request.requestId, startedAt, firstByteAt, finished && thrown === undefined, thrown);
  }
}
