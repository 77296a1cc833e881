// Images through the upstream (UPSTREAM_IMAGES=upstream): POST {base}/images/generations
// as JSON, {base}/images/edits and {base}/images/variations as multipart forms, on the
// provider's own connection pool, retries and timeouts (transport.ts). The upstream gets
// the fields the client sent as they were sent, but `model`, which is the configured
// UPSTREAM_IMAGE_MODEL (the request's is without effect), and `response_format`, which is
// without effect here too: the upstream's own default answers, and a `url` it returns is
// passed through. The answer's first image is read (n is 1), and its usage when given.
import type { ImageRequest, ImageResult } from '../../types.ts';
import { invalidAnswer, upstreamJson, type UpstreamJsonDeps } from './json-call.ts';
import { answerError, errorInPayload, isRecord } from './errors.ts';
import { multipartForm, type RawBody, type UpstreamTarget } from './transport.ts';

/** The largest answer read: a base64 image of 3840 x 2160 PNG fits well within it. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

const PATHS = { generation: '/images/generations', edit: '/images/edits', variation: '/images/variations' } as const;
const MIME = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' } as const;

const invalid = (why: string) => invalidAnswer('images', why);

/** What the upstream receives: the client's fields, the configured model. */
export function upstreamFields(request: ImageRequest, model: string): Record<string, string | number | boolean> {
  return { ...request.fields, model };
}

/** A multipart form of the fields and the image (edits, variations). */
export function multipartOf(fields: Record<string, string | number | boolean>, image: NonNullable<ImageRequest['image']>): RawBody {
  const text = Object.entries(fields).map(([name, value]) => [name, String(value)] as const);
  return multipartForm(text, { field: 'image', filename: image.filename || `image.${image.format}`, contentType: MIME[image.format], bytes: image.bytes });
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

export async function upstreamImage(deps: UpstreamJsonDeps, request: ImageRequest, signal: AbortSignal): Promise<ImageResult> {
  const model = deps.config.imageModel;
  const fields = upstreamFields(request, model);
  const body = request.operation === 'generation' ? fields : multipartOf(fields, request.image!);
  const payload = await upstreamJson(deps, { path: PATHS[request.operation], body, model, operation: 'images', requestId: request.requestId, maxBytes: MAX_ANSWER_BYTES, what: 'images' }, signal);
  return readImagesAnswer(payload, deps.target);
}
