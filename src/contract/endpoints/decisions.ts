// POST /decisions: our own endpoint (no reference counterpart). SPEC "Decision question" and the
// decisions row: 1 to 32 questions, each a predicate, a choice or a score, answered with probabilities.
import { z } from 'zod';
import { applied, modelField, svcSchema } from '../fields.ts';
import { DECISION_MODELS } from '../models.ts';
import { defineEndpoint } from '../types.ts';

const MAX_QUESTIONS = 32;
const MIN_OPTIONS = 2;
const MAX_OPTIONS = 32;

/**
 * A list whose `key` values are unique: the repeat is named at its own path
 * (`questions[3].choices[1].value`), so a client sees which entry to change.
 */
const uniqueBy = <T extends Record<K, string>, K extends string>(key: K, what: string) => (items: readonly T[], ctx: z.RefinementCtx) => {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item[key])) ctx.addIssue({ code: 'custom', message: `${what} must be unique: "${item[key].slice(0, 64)}" appears more than once`, path: [i, key] });
    seen.add(item[key]);
  });
};

/** Characters of text in a decision's input, all parts together (SPEC names no limit; a question is read against all of it). */
export const MAX_INPUT_CHARS = 1_000_000;

// --- Request --------------------------------------------------------------

const imageDataUrl = z
  .string()
  .regex(/^data:image\/[a-z0-9.+-]+;base64,/i, 'images are inline base64 data URLs (data:image/...;base64,...)');

const decisionContentPartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('input_text'), text: z.string().max(MAX_INPUT_CHARS) }),
  z.object({ type: z.literal('input_image'), image_url: imageDataUrl }),
]);

const decisionMessageSchema = z.object({
  type: z.literal('message').optional(),
  role: z.literal('user'),
  content: z.union([z.string().max(MAX_INPUT_CHARS), z.array(decisionContentPartSchema).min(1).max(64)]),
});

export const decisionInputSchema = z
  .union([z.string().min(1).max(MAX_INPUT_CHARS), z.array(decisionMessageSchema).min(1).max(64)])
  .meta({ id: 'DecisionInput' });

const questionBase = {
  name: z.string().min(1).max(64).describe('unique within the request; names the result'),
  instructions: z.string().min(1).max(4_000).describe('what to decide'),
};

const choiceOptionSchema = z.object({ value: z.string().min(1).max(256), description: z.string().max(2_000) });
const scoreLevelSchema = z.object({ label: z.string().min(1).max(256), description: z.string().max(2_000) });

export const decisionQuestionSchema = z
  .discriminatedUnion('type', [
    z.object({ ...questionBase, type: z.literal('predicate') }),
    z.object({
      ...questionBase,
      type: z.literal('choice'),
      choices: z
        .array(choiceOptionSchema)
        .min(MIN_OPTIONS)
        .max(MAX_OPTIONS)
        .superRefine(uniqueBy('value', 'choice values')),
    }),
    z.object({
      ...questionBase,
      type: z.literal('score'),
      levels: z
        .array(scoreLevelSchema)
        .min(MIN_OPTIONS)
        .max(MAX_OPTIONS)
        .superRefine(uniqueBy('label', 'level labels'))
        .describe('lowest level first'),
    }),
  ])
  .meta({ id: 'DecisionQuestion' });

const questionsSchema = z
  .array(decisionQuestionSchema)
  .min(1)
  .max(MAX_QUESTIONS, `at most ${MAX_QUESTIONS} questions`)
  .superRefine(uniqueBy('name', 'question names'));

// --- Response -------------------------------------------------------------

const probability = z.number().min(0).max(1);

const answeredSchema = z.discriminatedUnion('type', [
  z.looseObject({
    name: z.string(),
    type: z.literal('predicate'),
    probability: probability.describe('probability that the predicate holds'),
  }),
  z.looseObject({
    name: z.string(),
    type: z.literal('choice'),
    value: z.string().describe('the most probable choice'),
    confidence: probability,
    choices: z.array(z.looseObject({ value: z.string(), probability })).describe('every choice, in request order'),
  }),
  z.looseObject({
    name: z.string(),
    type: z.literal('score'),
    score: z.number().min(0).describe('probability-weighted level index, from 0 (the lowest level)'),
    levels: z.array(z.looseObject({ label: z.string(), probability })).describe('every level, lowest first'),
  }),
]);

/** A question the model declined: its name and type, and why instead of probabilities. */
const refusalSchema = z.looseObject({
  name: z.string(),
  type: z.enum(['predicate', 'choice', 'score']),
  refusal: z.string().describe('why the model declined to answer this question'),
});

export const decisionResultSchema = z.union([answeredSchema, refusalSchema]).meta({ id: 'DecisionResult' });

export const decisionSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('decision'),
    created: z.number().int().describe('Unix seconds'),
    model: z.string(),
    results: z.array(decisionResultSchema).describe('one per question, in request order'),
    usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }),
    svc: svcSchema,
  })
  .meta({ id: 'Decision' });

export const createDecision = defineEndpoint({
  operationId: 'createDecision',
  method: 'POST',
  path: '/decisions',
  family: 'decisions',
  summary: 'Answers 1 to 32 typed questions (predicate, choice, score) about text or images with probabilities.',
  permission: 'decisions',
  body: {
    type: 'json',
    required: ['input', 'questions'],
    fields: {
      model: modelField(DECISION_MODELS, 'default typesafe/jev-1.14; a request with images runs on gpt-6-luna'),
      input: applied(decisionInputSchema, 'text, or user messages of input_text and input_image parts (images as base64 data URLs)'),
      questions: applied(
        questionsSchema,
        `1 to ${MAX_QUESTIONS} questions with unique names; choice takes ${MIN_OPTIONS} to ${MAX_OPTIONS} choices, score ${MIN_OPTIONS} to ${MAX_OPTIONS} levels (lowest first)`,
      ),
    },
  },
  response: { schema: decisionSchema },
  billable: true,
  notes: [
    'billed at provider cost, paid on input',
    'predicate: probability; choice: the most probable value, each choice probability and a confidence; score: probability-weighted level index from 0 with each level probability; a question may be answered with a refusal instead',
  ],
});

export const decisionsEndpoints = [createDecision];
