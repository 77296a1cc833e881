// Image tokens as the reference counts them for its GPT image models (ImageGenUsage):
// an output image of 1024 x 1024 is 272 (low), 1056 (medium) or 4160 (high) tokens, in
// proportion to its pixels; here standard counts as medium, hd and high as high, max as
// half again. An input image counts as vision input does: 85 plus 170 per 512-pixel tile
// of the image fitted within 2048 x 2048 with its shorter side at most 768.
import type { ImageQuality } from '../../types.ts';

const OUTPUT_PER_MEGAPIXEL: Record<ImageQuality, number> = { standard: 1056, hd: 4160, high: 4160, max: 6240 };

export function imageTokens(kind: 'input' | 'output', width: number, height: number, quality: ImageQuality): number {
  if (kind === 'output') return Math.max(1, Math.round((OUTPUT_PER_MEGAPIXEL[quality] * width * height) / (1024 * 1024)));
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shorter = Math.min(w, h);
  if (shorter > 768) {
    w *= 768 / shorter;
    h *= 768 / shorter;
  }
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}
