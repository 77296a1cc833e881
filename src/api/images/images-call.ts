// One image request, whoever asked: POST /images/generations, /images/edits,
// /images/variations (routes.ts), or the image_generation tool of /responses. The
// upload (edits, variations) is read and judged before anything is held: its format from
// its first bytes (PNG, JPEG, WebP or GIF), its dimensions from its header (at most 50
// megapixels), so a file that is not such an image is a 400 naming `image` with nothing
// charged. Then a Run holds the image's price (IMAGE_PRICE_* by quality, in proportion to
// the pixels), the engine (offline, or the upstream's /images/*) makes it, and the Run
// settles at that price with the engine's tokens. The body is the reference's
// ImagesResponse with `svc`.
import { fromMicro } from '../../accounts/money.ts';
import type { createImage, createImageEdit, createImageVariation } from '../../contract/endpoints/images.ts';
import type { UploadedFile } from '../../contract/form.ts';
import type { BodyOf } from '../../contract/types.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import { invalidRequest } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { Call } from '../../pipeline/call.ts';
import { IMAGE_ENGINE } from '../../providers/engines.ts';
import { readImageHeader } from '../../providers/inline/images/offline-images.ts';
import { DEFAULT_SIZE, fitWithin, parseSize } from '../../providers/inline/images/sizes.ts';
import { sniffImage } from '../../providers/inline/moderation/image-worker.ts';
import { ImageUnreadable, type ImageQuality, type ImageRequest, type ImageResult } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { consume } from '../stream-answer.ts';

export type GenerationBody = BodyOf<typeof createImage>;
export type EditBody = BodyOf<typeof createImageEdit>;
export type VariationBody = BodyOf<typeof createImageVariation>;

/** Fields without effect: never passed to an engine (an upstream gets its own model). */
const WITHOUT_EFFECT = new Set(['model', 'response_format', 'image']);

/** An upload's bytes, read from the blob store (at most the contract's 8 MB). */
async function readUpload(services: Services, file: UploadedFile): Promise<Buffer> {
  const stream = await services.blobs.get(file.blob.key);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The upload judged by its content: a PNG, JPEG, WebP or GIF whose header reads, or a 400 naming `image`. */
export async function readImageUpload(services: Services, file: UploadedFile): Promise<NonNullable<ImageRequest['image']>> {
  const bytes = await readUpload(services, file);
  const format = sniffImage(bytes.subarray(0, 16));
  if (!format) throw invalidRequest('The image could not be read: it is not a PNG, JPEG, WebP or GIF image.', 'image');
  try {
    const { width, height } = await readImageHeader(bytes);
    return { bytes, filename: file.filename, format, width, height };
  } catch (err) {
    if (err instanceof ImageUnreadable) throw invalidRequest(`The image could not be read: ${err.message}`, 'image');
    throw err;
  }
}

/** The fields an engine may pass on (an upstream): as the client sent them, but those without effect. */
function sentFields(body: Record<string, unknown>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(body)) {
    if (WITHOUT_EFFECT.has(name) || value === undefined || value === null) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[name] = value;
  }
  return out;
}

/** USD for one image at this quality and pixel size (IMAGE_PRICE_* is per 1024 x 1024). */
export function imagePriceUsd(services: Services, quality: ImageQuality, width: number, height: number): number {
  return (services.config.imagePrices[quality] * width * height) / (1024 * 1024);
}

export interface ImageAsked {
  operation: ImageRequest['operation'];
  prompt?: string;
  size?: string | null;
  quality?: ImageQuality | null;
  image?: NonNullable<ImageRequest['image']>;
  /** The body as sent (what an upstream receives). */
  body: Record<string, unknown>;
}

/** The ImagesResponse of an engine's result. */
export function imagesResponse(result: ImageResult, credits: number, offline: boolean) {
  const item: Record<string, string> = 'b64' in result.image ? { b64_json: result.image.b64 } : { url: result.image.url };
  if (result.revisedPrompt !== undefined) item.revised_prompt = result.revisedPrompt;
  return {
    created: Math.floor(Date.now() / 1000),
    data: [item],
    ...(offline ? { background: 'opaque' as const } : {}),
    ...(result.format ? { output_format: result.format } : {}),
    ...(result.usage
      ? {
          usage: {
            input_tokens: result.usage.inputTokens,
            output_tokens: result.usage.outputTokens,
            total_tokens: result.usage.inputTokens + result.usage.outputTokens,
            input_tokens_details: { text_tokens: result.usage.textTokens, image_tokens: result.usage.imageTokens },
          },
        }
      : {}),
    svc: fromMicro(credits),
  };
}

/**
 * Makes one image: the Run holds its price first, the engine makes it, the Run settles.
 * Null when the caller went away before the end.
 */
export async function makeImage(services: Services, call: Call, key: KeyRecord, asked: ImageAsked): Promise<{ result: ImageResult; credits: number } | null> {
  const size = parseSize(asked.size);
  if (size === null) throw invalidRequest('size is auto or WIDTHxHEIGHT within the limits.', 'size');
  const quality = asked.quality ?? 'standard';
  const engine = services.engines.for('images', IMAGE_ENGINE);
  // The pixels charged for: the size asked, or what `auto` makes (1024 x 1024, or the upload's size within the limits).
  const pixels = size !== 'auto' ? size : asked.image ? fitWithin(asked.image.width, asked.image.height) : DEFAULT_SIZE;
  const usd = imagePriceUsd(services, quality, pixels.width, pixels.height);
  const request: ImageRequest = {
    operation: asked.operation,
    size,
    quality,
    fields: sentFields(asked.body),
    requestId: call.id,
    ...(asked.prompt !== undefined ? { prompt: asked.prompt } : {}),
    ...(asked.image ? { image: asked.image } : {}),
  };
  // One "output token" at the image's price: the reservation is exactly the image's price.
  const run = await Run.open(services, call, { key, price: { inputPerMTok: 0, outputPerMTok: usd * 1_000_000 }, input: estimateInputTokens(asked.prompt ?? '', 0), maxOutputTokens: 1 });
  const ran = await consume(run, run.signal, async () => {
    let result: ImageResult;
    try {
      result = await engine.create(request, run.signal);
    } catch (err) {
      if (err instanceof ImageUnreadable) throw invalidRequest(`The image could not be read: ${err.message}`, 'image');
      throw err;
    }
    run.report({ inputTokens: result.usage?.inputTokens ?? 0, outputTokens: result.usage?.outputTokens ?? 0 }, usd);
    return result;
  });
  if (!ran) return null;
  return { result: ran.value, credits: ran.credits };
}

/** One of the three endpoints: the body checked by the contract, read, made, answered. */
export async function createImages(services: Services, call: Call, key: KeyRecord, operation: ImageRequest['operation'], body: Record<string, unknown>) {
  const image = operation === 'generation' ? undefined : await readImageUpload(services, body.image as UploadedFile);
  const made = await makeImage(services, call, key, {
    operation,
    body,
    ...(typeof body.prompt === 'string' ? { prompt: body.prompt } : {}),
    size: (body.size as string | null | undefined) ?? null,
    quality: (body.quality as ImageQuality | null | undefined) ?? null,
    ...(image ? { image } : {}),
  });
  if (!made) return null;
  return imagesResponse(made.result, made.credits, services.engines.for('images', IMAGE_ENGINE).name === 'offline');
}
