// Moderations on the upstream's POST {base}/moderations (OpenAI's; any server with the
// same shape). Text-only inputs go as lists of strings, a few lists at once; an input
// of text and images goes as the reference's parts, one call each. The scores come
// back as the upstream gave them (our thresholds flag them, as for the offline engine);
// categories it does not score (text-moderation models have no `illicit`) score 0,
// applied to no input type.
import { MODERATION_CATEGORIES } from '../../../contract/endpoints/moderations.ts';
import type { SecretScrubber } from '../../../secrets.ts';
import type { ModerationInput, ModerationScores } from '../../types.ts';
import { answerError, errorInPayload, isRecord } from './errors.ts';
import { inParallel, invalidAnswer, upstreamJson, type UpstreamJsonDeps } from './json-call.ts';

/** Texts in one upstream request. */
const SLICE = 32;
const PARALLEL = 4;
/** A result's JSON is about 1.5 KB; an answer far over that per input is not one. */
const BYTES_PER_RESULT = 16 * 1024;

/** The upstream model for one of our ids: `agent-moderation` is ours, the rest are the reference's names. */
export const upstreamModerationModel = (model: string) => (model === 'agent-moderation' ? 'omni-moderation-latest' : model);

const TYPES = new Set(['text', 'image']);

/** One input's scores from the upstream's result object. */
function scoresOf(result: unknown, input: ModerationInput): ModerationScores {
  if (!isRecord(result) || !isRecord(result.category_scores)) throw invalidAnswer('moderation', 'a result without category_scores');
  const given = result.category_scores;
  const applied = isRecord(result.category_applied_input_types) ? result.category_applied_input_types : undefined;
  const present: ('text' | 'image')[] = [...(input.texts.length > 0 ? (['text'] as const) : []), ...(input.images.length > 0 ? (['image'] as const) : [])];
  const scores: Record<string, number> = {};
  const appliedTo: Record<string, ('text' | 'image')[]> = {};
  for (const c of MODERATION_CATEGORIES) {
    const v = given[c];
    const scored = typeof v === 'number' && Number.isFinite(v);
    scores[c] = scored ? Math.min(1, Math.max(0, v)) : 0;
    const types = applied?.[c];
    appliedTo[c] = !scored ? [] : Array.isArray(types) ? (types.filter((t) => typeof t === 'string' && TYPES.has(t)) as ('text' | 'image')[]) : [...present];
  }
  return { scores, appliedTo };
}

function readResults(payload: unknown, inputs: readonly ModerationInput[], scrubber: SecretScrubber): ModerationScores[] {
  const error = errorInPayload(payload);
  if (error) throw answerError(error, scrubber, 'in its answer');
  if (!isRecord(payload) || !Array.isArray(payload.results)) throw invalidAnswer('moderation', 'no results list');
  if (payload.results.length !== inputs.length) throw invalidAnswer('moderation', `${payload.results.length} results for ${inputs.length} inputs`);
  return payload.results.map((r, i) => scoresOf(r, inputs[i]!));
}

export function upstreamModerate(deps: UpstreamJsonDeps, request: { model: string; inputs: ModerationInput[]; requestId?: string }, signal: AbortSignal): Promise<ModerationScores[]> {
  const model = upstreamModerationModel(request.model);
  const textOnly = request.inputs.every((i) => i.images.length === 0 && i.texts.length === 1);
  // Text-only: slices of whole lists; else one call per input with its parts.
  const groups: { start: number; inputs: ModerationInput[]; body: { model: string; input: unknown } }[] = [];
  if (textOnly) {
    for (let start = 0; start < request.inputs.length; start += SLICE) {
      const inputs = request.inputs.slice(start, start + SLICE);
      groups.push({ start, inputs, body: { model, input: inputs.map((i) => i.texts[0]!) } });
    }
  } else {
    request.inputs.forEach((input, start) => {
      const parts = [...input.texts.map((text) => ({ type: 'text', text })), ...input.images.map((url) => ({ type: 'image_url', image_url: { url } }))];
      groups.push({ start, inputs: [input], body: { model, input: parts } });
    });
  }
  return (async () => {
    const out: ModerationScores[] = new Array(request.inputs.length);
    await inParallel(groups.length, PARALLEL, signal, async (g, signal) => {
      const group = groups[g]!;
      const maxBytes = group.inputs.length * BYTES_PER_RESULT + 64 * 1024;
      const payload = await upstreamJson(deps, { path: '/moderations', body: group.body, model, operation: 'moderation', requestId: request.requestId, maxBytes, what: 'moderation' }, signal);
      readResults(payload, group.inputs, deps.target.scrubber).forEach((s, i) => (out[group.start + i] = s));
    });
    return out;
  })();
}
