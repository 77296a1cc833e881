// The image moderation worker's entry (image-pool.ts starts it): decodes an image with
// sharp (libvips, prebuilt) and classifies it with nsfwjs (MobileNetV2, its weights
// inside the npm package) on TensorFlow.js's wasm backend (the .wasm files inside
// @tensorflow/tfjs-backend-wasm, read from disk). Nothing is fetched: no model, no
// binary. The model is loaded on the first image this worker classifies, once.
//
// A decode: a data URL's base64 text or a fetched body; the format sniffed from its
// first bytes (PNG, JPEG, WebP, GIF only: libvips reads many more, SVG and PDF among
// them, which have no business here), the header read for the dimensions (more than
// MAX_IMAGE_PIXELS refused before anything is decoded), then the first frame decoded,
// turned by its EXIF orientation, laid on white (transparency), resized to the
// model's 224 x 224 (stretched, as nsfwjs resizes) as RGB bytes.
import { createRequire } from 'node:module';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { PreparedImage } from '../../types.ts';

/** The model's input: square, this many pixels a side. */
export const MODEL_SIZE = 224;
/** Pixels an image may have (width x height), checked from its header before it is decoded: 50 megapixels (a 48 MP phone photo passes). */
export const MAX_IMAGE_PIXELS = 50_000_000;
/** The classes nsfwjs scores (its probabilities sum to 1). */
export const NSFW_CLASSES = ['Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy'] as const;
export type NsfwClass = (typeof NSFW_CLASSES)[number];
export type ClassScores = Record<NsfwClass, number>;

/** The role image-pool.ts gives its workers (this module is imported on the main thread too). */
export const IMAGE_WORKER_ROLE = 'image-moderation';

export type ImageJob =
  | { id: number; kind: 'decode'; base64?: ArrayBuffer; bytes?: ArrayBuffer }
  | { id: number; kind: 'classify'; width: number; height: number; pixels: ArrayBuffer };

export type ImageReply =
  | { id: -1; kind: 'ready' }
  | { id: number; kind: 'decoded'; width: number; height: number; pixels: ArrayBuffer }
  | { id: number; kind: 'classified'; classes: ClassScores; loadMs: number | null }
  | { id: number; kind: 'unreadable'; message: string }
  | { id: number; kind: 'failed'; message: string };

/** The formats taken, by their first bytes (what the reference takes: PNG, JPEG, WebP, GIF). */
export function sniffImage(head: Uint8Array): 'png' | 'jpeg' | 'gif' | 'webp' | null {
  const at = (i: number, ...bytes: number[]) => bytes.every((b, k) => head[i + k] === b);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'jpeg';
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return 'gif';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'webp';
  return null;
}

class Unreadable extends Error {}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

type Sharp = typeof import('sharp').default;
let sharpModule: Sharp | null = null;

async function loadSharp(): Promise<Sharp> {
  if (!sharpModule) {
    sharpModule = (await import('sharp')).default;
    // One libvips thread per image: the pool's workers are the concurrency, and the
    // event loop keeps its core. No operation cache: every image is new.
    sharpModule.concurrency(1);
    sharpModule.cache(false);
  }
  return sharpModule;
}

async function decode(job: Extract<ImageJob, { kind: 'decode' }>): Promise<PreparedImage> {
  let bytes: Buffer;
  if (job.base64) {
    // The base64 text, one byte a character (image-pool.ts copied it out of the JSON string).
    const text = Buffer.from(job.base64).toString('latin1').replace(/\s+/g, '');
    if (!BASE64.test(text) || text.length % 4 === 1) throw new Unreadable('the data URL is not valid base64.');
    bytes = Buffer.from(text, 'base64');
  } else bytes = Buffer.from(job.bytes!);
  const format = sniffImage(bytes.subarray(0, 16));
  if (!format) throw new Unreadable('it is not a PNG, JPEG, WebP or GIF image.');
  const sharp = await loadSharp();
  // failOn 'warning' (sharp's default): an image cut short or damaged is refused, not read in part.
  const options = { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'warning', pages: 1 } as const;
  let width: number | undefined;
  let height: number | undefined;
  try {
    // The header only (no pixel limit here, so absurd dimensions are said as such below).
    const meta = await sharp(bytes, { ...options, limitInputPixels: false }).metadata();
    if (meta.format !== format) throw new Unreadable(`it is not a readable ${format.toUpperCase()} image.`);
    width = meta.width;
    height = meta.pageHeight ?? meta.height;
  } catch (err) {
    if (err instanceof Unreadable) throw err;
    throw new Unreadable(`it is not a readable ${format.toUpperCase()} image: its header could not be read.`);
  }
  if (!width || !height) throw new Unreadable(`it is not a readable ${format.toUpperCase()} image: it has no dimensions.`);
  if (width * height > MAX_IMAGE_PIXELS) throw new Unreadable(`it is ${width} x ${height} pixels; at most ${MAX_IMAGE_PIXELS / 1_000_000} megapixels are read.`);
  try {
    const { data, info } = await sharp(bytes, options)
      .rotate()
      .flatten({ background: '#ffffff' })
      .resize(MODEL_SIZE, MODEL_SIZE, { fit: 'fill' })
      .toColourspace('srgb')
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3 || info.width !== MODEL_SIZE || info.height !== MODEL_SIZE) throw new Error(`decoded to ${info.width}x${info.height}x${info.channels}`);
    return { width: info.width, height: info.height, pixels: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
  } catch {
    throw new Unreadable(`it is not a readable ${format.toUpperCase()} image: it could not be decoded (damaged or cut short).`);
  }
}

// --- The classifier, loaded once on the first image

type Tf = typeof import('@tensorflow/tfjs');
type Model = Awaited<ReturnType<typeof import('nsfwjs').load>>;
let model: Promise<{ tf: Tf; model: Model; loadMs: number }> | null = null;

async function loadModel(): Promise<{ tf: Tf; model: Model; loadMs: number }> {
  const t0 = performance.now();
  const tf = await import('@tensorflow/tfjs');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  // The .wasm binaries shipped in the package, read from disk (never fetched), single-threaded.
  const require = createRequire(import.meta.url);
  wasm.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')) + path.sep);
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  if (!(await tf.setBackend('wasm'))) throw new Error('the TensorFlow.js wasm backend did not start');
  await tf.ready();
  tf.enableProdMode();
  const nsfwjs = await import('nsfwjs');
  // MobileNetV2: the model whose weights nsfwjs bundles as a module (3.5 MB); load() runs one warm-up prediction.
  const loaded = await nsfwjs.load('MobileNetV2');
  return { tf, model: loaded, loadMs: performance.now() - t0 };
}

async function classify(job: Extract<ImageJob, { kind: 'classify' }>): Promise<{ classes: ClassScores; loadMs: number | null }> {
  const first = model === null;
  model ??= loadModel();
  let m: Awaited<typeof model>;
  try {
    m = await model;
  } catch (err) {
    model = null;
    throw err;
  }
  const input = m.tf.tensor3d(new Uint8Array(job.pixels), [job.height, job.width, 3], 'int32');
  try {
    const top = await m.model.classify(input as never, NSFW_CLASSES.length);
    const classes = Object.fromEntries(NSFW_CLASSES.map((c) => [c, 0])) as ClassScores;
    for (const { className, probability } of top) if ((NSFW_CLASSES as readonly string[]).includes(className)) classes[className as NsfwClass] = probability;
    return { classes, loadMs: first ? m.loadMs : null };
  } finally {
    input.dispose();
  }
}

if (parentPort && (workerData as { role?: unknown } | null)?.role === IMAGE_WORKER_ROLE) {
  const port = parentPort;
  // TensorFlow.js and nsfwjs greet on the console (a Node backend to install, the model in use).
  console.log = console.info = console.warn = () => {};
  port.on('message', (job: ImageJob) => {
    void (async (): Promise<void> => {
      try {
        if (job.kind === 'decode') {
          const image = await decode(job);
          const pixels = image.pixels.byteOffset === 0 && image.pixels.byteLength === image.pixels.buffer.byteLength ? (image.pixels.buffer as ArrayBuffer) : new Uint8Array(image.pixels).buffer;
          port.postMessage({ id: job.id, kind: 'decoded', width: image.width, height: image.height, pixels } satisfies ImageReply, [pixels]);
        } else {
          port.postMessage({ id: job.id, kind: 'classified', ...(await classify(job)) } satisfies ImageReply);
        }
      } catch (err) {
        const reply: ImageReply =
          err instanceof Unreadable ? { id: job.id, kind: 'unreadable', message: err.message } : { id: job.id, kind: 'failed', message: err instanceof Error ? err.message : String(err) };
        port.postMessage(reply);
      }
    })();
  });
  port.postMessage({ id: -1, kind: 'ready' } satisfies ImageReply);
}
