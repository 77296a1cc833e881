// Images through the upstream (UPSTREAM_IMAGES=upstream): POST {base}/images/generations
// as JSON, {base}/images/edits and {base}/images/variations as multipart forms, on the
// provider's own connection pool, retries and timeouts (transport.ts). The upstream gets
// the fields the client sent as they were sent, but `model`, which is the configured
// UPSTREAM_IMAGE_MODEL (the request's is without effect), and `response_format`, which is
// without effect here too: the upstream's own default answers, and a `url` it returns is
// passed through. The answer's first image is read (n is 1), and its usage when given.
import { randomBytes } from 'node:crypto';
import { ProviderError, type ImageRequest, type ImageResult } from '../../types.ts';
import type { UpstreamConfig } from './config.ts';
import type { Tell } from './json-call.ts';
import { answerError, errorInPayload, isRecord } from './errors.ts';
import { RawBody, UpstreamCall, type TransportOptions, type UpstreamTarget } from './transport.ts';

/** The largest answer read: a base64 image of 3840 x 2160 PNG fits well within it. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

const PATHS = { generation: '/images/generations', edit: '/images/edits', variation: '/images/variations' } as const;
const MIME = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' } as const;

const invalid = (what: string) => new ProviderError(`upstream sent an invalid images answer: ${what}`, undefined, false);

export interface UpstreamImagesDeps {
  config: UpstreamConfig;
  target: UpstreamTarget;
  transport: TransportOptions;
  tell: Tell;
}

/** What the upstream receives: the client's fields, the configured model. */
export function upstreamFields(request: ImageRequest, model: string): Record<string, string | number | boolean> {
  return { ...request.fields, model };
}

/** A multipart form of the fields and the image (edits, variations). */
export function multipartOf(fields: Record<string, string | number | boolean>, image: NonNullable<ImageRequest['image']>): RawBody {
  const boundary = `----agent-api-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  const quote = (s: string) => s.replace(/[\r\n"\\]/g, '_');
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${String(value)}\r\n`));
  }
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="${quote(image.filename || `image.${image.format}`)}"\r\nContent-Type: ${MIME[image.format]}\r\n\r\n`));
  parts.push(image.bytes, Buffer.from(`\r\n--${boundary}--\r\n`));
  return new RawBody(Buffer.concat(parts), `multipart/form-data; boundary=${boundary}`);
}

const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

/** The first image of the upstream's answer, and its usage when given. */
export function readImagesAnswer(payload: unknown, target: UpstreamTarget): ImageResult {
  const error = errorInPayload(payload);
  if (error) throw answerError(error, target.scrubber, 'in its answer');
  if (!isRecord(payload) || !Array.isArray(payload.data) || payload.data.length === 0) throw invalid('no image in data');
  const first = payload.data[0];
  if (!isRecord(first)) throw invalid('an image that is not an object');
  let image: ImageResult['image'];
  if (typeof first.b64_json === 'string' && first.b64_json.length > 0) image = { b64: first.b64_json };
  else if (typeof first.url === 'string' && /^(https?:|data:)/.test(first.url)) image = { url: first.url };
  else throw invalid('an image with neither b64_json nor a url');
  const result: ImageResult = { image };
  if (typeof first.revised_prompt === 'string') result.revisedPrompt = first.revised_prompt;
  const format = payload.output_format;
  if (format === 'png' || format === 'jpeg' || format === 'webp') result.format = format;
  const usage = isRecord(payload.usage) ? payload.usage : undefined;
  const input = count(usage?.input_tokens);
  const output = count(usage?.output_tokens);
  if (usage && input !== undefined && output !== undefined) {
    const details = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
    result.usage = { inputTokens: input, outputTokens: output, textTokens: count(details.text_tokens) ?? input, imageTokens: count(details.image_tokens) ?? 0 };
  }
  return result;
}

export async function upstreamImage(deps: UpstreamImagesDeps, request: ImageRequest, signal: AbortSignal): Promise<ImageResult> {
  signal.throwIfAborted();
  const model = deps.config.imageModel;
  const fields = upstreamFields(request, model);
  const body = request.operation === 'generation' ? fields : multipartOf(fields, request.image!);
  const call = new UpstreamCall(deps.config, deps.target, signal, deps.transport);
  const startedAt = performance.now();
  let firstByteAt: number | undefined;
  let finished = false;
  let thrown: unknown;
  try {
    const opened = await call.open(PATHS[request.operation], body, false);
    firstByteAt = performance.now();
    const chunks: Uint8Array[] = [opened.first];
    let bytes = opened.first.byteLength;
    for (let chunk = await call.read(); chunk; chunk = await call.read()) {
      bytes += chunk.byteLength;
      if (bytes > MAX_ANSWER_BYTES) throw invalid(`an answer over ${MAX_ANSWER_BYTES} bytes`);
      chunks.push(chunk);
    }
    finished = true;
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw invalid('not JSON');
    }
    return readImagesAnswer(payload, deps.target);
  } catch (err) {
    thrown = call.explain(err);
    throw thrown;
  } finally {
    call.close(finished);
    deps.tell(call, 'images', model, request.requestId, startedAt, firstByteAt, finished && thrown === undefined, thrown);
  }
}
