// The offline decision engine: a plain fact high and its denial low (either side
// negated), absence as weak support of a negated claim, the best supported choice and
// level winning, the evidence readable, answers deterministic, and a long input read
// a slice at a time (the event loop keeps turning).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DecisionQuestion } from '../../types.ts';
import { answer, createOfflineDecisions, indexInput } from './offline-decisions.ts';

const ask = async (text: string, q: DecisionQuestion) => await answer(q, await indexInput({ messages: [[{ type: 'text', text }]] }));
const predicate = (instructions: string): DecisionQuestion => ({ name: 'p', type: 'predicate', instructions });
const p = (e: Awaited<ReturnType<typeof ask>>) => ('probabilities' in e.answer ? e.answer.probabilities[0]! : NaN);

test('a plain fact scores high, its denial low, whichever side says not', async () => {
  const facts: [string, string][] = [
    ['The package arrived damaged.', 'The package arrived damaged'],
    ['The invoice was paid on time.', 'Was the invoice paid on time?'],
    ["We shipped the order to Berlin yesterday.", 'The order was shipped to Berlin'],
    ['The customer cancelled the subscription.', 'The customer cancelled their subscription'],
  ];
  for (const [text, claim] of facts) {
    assert.ok(p(await ask(text, predicate(claim))) > 0.9, `${claim} | ${text}`);
    const denied = text.replace(/ (arrived|was|shipped|cancelled) /, (_, v: string) => ` did not ${v === 'was' ? 'get' : v} `);
    assert.ok(p(await ask(denied, predicate(claim))) < 0.1, `${claim} | ${denied}`);
  }
  assert.ok(p(await ask('The package arrived damaged.', predicate('The package did not arrive damaged'))) < 0.1);
  assert.ok(p(await ask("The package didn't arrive damaged.", predicate('The package did not arrive damaged'))) > 0.9);
});

test('no evidence is not a yes; absence supports a negated claim only weakly', async () => {
  assert.ok(p(await ask('Hello, how are you?', predicate('The text mentions pricing'))) < 0.2);
  const absent = p(await ask('Hello, how are you?', predicate('The text does not mention pricing')));
  assert.ok(absent > 0.5 && absent < 0.9, String(absent));
  const e = await ask('What is the price?', predicate('The text does not mention the price'));
  assert.ok(p(e) < 0.01);
  assert.deepEqual(e.support[0]!.evidence, [{ stem: 'price', negatedInClaim: true, found: 'asserted', weight: -1 }]);
});

test('the best supported choice and level win; options without evidence share the rest', async () => {
  const choice: DecisionQuestion = {
    name: 'c',
    type: 'choice',
    instructions: 'Which department should handle this?',
    choices: [
      { value: 'billing', description: 'invoices, payments, charges and refunds' },
      { value: 'shipping', description: 'delivery, tracking and damaged packages' },
      { value: 'technical', description: 'login problems, errors and outages' },
    ],
  };
  const billing = (await ask('I was charged twice on my last invoice.', choice)).answer as { probabilities: number[] };
  assert.equal(billing.probabilities.indexOf(Math.max(...billing.probabilities)), 0);
  assert.ok(Math.abs(billing.probabilities[1]! - billing.probabilities[2]!) < 1e-12);
  const tech = (await ask('I cannot login, the page shows errors.', choice)).answer as { probabilities: number[] };
  assert.equal(tech.probabilities.indexOf(Math.max(...tech.probabilities)), 2);
  const none = (await ask('Good morning!', choice)).answer as { probabilities: number[] };
  assert.deepEqual(none.probabilities.map((x) => +x.toFixed(9)), [1 / 3, 1 / 3, 1 / 3].map((x) => +x.toFixed(9)));
});

test('deterministic, and a long input is read a slice at a time', async () => {
  const engine = createOfflineDecisions();
  const long = 'Nothing relevant happens here at all today. '.repeat(40_000) + 'The server is down.';
  let turns = 0;
  const ticker = setInterval(() => turns++, 1);
  const run = () => engine.decide({ model: 'typesafe/jev-1.14', messages: [[{ type: 'text', text: long }]], questions: [predicate('The server is down')] }, new AbortController().signal);
  const [a, b] = [await run(), await run()];
  clearInterval(ticker);
  assert.deepEqual(a, b);
  assert.ok((a.answers[0] as { probabilities: number[] }).probabilities[0]! > 0.9);
  assert.ok(turns > 2, `the event loop turned ${turns} times`);
});
