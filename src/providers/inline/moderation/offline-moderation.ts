// The offline moderation engine (issue 21 items 1-2): text scored by the rules of
// text-scorer.ts, each input on its own; images by a packaged classifier (nsfwjs's
// MobileNetV2 on TensorFlow.js's wasm backend, image-worker.ts, on the worker threads
// of image-pool.ts), which scores `sexual` only. An input's category scores are the
// highest of what scored them, and `appliedTo` says which input types did.
import type { ModerationProvider, ModerationScores } from '../../types.ts';
import { MODERATION_CATEGORIES } from '../../../contract/endpoints/moderations.ts';
import { imagePool, type ImagePool } from './image-pool.ts';
import type { ClassScores } from './image-worker.ts';
import { combine, scoreText, type Fired } from './text-scorer.ts';

/** The categories an image is scored on (the others, sexual/minors among them, are scored on text only). */
export const IMAGE_CATEGORIES = ['sexual'] as const;

/**
 * An image's `sexual` score from nsfwjs's five classes (probabilities summing to 1):
 * Porn (pornographic images, sexual acts) and Hentai (pornographic drawings) are what
 * the reference's `sexual` means, content meant to arouse, so they count in full. Sexy
 * (suggestive but not explicit: swimwear, lingerie, poses) counts for 0.4: an image the
 * model is sure is only suggestive scores 0.4, under the default threshold (0.5), so it
 * is flagged only where an operator lowers `sexual`'s threshold, or where explicit
 * probability adds to it (0.15 Porn with 0.85 Sexy is 0.49; 0.2 with 0.8 is 0.52).
 * Drawing and Neutral count for nothing. `sexual/minors` is never inferred from an
 * image: the classifier cannot tell an age, and a guess would flag family photos.
 */
export function imageSexualScore(c: ClassScores): number {
  return Math.min(1, Math.max(0, c.Porn + c.Hentai + 0.4 * c.Sexy));
}

export interface OfflineModerationOptions {
  /** Image workers at most (AGENT_API_IMAGE_MODERATION_WORKERS); the pool is the process's, made on the first image. */
  imageWorkers?: number;
}

export function createOfflineModeration(options: OfflineModerationOptions = {}): ModerationProvider {
  const pool = (): ImagePool => imagePool(options.imageWorkers ? { workers: options.imageWorkers } : {});
  return {
    name: 'offline',
    prepareImage: (image, signal) => pool().decode(image, signal),
    async moderate({ inputs }, signal) {
      const out: ModerationScores[] = [];
      for (const input of inputs) {
        const fired: Fired[] = [];
        for (const text of input.texts) fired.push(...(await scoreText(text, signal)).fired);
        const scores = combine(fired);
        const why = fired.map(({ rule, category, weight, negated }) => ({ rule, category, weight, negated }));
        const hasText = input.texts.length > 0;
        const hasImage = input.images.length > 0;
        if (hasImage) {
          const prepared = input.prepared;
          if (!prepared || prepared.length !== input.images.length) throw new Error('image parts reached the offline moderation engine without being prepared (prepareImage)');
          // One at a time: the pool is shared by every request, and an input's images are few.
          for (const [i, image] of prepared.entries()) {
            const { classes } = await pool().classify(image, signal);
            const score = imageSexualScore(classes);
            scores.sexual = Math.max(scores.sexual ?? 0, score);
            why.push({ rule: `image ${i + 1}: nsfwjs ${Object.entries(classes).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}`, category: 'sexual', weight: score, negated: false });
          }
        }
        out.push({
          scores,
          appliedTo: Object.fromEntries(
            MODERATION_CATEGORIES.map((c) => [c, [...(hasText ? (['text'] as const) : []), ...(hasImage && (IMAGE_CATEGORIES as readonly string[]).includes(c) ? (['image'] as const) : [])]]),
          ),
          fired: why,
        });
      }
      return out;
    },
  };
}
