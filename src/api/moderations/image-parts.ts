// Image parts to moderate, read before anything runs: a `data:` URL (base64) or an https
// address fetched through the outbound guard (services.outbound: never fetch() here),
// its bytes sniffed (PNG, JPEG, WebP, GIF), then handed to the moderation engine's
// prepareImage (the offline engine decodes on its worker threads). Whatever cannot be
// read is a 400 invalid_request_error naming the part (`input[1].image_url`,
// `messages[0].content[2].image_url`), before a Run opens: nothing held, nothing charged.
//
// The event loop touches little of an image: a data URL's header and first characters
// here; its base64 text is copied out of the JSON string 1 MiB a turn (a 20 MB string
// copied at once holds the loop about 10 ms) and decoded on a worker. One cost remains:
// a long string arrives from the JSON reader as a rope (pipeline/json/pieces.ts), and the
// first look at its characters makes V8 flatten it, a copy of the whole string in one
// step: measured here about 0.7 ms a MB (8-10 ms for 14 MB; the default body limit,
// 10 MB, bounds a data URL to about 7 ms).
import { STATUS_CODES } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ApiError, invalidRequest } from '../../errors.ts';
import { OutboundRefused, OutboundTooLarge } from '../../outbound/guard.ts';
import { sniffImage } from '../../providers/inline/moderation/image-worker.ts';
import { ImageUnreadable, type ImageBytes, type ModerationProvider, type PreparedImage } from '../../providers/types.ts';
import type { Services } from '../../services.ts';

/** One image part: its URL and the parameter that names it. */
export interface ImagePart {
  url: string;
  param: string;
}

/** Image parts one request may carry. */
export const MAX_IMAGE_PARTS = 16;
/** Bytes an image fetched from an https address may have (a data URL is bounded by the contract's 20 MB string). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** How long fetching an image may take, redirects included. */
export const IMAGE_FETCH_TIMEOUT_MS = 15_000;

const SLICE_CHARS = 1024 * 1024;
const USER_AGENT = 'agent-api/0.1 (+moderations)';
const ACCEPT = 'image/png, image/jpeg, image/webp, image/gif;q=0.9, */*;q=0.1';

/** The refusal of a part (its reason in our words). */
const refused = (part: ImagePart, reason: string) => invalidRequest(`The image cannot be moderated: ${reason}`, part.param);

/**
 * Each part read and prepared by the engine (its prepareImage), in order; the first part (in order) that
 * cannot be read is the 400. Rejects with the signal's reason when it aborts.
 */
export async function prepareImageParts(services: Services, prepare: NonNullable<ModerationProvider['prepareImage']>, parts: readonly ImagePart[], signal: AbortSignal): Promise<PreparedImage[]> {
  const settled = await Promise.allSettled(
    parts.map(async (part) => {
      const image = await readPart(services, part, signal);
      try {
        return await prepare(image, signal);
      } catch (err) {
        if (err instanceof ImageUnreadable) throw refused(part, err.message);
        throw err;
      }
    }),
  );
  signal.throwIfAborted();
  const out: PreparedImage[] = [];
  for (const s of settled) {
    if (s.status === 'rejected') throw s.reason;
    out.push(s.value);
  }
  return out;
}

/** Refuses a request with more image parts than one may carry, naming the first one too many. */
export function checkImageCount(parts: readonly ImagePart[]): void {
  if (parts.length > MAX_IMAGE_PARTS) throw invalidRequest(`At most ${MAX_IMAGE_PARTS} images are moderated in one request; this one has ${parts.length}.`, parts[MAX_IMAGE_PARTS]!.param);
}

async function readPart(services: Services, part: ImagePart, signal: AbortSignal): Promise<ImageBytes> {
  if (/^data:/i.test(part.url)) return readDataUrl(part);
  return fetchImage(services, part, signal);
}

/** A data URL's base64 text, its first bytes checked, copied out a slice a turn. */
async function readDataUrl(part: ImagePart): Promise<ImageBytes> {
  const url = part.url;
  const comma = url.indexOf(',', 0);
  // The media type and parameters are short; a comma far away is not a data URL's.
  if (comma === -1 || comma > 256) throw refused(part, 'the data URL has no comma after its media type (data:image/png;base64,...).');
  const params = url.slice(5, comma).toLowerCase().split(';').map((p) => p.trim());
  const type = params[0] ?? '';
  if (type !== '' && !type.startsWith('image/') && type !== 'application/octet-stream') throw refused(part, `a data URL of type ${type.slice(0, 60)} is not an image.`);
  if (!params.includes('base64')) throw refused(part, 'an image data URL must be base64-encoded (data:image/png;base64,...).');
  const head = Buffer.from(url.slice(comma + 1, comma + 1 + 24).replace(/\s+/g, ''), 'base64');
  if (!sniffImage(head)) throw refused(part, 'it is not a PNG, JPEG, WebP or GIF image.');
  const length = url.length - comma - 1;
  const base64 = Buffer.allocUnsafeSlow(length);
  for (let at = 0; at < length; at += SLICE_CHARS) {
    if (at > 0) await nextTurn();
    base64.write(url.slice(comma + 1 + at, comma + 1 + Math.min(length, at + SLICE_CHARS)), at, 'latin1');
  }
  return { base64 };
}

/** An https image fetched through the outbound guard, capped in bytes and time. */
async function fetchImage(services: Services, part: ImagePart, signal: AbortSignal): Promise<ImageBytes> {
  let res: Awaited<ReturnType<Services['outbound']['fetch']>>;
  try {
    res = await services.outbound.fetch(part.url, { signal, maxBytes: MAX_IMAGE_BYTES, timeoutMs: IMAGE_FETCH_TIMEOUT_MS, maxRedirects: 5, headers: { 'user-agent': USER_AGENT, accept: ACCEPT } });
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw fetchFailure(part, err);
  }
  if (res.status < 200 || res.status > 299) throw refused(part, `its address answered ${res.status}${STATUS_CODES[res.status] ? ` ${STATUS_CODES[res.status]}` : ''}.`);
  if (!sniffImage(res.body.subarray(0, 16))) throw refused(part, 'what its address answered is not a PNG, JPEG, WebP or GIF image.');
  return { bytes: res.body };
}

/** A fetch that threw, in words the caller can act on (the guard's refusals said as they are). */
function fetchFailure(part: ImagePart, err: unknown): ApiError {
  if (err instanceof OutboundTooLarge) return refused(part, `the image is larger than ${MAX_IMAGE_BYTES / (1024 * 1024)} MB.`);
  if (err instanceof OutboundRefused) return refused(part, `its address cannot be fetched: ${err.message}`);
  const name = (err as { name?: unknown })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return refused(part, `its address did not answer within ${IMAGE_FETCH_TIMEOUT_MS / 1000} s.`);
  // undici's `fetch failed` carries the system error as its cause; only such a code is repeated.
  let code: unknown;
  for (let e: unknown = err, i = 0; i < 4 && e && !code; i++, e = (e as { cause?: unknown }).cause) code = (e as { code?: unknown }).code;
  return refused(part, `its address could not be reached${typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? ` (${code})` : ''}.`);
}
