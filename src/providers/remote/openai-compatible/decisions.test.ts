// Reading a decision from an upstream's logprobs: answers merged across case and
// spacing, renormalized over the allowed answers; numbers past 26 options; the chosen
// token or the text when no alternatives came; a refusal; an error payload.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SecretScrubber } from '../../../secrets.ts';
import type { DecisionQuestion } from '../../types.ts';
import { answerTokens, questionPrompt, readDecision } from './decisions.ts';

const scrubber = new SecretScrubber();
const completion = (content: string | null, alternatives?: [string, number][], refusal: string | null = null) => ({
  choices: [{ message: { role: 'assistant', content, refusal }, ...(alternatives ? { logprobs: { content: [{ token: content ?? '', logprob: alternatives[0]?.[1] ?? 0, top_logprobs: alternatives.map(([token, logprob]) => ({ token, logprob })) }] } } : {}) }],
  usage: { prompt_tokens: 50, completion_tokens: 1 },
});
const predicate: DecisionQuestion = { name: 'p', type: 'predicate', instructions: 'x' };
const choice = (n: number): DecisionQuestion => ({ name: 'c', type: 'choice', instructions: 'x', choices: Array.from({ length: n }, (_, i) => ({ value: `v${i}`, description: `d${i}` })) });

test('yes and no across case and spacing, renormalized', () => {
  const got = readDecision(completion('Yes', [['Yes', Math.log(0.5)], [' yes', Math.log(0.2)], ['No', Math.log(0.1)], ['Maybe', Math.log(0.1)]]), predicate, scrubber);
  const [yes, no] = (got.answer as { probabilities: number[] }).probabilities;
  assert.ok(Math.abs(yes! - 0.875) < 1e-12 && Math.abs(no! - 0.125) < 1e-12);
  assert.equal(got.inputTokens, 50);
  assert.equal(got.outputTokens, 1);
});

test('letters up to 26 options, numbers past them', () => {
  assert.deepEqual(answerTokens(choice(3)), ['A', 'B', 'C']);
  assert.equal(answerTokens(choice(26)).at(-1), 'Z');
  assert.deepEqual(answerTokens(choice(32)).slice(0, 2), ['1', '2']);
  assert.match(questionPrompt(choice(32)), /32\) v31: d31\n\nAnswer with only the number of the choice that fits the input best \(1 to 32\)\./);
  const got = readDecision(completion('12', [['12', Math.log(0.9)], ['13', Math.log(0.05)], ['A', Math.log(0.01)]]), choice(32), scrubber);
  const p = (got.answer as { probabilities: number[] }).probabilities;
  assert.ok(Math.abs(p[11]! - 0.9 / 0.95) < 1e-12 && Math.abs(p[12]! - 0.05 / 0.95) < 1e-12);
});

test('no alternatives: the chosen text at probability 1; none allowed: a refusal; a refusal passed on', () => {
  assert.deepEqual(readDecision(completion('B'), choice(3), scrubber).answer, { probabilities: [0, 1, 0] });
  assert.match((readDecision(completion('Perhaps', [['Perhaps', -0.1]]), choice(3), scrubber).answer as { refusal: string }).refusal, /none of the allowed answers \(A, B, C\)/);
  assert.deepEqual(readDecision(completion(null, [], 'I cannot help.'), predicate, scrubber).answer, { refusal: 'I cannot help.' });
  assert.throws(() => readDecision({ error: { message: 'bad', type: 'invalid_request_error' } }, predicate, scrubber), /upstream/);
});
