// Decisions on an upstream chat model (issue 21 item 5): each question is one chat call
// that asks for a single-token answer (yes or no for a predicate, a letter per choice or
// level: A to Z, numbers 1 to 32 past 26 options) with `top_logprobs`, and the answer's
// distribution is read from them, renormalized over the allowed answers (the same
// answer in another case or spacing counts once). Questions run concurrently, a few at
// a time; a failed call fails the request (the others are stopped). A model that
// declines (`refusal`), or whose answer and alternatives name no allowed answer, gives
// a refusal for that question. An upstream that sends no logprobs still gives an answer:
// the token it chose, at probability 1.
import type { DecisionAnswer, DecisionPart, DecisionQuestion, DecisionRequest } from '../../types.ts';
import { answerError, errorInPayload, isRecord } from './errors.ts';
import { inParallel, invalidAnswer, upstreamJson, type UpstreamJsonDeps } from './json-call.ts';
import type { SecretScrubber } from '../../../secrets.ts';

/** Questions of one request in flight at once. */
const PARALLEL = 8;
/** Alternatives asked for (OpenAI's maximum; vLLM's default max_logprobs). */
const TOP_LOGPROBS = 20;
/** A one-token answer with its logprobs is small; anything far larger is not one. */
const MAX_ANSWER_BYTES = 256 * 1024;

const SYSTEM =
  'You are a careful classifier. Read the input the user gives, then answer the question about it with exactly one token as instructed: no explanation, no punctuation.';

/** The answer tokens a question allows, in option order (predicate: yes, no). */
export function answerTokens(question: DecisionQuestion): string[] {
  if (question.type === 'predicate') return ['yes', 'no'];
  const n = question.type === 'choice' ? question.choices.length : question.levels.length;
  return Array.from({ length: n }, (_, i) => (n <= 26 ? String.fromCharCode(65 + i) : String(i + 1)));
}

/** The question as the model reads it, after the input. */
export function questionPrompt(question: DecisionQuestion): string {
  const tokens = answerTokens(question);
  if (question.type === 'predicate') {
    return `Statement to judge: ${question.instructions}\n\nAnswer "yes" if the statement holds for the input above, "no" if it does not. Answer with one word: yes or no.`;
  }
  const options = question.type === 'choice' ? question.choices.map((c) => `${c.value}: ${c.description}`) : question.levels.map((l) => `${l.label}: ${l.description}`);
  const list = options.map((o, i) => `${tokens[i]}) ${o}`).join('\n');
  const what = question.type === 'choice' ? 'Choices' : 'Levels, lowest first';
  return `Question: ${question.instructions}\n\n${what}:\n${list}\n\nAnswer with only the ${tokens[0] === 'A' ? 'letter' : 'number'} of the ${question.type === 'choice' ? 'choice' : 'level'} that fits the input best (${tokens[0]} to ${tokens.at(-1)}).`;
}

const contentOf = (parts: DecisionPart[]) => parts.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image_url', image_url: { url: p.url } }));

/** The allowed answer a token stands for (its option's index), or -1. */
function optionOf(token: string, allowed: readonly string[]): number {
  const t = token.trim().replace(/^["'(]+|["'.):]+$/g, '');
  if (allowed[0] === 'yes') {
    const w = t.toLowerCase();
    return w === 'yes' || w === 'true' ? 0 : w === 'no' || w === 'false' ? 1 : -1;
  }
  return allowed.indexOf(t.toUpperCase());
}

/** A question's answer from one chat completion answer; usage where reported. */
export function readDecision(payload: unknown, question: DecisionQuestion, scrubber: SecretScrubber): { answer: DecisionAnswer; inputTokens?: number; outputTokens?: number } {
  const error = errorInPayload(payload);
  if (error) throw answerError(error, scrubber, 'in its answer');
  if (!isRecord(payload) || !Array.isArray(payload.choices) || !isRecord(payload.choices[0])) throw invalidAnswer('decision', 'no choices');
  const choice = payload.choices[0];
  const message = isRecord(choice.message) ? choice.message : {};
  const usage = isRecord(payload.usage) ? payload.usage : {};
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  const tokens = { inputTokens: count(usage.prompt_tokens), outputTokens: count(usage.completion_tokens) };
  const withUsage = (answer: DecisionAnswer) => ({ answer, ...(tokens.inputTokens !== undefined ? { inputTokens: tokens.inputTokens } : {}), ...(tokens.outputTokens !== undefined ? { outputTokens: tokens.outputTokens } : {}) });
  if (typeof message.refusal === 'string' && message.refusal !== '') return withUsage({ refusal: message.refusal.slice(0, 2_000) });

  const allowed = answerTokens(question);
  const mass = allowed.map((): number => 0);
  const none = () => !mass.some((m) => m > 0);
  const first = isRecord(choice.logprobs) && Array.isArray(choice.logprobs.content) && isRecord(choice.logprobs.content[0]) ? choice.logprobs.content[0] : undefined;
  const alternatives = first && Array.isArray(first.top_logprobs) ? first.top_logprobs : [];
  for (const alt of alternatives) {
    if (!isRecord(alt) || typeof alt.token !== 'string' || typeof alt.logprob !== 'number' || !Number.isFinite(alt.logprob)) continue;
    const i = optionOf(alt.token, allowed);
    if (i >= 0) mass[i]! += Math.exp(Math.min(0, alt.logprob));
  }
  // The chosen token itself, when the alternatives left it out (or none were sent).
  if (none() && first && typeof first.token === 'string' && typeof first.logprob === 'number') {
    const i = optionOf(first.token, allowed);
    if (i >= 0) mass[i] = Math.exp(Math.min(0, first.logprob));
  }
  if (none() && typeof message.content === 'string') {
    const i = optionOf(message.content, allowed);
    if (i >= 0) mass[i] = 1;
  }
  const total = mass.reduce((a, b) => a + b, 0);
  if (!(total > 0)) {
    const said = typeof message.content === 'string' ? message.content.slice(0, 40) : '';
    return withUsage({ refusal: `The model answered ${JSON.stringify(said)}, which is none of the allowed answers (${allowed.join(', ')}).` });
  }
  return withUsage({ probabilities: mass.map((m) => m / total) });
}

export function upstreamDecide(deps: UpstreamJsonDeps, upstreamModel: string, request: DecisionRequest, signal: AbortSignal) {
  const input = request.messages.map((parts) => ({ role: 'user', content: contentOf(parts) }));

  async function one(question: DecisionQuestion, signal: AbortSignal) {
    const body = {
      model: upstreamModel,
      messages: [{ role: 'system', content: SYSTEM }, ...input, { role: 'user', content: questionPrompt(question) }],
      max_tokens: 1,
      temperature: 0,
      logprobs: true,
      top_logprobs: TOP_LOGPROBS,
    };
    const payload = await upstreamJson(deps, { path: '/chat/completions', body, model: upstreamModel, operation: 'decision', requestId: request.requestId, maxBytes: MAX_ANSWER_BYTES, what: 'decision' }, signal);
    return readDecision(payload, question, deps.target.scrubber);
  }

  return (async () => {
    const answers: DecisionAnswer[] = new Array(request.questions.length);
    let inputTokens: number | undefined = 0;
    let outputTokens: number | undefined = 0;
    await inParallel(request.questions.length, PARALLEL, signal, async (i, signal) => {
      const got = await one(request.questions[i]!, signal);
      answers[i] = got.answer;
      inputTokens = inputTokens === undefined || got.inputTokens === undefined ? undefined : inputTokens + got.inputTokens;
      outputTokens = outputTokens === undefined || got.outputTokens === undefined ? undefined : outputTokens + got.outputTokens;
    });
    return { answers, ...(inputTokens !== undefined ? { inputTokens } : {}), ...(outputTokens !== undefined ? { outputTokens } : {}) };
  })();
}
