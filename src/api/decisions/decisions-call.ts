// One decision request (POST /v1/decisions, SPEC "Embeddings, moderations, decisions"):
// the input read into user messages of text and image parts, the model chosen (an
// input with images runs on gpt-6-luna, as SPEC says), its engine found, the input's
// price held (decisions are paid on input: the answers cost nothing), the questions
// answered, and each answer turned into its result: a predicate's probability, a
// choice's value, distribution and confidence, a score's probability-weighted level
// index and distribution, or a refusal. Probabilities are renormalized here, so every
// question's sum to 1 whatever an engine sent.
import { fromMicro } from '../../accounts/money.ts';
import { createDecision, MAX_INPUT_CHARS } from '../../contract/endpoints/decisions.ts';
import type { BodyOf } from '../../contract/types.ts';
import { ATTACHMENT_TOKENS, Run, type InputEstimate } from '../../credits/run.ts';
import { invalidRequest, modelNotAllowed } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { Call } from '../../pipeline/call.ts';
import type { DecisionAnswer, DecisionPart, DecisionProvider, DecisionQuestion } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { countTokensAsync } from '../../text/tokenizer.ts';
import { consume } from '../stream-answer.ts';

export type DecisionBody = BodyOf<typeof createDecision>;

export const DEFAULT_DECISION_MODEL = 'typesafe/jev-1.14';
/** SPEC: the model for any request with images. */
export const IMAGE_DECISION_MODEL = 'gpt-6-luna';
/** What a model call per question adds to the input: the instructions around it and the question's framing. */
const PROMPT_OVERHEAD_TOKENS = 96;

interface ReadInput {
  messages: DecisionPart[][];
  /** Where the first image is (`input[0].content[1]`), if there is one. */
  firstImage?: string;
  chars: number;
}

function readInput(input: NonNullable<DecisionBody['input']>): ReadInput {
  if (typeof input === 'string') return { messages: [[{ type: 'text', text: input }]], chars: input.length };
  let firstImage: string | undefined;
  let chars = 0;
  const messages = input.map((message, i) => {
    if (typeof message.content === 'string') {
      chars += message.content.length;
      return [{ type: 'text', text: message.content } as DecisionPart];
    }
    return message.content.map((part, j): DecisionPart => {
      if (part.type === 'input_text') {
        chars += part.text.length;
        return { type: 'text', text: part.text };
      }
      firstImage ??= `input[${i}].content[${j}]`;
      return { type: 'image', url: part.image_url };
    });
  });
  return { messages, chars, ...(firstImage ? { firstImage } : {}) };
}

/** The question's own words as a model reads them (instructions, choices, levels). */
const questionText = (q: DecisionQuestion) =>
  [q.instructions, ...(q.type === 'choice' ? q.choices.flatMap((c) => [c.value, c.description]) : q.type === 'score' ? q.levels.flatMap((l) => [l.label, l.description]) : [])].join('\n');

/**
 * The input tokens a decision reads: the input (once, or once per question for an
 * engine that makes a model call each), its images, and the questions. The bound takes
 * bytes for tokens (a byte-level BPE token covers at least one byte).
 */
class DecisionEstimate implements InputEstimate {
  readonly bound: number;
  private readonly times: number;
  private readonly extra: number;

  constructor(
    private readonly texts: string[],
    private readonly questions: string[],
    images: number,
    perQuestion: boolean,
  ) {
    this.times = perQuestion ? questions.length : 1;
    this.extra = this.times * (images * ATTACHMENT_TOKENS + (perQuestion ? PROMPT_OVERHEAD_TOKENS : 0));
    const bytes = (list: string[]) => list.reduce((n, t) => n + Buffer.byteLength(t), 0);
    this.bound = this.times * bytes(texts) + bytes(questions) + this.extra;
  }

  async counted(): Promise<number> {
    let input = 0;
    for (const t of this.texts) input += await countTokensAsync(t);
    let questions = 0;
    for (const q of this.questions) questions += await countTokensAsync(q);
    return this.times * input + questions + this.extra;
  }
}

/** Probabilities that sum to 1 (an engine's rounding or a missing mass spread evenly). */
function normalized(p: readonly number[], count: number): number[] {
  const clean = Array.from({ length: count }, (_, i) => (Number.isFinite(p[i]) && p[i]! > 0 ? p[i]! : 0));
  const total = clean.reduce((a, b) => a + b, 0);
  return total > 0 ? clean.map((x) => x / total) : clean.map(() => 1 / count);
}

/** The result object of one question. */
export function resultOf(question: DecisionQuestion, answer: DecisionAnswer) {
  const { name, type } = question;
  if ('refusal' in answer) return { name, type, refusal: answer.refusal };
  if (type === 'predicate') return { name, type, probability: normalized(answer.probabilities, 2)[0]! };
  if (type === 'choice') {
    const p = normalized(answer.probabilities, question.choices.length);
    const best = p.indexOf(Math.max(...p));
    return { name, type, value: question.choices[best]!.value, choices: question.choices.map((c, i) => ({ value: c.value, probability: p[i]! })), confidence: p[best]! };
  }
  const p = normalized(answer.probabilities, question.levels.length);
  return { name, type, score: p.reduce((s, x, i) => s + x * i, 0), levels: question.levels.map((l, i) => ({ label: l.label, probability: p[i]! })) };
}

/** Decides the checked body: null when the caller went away before the end. */
export async function createDecisions(services: Services, call: Call, body: DecisionBody, key: KeyRecord) {
  const input = readInput(body.input!);
  if (input.chars > MAX_INPUT_CHARS) throw invalidRequest(`A decision's input may hold at most ${MAX_INPUT_CHARS} characters of text, all parts together; this one holds ${input.chars}.`, 'input');
  const model = input.firstImage ? IMAGE_DECISION_MODEL : (body.model ?? DEFAULT_DECISION_MODEL);
  // The model that runs must be one the key may use, named or not (an image chooses gpt-6-luna).
  if (key.models && !key.models.includes(model)) {
    const why = input.firstImage ? `, which decides any input with an image` : body.model === undefined ? ', the default' : '';
    throw modelNotAllowed(`This API key is not allowed to use the model '${model}'${why}.`, input.firstImage ?? 'model');
  }
  const provider: DecisionProvider = services.engines.for('decisions', model);
  if (input.firstImage && !provider.readsImages) {
    throw invalidRequest(
      `Images are decided on ${IMAGE_DECISION_MODEL}, which runs on the offline engine here, and the offline engine reads text only. Send text, or configure an upstream for decisions (UPSTREAM_DECISIONS=upstream).`,
      input.firstImage,
    );
  }
  const questions = body.questions as DecisionQuestion[];
  const texts = input.messages.flatMap((m) => m.flatMap((p) => (p.type === 'text' ? [p.text] : [])));
  const images = input.messages.reduce((n, m) => n + m.filter((p) => p.type === 'image').length, 0);
  const estimate = new DecisionEstimate(texts, questions.map(questionText), images, provider.inputPerQuestion);
  const run = await Run.open(services, call, { key, price: services.engines.price('decisions', model), input: estimate, maxOutputTokens: 0 });
  const ran = await consume(run, run.signal, async () => {
    const got = await provider.decide({ model, messages: input.messages, questions, requestId: call.id }, run.signal);
    if (got.answers.length !== questions.length) throw new Error(`the decision engine returned ${got.answers.length} answers for ${questions.length} questions`);
    const usage = { inputTokens: got.inputTokens ?? (await estimate.counted()), outputTokens: got.outputTokens ?? 0 };
    run.report(usage);
    return { answers: got.answers, usage };
  });
  if (!ran) return null;
  const { answers, usage } = ran.value;
  return {
    id: newId('dec_'),
    object: 'decision' as const,
    created: Math.floor(Date.now() / 1000),
    model,
    results: questions.map((q, i) => resultOf(q, answers[i]!)),
    usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens },
    svc: fromMicro(ran.credits),
  };
}
