// Image sizes: `size` is WIDTHxHEIGHT (or `auto`) and the offline engine draws at exactly
// that size. The bounds are the reference's largest (3840 x 2160's pixels, 3840 a side)
// and 16 pixels a side; an upload may have up to 50 megapixels (read from its header
// before anything is decoded).

export const MIN_SIDE = 16;
export const MAX_SIDE = 3840;
export const MAX_PIXELS = 3840 * 2160;
/** What `auto` draws a generation at. */
export const DEFAULT_SIZE = { width: 1024, height: 1024 } as const;
/** Pixels an uploaded image may have (checked from its header first). */
export const MAX_INPUT_PIXELS = 50_000_000;

const SIZE = /^(\d{2,5})x(\d{2,5})$/;

/** The size asked for, `auto`, or null when it is outside the bounds. */
export function parseSize(size: string | null | undefined): { width: number; height: number } | 'auto' | null {
  if (size === undefined || size === null || size === 'auto') return 'auto';
  const m = SIZE.exec(size);
  if (!m) return null;
  const width = Number(m[1]);
  const height = Number(m[2]);
  if (width < MIN_SIDE || height < MIN_SIDE || width > MAX_SIDE || height > MAX_SIDE || width * height > MAX_PIXELS) return null;
  return { width, height };
}

/** An input's size brought within the bounds, its aspect ratio kept (what `auto` makes of an upload). */
export function fitWithin(width: number, height: number): { width: number; height: number } {
  let scale = Math.min(1, MAX_SIDE / width, MAX_SIDE / height, Math.sqrt(MAX_PIXELS / (width * height)));
  // Never below the smallest side.
  scale = Math.max(scale, MIN_SIDE / Math.min(width, height));
  return { width: Math.max(MIN_SIDE, Math.min(MAX_SIDE, Math.floor(width * scale))), height: Math.max(MIN_SIDE, Math.min(MAX_SIDE, Math.floor(height * scale))) };
}
