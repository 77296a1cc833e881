// POST /moderations (SPEC "Embeddings, moderations, decisions"): results in the reference format.
import { z } from 'zod';
import { applied, modelField, svcSchema } from '../fields.ts';
import { MODERATION_MODELS } from '../models.ts';
import { defineEndpoint } from '../types.ts';

const moderationInputSchema = z.union([
  z.string(),
  z.array(z.string()),
  z.array(
    z.discriminatedUnion('type', [
      z.object({ type: z.literal('text'), text: z.string() }),
      z.object({ type: z.literal('image_url'), image_url: z.object({ url: z.string() }) }),
    ]),
  ),
]);

const CATEGORIES = [
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

const perCategory = (value: z.ZodType) => z.looseObject(Object.fromEntries(CATEGORIES.map((c) => [c, value])));

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
  permission: 'moderate',
  body: {
    type: 'json',
    required: ['input'],
    fields: {
      input: applied(moderationInputSchema, 'text, a list of texts, or text and image_url parts'),
      model: modelField(MODERATION_MODELS, 'default omni-moderation-latest'),
    },
  },
  response: { schema: createModerationResponseSchema },
  billable: true,
});

export const moderationsEndpoints = [createModeration];
