// POST /moderations (SPEC "Embeddings, moderations, decisions"): results in the reference format.
import { z } from 'zod';
import { applied, modelField, svcSchema } from '../fields.ts';
import { MODERATION_MODELS } from '../models.ts';
import { defineEndpoint } from '../types.ts';

/** Inputs in one request: the reference takes a list; more results than this are not one request's work. */
const MAX_INPUTS = 2_048;

const moderationInputSchema = z.union([
  z.string(),
  z.array(z.string()).min(1, 'send at least one input').max(MAX_INPUTS, `at most ${MAX_INPUTS} inputs`),
  z
    .array(
      z.discriminatedUnion('type', [
        z.object({ type: z.literal('text'), text: z.string() }),
        z.object({ type: z.literal('image_url'), image_url: z.object({ url: z.string().max(20 * 1024 * 1024) }) }),
      ]),
    )
    .min(1, 'send at least one part')
    .max(MAX_INPUTS, `at most ${MAX_INPUTS} parts`),
]);

/** The reference's 13 moderation categories (every result scores each). */
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/instructions',
  'self-harm/intent',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

const perCategory = (value: z.ZodType) => z.looseObject(Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, value])));

export const moderationResultSchema = z
  .looseObject({
    flagged: z.boolean(),
    // `illicit` and `illicit/violent` may be null on text-moderation models.
    categories: perCategory(z.boolean().nullable()),
    category_scores: perCategory(z.number()),
    category_applied_input_types: perCategory(z.array(z.enum(['text', 'image']))).optional(),
  })
  .meta({ id: 'ModerationResult' });

export const createModerationResponseSchema = z
  .looseObject({ id: z.string(), model: z.string(), results: z.array(moderationResultSchema), svc: svcSchema })
  .meta({ id: 'CreateModerationResponse' });

export const createModeration = defineEndpoint({
  operationId: 'createModeration',
  method: 'POST',
  path: '/moderations',
  family: 'moderations',
  summary: 'Classifies text (and images) against the moderation categories.',
  // No switch, as in the reference: any key may moderate (the Moderate requests switch moderates a key's own model input).
  body: {
    type: 'json',
    required: ['input'],
    fields: {
      input: applied(
        moderationInputSchema,
        'a text or a list of texts (one result each), or a list of text and image_url parts (one result for them all); an image_url is a base64 data URL or an https address (fetched through the outbound guard, at most 20 MB), a PNG, JPEG, WebP or GIF of at most 50 megapixels, at most 16 images a request; one that cannot be fetched or read is a 400 naming the part; text-moderation-* models refuse image parts',
      ),
      model: modelField(MODERATION_MODELS, 'default omni-moderation-latest; text-moderation-* score text only'),
    },
  },
  notes: [
    'The offline engine scores text with readable weighted rules per category (negations and harmless idioms such as "kill the process" taken into account); a category is flagged at its threshold (MODERATION_THRESHOLD, MODERATION_THRESHOLDS). Every result scores all 13 categories.',
    "Images are scored by a packaged classifier (nsfwjs's MobileNetV2, run offline) on `sexual` only: its Porn and Hentai probabilities plus 0.4 of its Sexy one (suggestive alone stays under the default threshold); `sexual/minors` is never inferred from an image. A category's score is the highest of the text and images that scored it, and `category_applied_input_types` lists exactly those input types (`sexual` of a text-and-image input: text and image; of an image alone: image; the other categories: text, or none).",
  ],
  response: { schema: createModerationResponseSchema },
  billable: true,
});

export const moderationsEndpoints = [createModeration];
