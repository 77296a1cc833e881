// The offline image engine. No text-to-image model runs offline (none ships inside a
// package); this engine draws what it reads in the prompt (scene.ts: colours, objects,
// counts, the setting) as SVG (draw.ts) and renders it with resvg (@resvg/resvg-js, a
// prebuilt binary inside the package) at exactly the size asked. Edits and variations
// transform the uploaded image with sharp (libvips, prebuilt): recomposed to the size
// asked, recoloured toward the prompt's colours, the prompt's objects drawn over it.
// Everything is seeded by the request (prompt, size, quality, the image's bytes), never
// the clock: the same request gives the same bytes. Rendering and image work run on
// libuv's thread pool (resvg's renderAsync, sharp), off the event loop.
import { createHash } from 'node:crypto';
import { renderAsync } from '@resvg/resvg-js';
import sharp from 'sharp';
type Metadata = import('sharp').Metadata;
type OverlayOptions = import('sharp').OverlayOptions;
import { countTokensAsync } from '../../../text/tokenizer.ts';
import { ImageUnreadable, type ImageProvider, type ImageRequest, type ImageResult } from '../../types.ts';
import { mulberry32 } from '../offline/rng.ts';
import { drawScene, mix, seedOf } from './draw.ts';
import { readScene, type Scene } from './scene.ts';
import { DEFAULT_SIZE, fitWithin, MAX_INPUT_PIXELS } from './sizes.ts';
import { imageTokens } from './tokens.ts';

/** A seed's hex digest of the bytes of an upload (variations have no prompt: the image seeds them). */
const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The SVG rendered as PNG at its own size, no system fonts (nothing here draws text).
 * resvg rasterizes on the thread pool (renderAsync); its own PNG encoder (asPng) runs
 * on the calling thread (30 ms at 1024 x 1024, 450 ms at 3840 x 2160, measured here),
 * so the pixels are copied out (3 ms and 10 ms) and sharp encodes them on the pool.
 */
async function renderSvg(svg: string, signal: AbortSignal): Promise<Buffer> {
  // resvg's own signal parameter takes each AbortSignal once (napi-rs): a render is short, so the signal is checked around it instead.
  signal.throwIfAborted();
  const rendered = await renderAsync(svg, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false }, background: 'rgba(0,0,0,0)' });
  signal.throwIfAborted();
  return sharp(rendered.pixels, { raw: { width: rendered.width, height: rendered.height, channels: 4 } }).png().toBuffer();
}

const hexToRgb = (hex: string) => {
  const n = parseInt(hex.slice(1), 16);
  return { r: (n >> 16) & 255, g: (n >> 8) & 255, b: n & 255 };
};

/** The colour an edit recolours toward: the background named, else the first colour named. */
function recolourOf(scene: Scene): string | undefined {
  return scene.background ?? scene.colours[0] ?? (scene.objects.length === 0 ? undefined : undefined);
}

/** Reads an upload's header: its size within MAX_INPUT_PIXELS, or ImageUnreadable. */
export async function readImageHeader(bytes: Buffer): Promise<{ width: number; height: number }> {
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false, pages: 1 }).metadata();
  } catch {
    throw new ImageUnreadable('it cannot be read as an image.');
  }
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  if (!width || !height) throw new ImageUnreadable('it has no dimensions.');
  if (width * height > MAX_INPUT_PIXELS) throw new ImageUnreadable(`it has ${width} x ${height} pixels, more than ${MAX_INPUT_PIXELS / 1_000_000} megapixels.`);
  return { width, height };
}

async function generate(request: ImageRequest, signal: AbortSignal): Promise<Buffer> {
  const { width, height } = request.size === 'auto' ? DEFAULT_SIZE : request.size;
  const prompt = request.prompt ?? '';
  const scene = readScene(prompt);
  const svg = drawScene(scene, { width, height, quality: request.quality, seed: seedOf('generation', prompt, width, height, request.quality) });
  return renderSvg(svg, signal);
}

/**
 * An edit or a variation in one sharp pipeline, so no decoded copy of the upload comes
 * back to JavaScript: decoded (first frame, turned by EXIF, on white), cropped (a
 * variation: a seeded part of it, maybe mirrored), resized to cover the size asked, its
 * hues turned when nothing is named to recolour toward (a variation always), then the
 * colour washes and the prompt's objects (resvg, transparent) composited over it.
 */
async function transform(request: ImageRequest, signal: AbortSignal): Promise<{ png: Buffer; width: number; height: number }> {
  const image = request.image!;
  const { width, height } = request.size === 'auto' ? fitWithin(image.width, image.height) : request.size;
  const prompt = request.prompt ?? '';
  const seed = seedOf(request.operation, prompt, digest(image.bytes), width, height, request.quality);
  const rng = mulberry32(seed);
  const scene = readScene(prompt);
  const variation = request.operation === 'variation';
  const composites: OverlayOptions[] = [];
  const colour = recolourOf(scene);
  if (colour) {
    const { r, g, b } = hexToRgb(mix(colour, '#808080', 0.1));
    composites.push({ input: { create: { width, height, channels: 4, background: { r, g, b, alpha: 0.45 } } }, blend: 'soft-light' });
    composites.push({ input: { create: { width, height, channels: 4, background: { r, g, b, alpha: 0.18 } } }, blend: 'over' });
  }
  if (scene.objects.length > 0) composites.push({ input: await renderSvg(drawScene(scene, { width, height, quality: request.quality, seed, overlay: true }), signal), blend: 'over' });
  // The sizes the header gave, turned as the EXIF orientation says (what autoOrient makes).
  let img = sharp(image.bytes, { limitInputPixels: MAX_INPUT_PIXELS, pages: 1, failOn: 'error' }).autoOrient().flatten({ background: '#ffffff' });
  if (variation) {
    const size = 0.72 + rng.next() * 0.18;
    const cw = Math.max(1, Math.floor(image.width * size));
    const ch = Math.max(1, Math.floor(image.height * size));
    img = img.extract({ left: Math.floor((image.width - cw) * rng.next()), top: Math.floor((image.height - ch) * rng.next()), width: cw, height: ch });
    if (rng.next() < 0.5) img = img.flop();
  }
  img = img.resize(width, height, { fit: 'cover', position: 'centre' });
  if (variation || (!colour && scene.objects.length === 0)) {
    // Nothing named to draw or recolour toward (or a variation): the hues turn by the seed, the colours a little stronger.
    img = img.modulate({ hue: 40 + Math.floor(rng.next() * 280), saturation: 1.15, brightness: 1 });
  }
  signal.throwIfAborted();
  const png = await img.removeAlpha().composite(composites).png().toBuffer();
  return { png, width, height };
}

export function createOfflineImages(): ImageProvider {
  return {
    name: 'offline',
    async create(request, signal) {
      signal.throwIfAborted();
      let png: Buffer;
      let width: number;
      let height: number;
      if (request.operation === 'generation') {
        ({ width, height } = request.size === 'auto' ? DEFAULT_SIZE : request.size);
        png = await generate(request, signal);
      } else {
        try {
          ({ png, width, height } = await transform(request, signal));
        } catch (err) {
          if (signal.aborted) throw signal.reason;
          // libvips refusing the bytes (damaged, cut short): the caller names the upload.
          if (err instanceof Error && !(err instanceof ImageUnreadable) && /Input|VipsJpeg|vips|corrupt|premature|unsupported image format/i.test(err.message)) throw new ImageUnreadable('it cannot be decoded.');
          throw err;
        }
      }
      signal.throwIfAborted();
      const textTokens = request.prompt ? await countTokensAsync(request.prompt) : 0;
      const inputImage = request.image ? imageTokens('input', request.image.width, request.image.height, request.quality) : 0;
      const usage = { inputTokens: textTokens + inputImage, outputTokens: imageTokens('output', width, height, request.quality), textTokens, imageTokens: inputImage };
      const result: ImageResult = { image: { b64: png.toString('base64') }, format: 'png', width, height, usage };
      return result;
    },
  };
}
