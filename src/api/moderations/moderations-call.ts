// One moderation request, whoever asked for it: an HTTP request or a batch line. The
// input is read into the engine's inputs (a string, a list of strings: one result each;
// a list of text and image_url parts: one result for all of them, as the reference
// scores a multimodal input). Image parts are read before anything runs (image-parts.ts:
// a data URL, or an https address through the outbound guard, then decoded by the
// engine), so an unreadable one is a 400 naming the part with nothing held; then a Run
// holds the (zero, offline) price, the engine scores, and each category is flagged at
// its threshold (MODERATION_THRESHOLDS).
import { fromMicro } from '../../accounts/money.ts';
import { createModeration, MODERATION_CATEGORIES } from '../../contract/endpoints/moderations.ts';
import type { BodyOf } from '../../contract/types.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import { invalidRequest, serverError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { callSignal, type Call } from '../../pipeline/call.ts';
import type { ModerationInput, ModerationScores } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import type { BatchEndpoint } from '../batches/batch-endpoints.ts';
import { consume } from '../stream-answer.ts';
import { checkImageCount, prepareImageParts, type ImagePart } from './image-parts.ts';

export type ModerationBody = BodyOf<typeof createModeration>;

export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** The engine's inputs, one per result, and the image parts among them (all in the one input of a list of parts). */
function inputsOf(input: ModerationBody['input'], model: string): { inputs: ModerationInput[]; images: ImagePart[] } {
  if (typeof input === 'string') return { inputs: [{ texts: [input], images: [] }], images: [] };
  const list = input as (string | Part)[];
  if (list.every((x) => typeof x === 'string')) return { inputs: (list as string[]).map((text) => ({ texts: [text], images: [] })), images: [] };
  const texts: string[] = [];
  const images: ImagePart[] = [];
  (list as Part[]).forEach((part, i) => {
    if (part.type === 'text') texts.push(part.text);
    else if (model.startsWith('text-moderation')) throw invalidRequest(`${model} scores text only: send image parts with omni-moderation-latest or agent-moderation.`, `input[${i}]`);
    else images.push({ url: part.image_url.url, param: `input[${i}].image_url` });
  });
  checkImageCount(images);
  return { inputs: [{ texts, images: images.map((p) => p.url) }], images };
}

/** The result object of one input (reference ModerationResult). */
function resultOf(scored: ModerationScores, thresholds: Readonly<Record<string, number>>, fallback: number) {
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const c of MODERATION_CATEGORIES) {
    const score = scored.scores[c] ?? 0;
    scores[c] = score;
    categories[c] = score >= (thresholds[c] ?? fallback);
    applied[c] = scored.appliedTo[c] ?? [];
  }
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores, category_applied_input_types: applied };
}

/** Moderates the checked body: null when the caller went away before the end. */
export async function createModerations(services: Services, call: Call, body: ModerationBody, key: KeyRecord) {
  const model = body.model ?? DEFAULT_MODERATION_MODEL;
  const { inputs, images } = inputsOf(body.input, model);
  const texts = inputs.flatMap((i) => i.texts);
  const provider = services.engines.for('moderation', model);
  if (images.length > 0 && provider.prepareImage) {
    const signal = callSignal(call);
    try {
      inputs[0]!.prepared = await prepareImageParts(services, (image, s) => provider.prepareImage!(image, s), images, signal);
    } catch (err) {
      if (signal.aborted) return null;
      throw err;
    }
  }
  const input = estimateInputTokens(texts, 0);
  const run = await Run.open(services, call, { key, price: services.engines.price('moderation', model), input, maxOutputTokens: 0 });
  const ran = await consume(run, run.signal, async () => {
    const scored = await provider.moderate({ model, inputs, requestId: call.id }, run.signal);
    if (scored.length !== inputs.length) throw new Error(`the moderation engine returned ${scored.length} results for ${inputs.length} inputs`);
    run.report({ inputTokens: await input.counted(), outputTokens: 0 });
    return scored;
  });
  if (!ran) return null;
  const { thresholds, threshold } = services.config.moderation;
  return { id: newId('modr-'), model, results: ran.value.map((s) => resultOf(s, thresholds, threshold)), svc: fromMicro(ran.credits) };
}

/** Moderations as a batch line answers them (api/batches/batch-endpoints.ts). */
export function moderationsBatchEndpoint(services: Services): BatchEndpoint {
  return {
    url: '/v1/moderations',
    contract: createModeration,
    async run(call) {
      const answer = await createModerations(services, call, call.body as ModerationBody, call.key!);
      if (!answer) throw serverError('The batch stopped before this request finished.');
      return answer;
    },
  };
}
