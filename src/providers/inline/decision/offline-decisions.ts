// The offline decision engine (issue 21 item 5): deterministic and evidence-based. The
// input's words are indexed once (evidence.ts); each question is then read against it:
// - predicate: the instructions are the claim; its support, as a share of its words,
//   goes through a logistic, so a plainly stated fact scores high, its denial low, and
//   a claim the input says nothing about stays low (no evidence is not a yes);
// - choice and score: each choice's value and description (a level's label and
//   description) is a claim; their support goes through a softmax, so the best
//   supported option wins and options the input says nothing about share what is left
//   (a denied mention counts nothing there, not against: it is still on topic).
// Images are not read: a request with one is refused before it runs (api/decisions).
import type { DecisionAnswer, DecisionProvider, DecisionQuestion, DecisionRequest } from '../../types.ts';
import { TimeSlice } from '../../../text/time-slice.ts';
import { InputIndex, support, termsOf, type Support } from './evidence.ts';

/** Logistic of a predicate's support share: 1 gives 0.98, a half 0.73, none 0.12, a denial below 0.02. */
const PREDICATE_SLOPE = 6;
const PREDICATE_BIAS = -2;
/** Softmax temperature of an option's support (its total over the square root of its words, within ±2). */
const OPTION_SLOPE = 3;
const OPTION_CLAMP = 2;

export const NO_WORDS = 'The input has no words the offline engine can weigh (it reads text only).';
export const NOTHING_TO_LOOK_FOR = 'The instructions name nothing the offline engine can look for in the input.';

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

function softmax(logits: readonly number[]): number[] {
  const top = Math.max(...logits);
  const e = logits.map((l) => Math.exp(l - top));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

/** One question's answer and the evidence behind each option (for tests and anyone asking why). */
export interface Explained {
  answer: DecisionAnswer;
  support: Support[];
}

function optionLogit(s: Support): number {
  if (s.terms === 0) return 0;
  return OPTION_SLOPE * Math.max(-OPTION_CLAMP, Math.min(OPTION_CLAMP, s.total / Math.sqrt(s.terms)));
}

/** Answers one question against an indexed input (an option at a time: 32 long options are real work). */
export async function answer(question: DecisionQuestion, input: InputIndex, slice = new TimeSlice()): Promise<Explained> {
  if (input.words === 0) return { answer: { refusal: NO_WORDS }, support: [] };
  if (question.type === 'predicate') {
    const s = support(termsOf(question.instructions), input);
    if (s.terms === 0) return { answer: { refusal: NOTHING_TO_LOOK_FOR }, support: [s] };
    const p = sigmoid(PREDICATE_SLOPE * (s.total / s.terms) + PREDICATE_BIAS);
    return { answer: { probabilities: [p, 1 - p] }, support: [s] };
  }
  const options = question.type === 'choice' ? question.choices.map((c) => `${c.value}. ${c.description}`) : question.levels.map((l) => `${l.label}. ${l.description}`);
  const supports: Support[] = [];
  for (const o of options) {
    supports.push(support(termsOf(o), input, 0));
    await slice.check();
  }
  if (supports.every((s) => s.terms === 0)) return { answer: { refusal: NOTHING_TO_LOOK_FOR }, support: supports };
  return { answer: { probabilities: softmax(supports.map(optionLogit)) }, support: supports };
}

/** Indexes the input's text parts (images are refused before a request gets here). */
export async function indexInput(request: Pick<DecisionRequest, 'messages'>, slice = new TimeSlice()): Promise<InputIndex> {
  const index = new InputIndex();
  for (const message of request.messages) for (const part of message) if (part.type === 'text') await index.add(part.text, slice);
  return index;
}

export function createOfflineDecisions(): DecisionProvider {
  return {
    name: 'offline',
    readsImages: false,
    inputPerQuestion: false,
    async decide(request, signal) {
      const slice = new TimeSlice(signal);
      const index = await indexInput(request, slice);
      const answers: DecisionAnswer[] = [];
      for (const q of request.questions) {
        answers.push((await answer(q, index, slice)).answer);
        await slice.check();
      }
      return { answers };
    },
  };
}
