// POST /v1/decisions through the official openai SDK (`client.post`): the Decisions
// switch, every question type on the offline engine (a plain fact high, its denial
// low, the best supported choice and level), 32 mixed questions with valid
// distributions and `score` the weighted level index, refusals, exact error paths, an
// image refused offline naming the part, usage and svc paid on input; and an upstream
// double answering with `top_logprobs`, whose probabilities come back renormalized over
// the allowed answers, questions sent concurrently, a refusal passed on.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { validateAgainstOwn } from '../responses/event-checks.test-support.ts';

/** Our own /v1/openapi.json: the Decision object is ours, published like any. */
let doc: any;
const validateDecision = (server: TestServer, body: unknown) => validateAgainstOwn(doc, 'Decision', body);
async function loadDoc(server: TestServer) {
  doc ??= await (await server.fetch('/v1/openapi.json')).json();
}

const ticket = 'My package arrived damaged and the box was crushed. I want a refund, this is extremely urgent.';
const questions = [
  { name: 'damaged', type: 'predicate', instructions: 'The package arrived damaged' },
  { name: 'intact', type: 'predicate', instructions: 'The package did not arrive damaged' },
  {
    name: 'wants',
    type: 'choice',
    instructions: 'What does the customer want?',
    choices: [
      { value: 'refund', description: 'their money back' },
      { value: 'replacement', description: 'a new item instead' },
      { value: 'information', description: 'product details or pricing' },
    ],
  },
  {
    name: 'urgency',
    type: 'score',
    instructions: 'How urgent is it?',
    levels: [
      { label: 'low', description: 'can wait' },
      { label: 'medium', description: 'somewhat urgent' },
      { label: 'high', description: 'extremely urgent' },
    ],
  },
];

function checkDistributions(body: any) {
  for (const r of body.results) {
    if ('refusal' in r) continue;
    if (r.type === 'predicate') assert.ok(r.probability >= 0 && r.probability <= 1);
    if (r.type === 'choice') {
      const sum = r.choices.reduce((s: number, c: any) => s + c.probability, 0);
      assert.ok(Math.abs(sum - 1) < 1e-9, `${r.name} sums to ${sum}`);
      const best = r.choices.reduce((a: any, b: any) => (b.probability > a.probability ? b : a));
      assert.equal(r.value, best.value);
      assert.equal(r.confidence, best.probability);
    }
    if (r.type === 'score') {
      const sum = r.levels.reduce((s: number, l: any) => s + l.probability, 0);
      assert.ok(Math.abs(sum - 1) < 1e-9, `${r.name} sums to ${sum}`);
      const weighted = r.levels.reduce((s: number, l: any, i: number) => s + i * l.probability, 0);
      assert.ok(Math.abs(r.score - weighted) < 1e-9);
    }
  }
}

async function refused(promise: Promise<unknown>, status: number, param: string | null, code?: string) {
  await assert.rejects(promise, (err: any) => {
    assert.equal(err.status, status, JSON.stringify(err.error));
    assert.equal(err.error?.param ?? null, param);
    if (code) assert.equal(err.error?.code, code);
    assert.ok(err.requestID ?? err.headers?.get?.('x-request-id'));
    return true;
  });
}

describe('offline engine', () => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await startTestServer();
    key = (await server.createKey({ permissions: { decisions: true } })).key;
    await loadDoc(server);
  });
  after(() => server.close());

  test('a predicate, its negation, a choice and a score: the decision object, paid on input', async () => {
    const body: any = await server.openai(key).post('/decisions', { body: { input: ticket, questions } });
    validateDecision(server, body);
    assert.match(body.id, /^dec_/);
    assert.equal(body.object, 'decision');
    assert.equal(body.model, 'typesafe/jev-1.14');
    assert.equal(typeof body.created, 'number');
    const [damaged, intact, wants, urgency] = body.results;
    assert.ok(damaged.probability > 0.9, `plainly true: ${damaged.probability}`);
    assert.ok(intact.probability < 0.1, `its negation: ${intact.probability}`);
    assert.equal(wants.value, 'refund');
    assert.equal(urgency.levels.reduce((a: any, b: any) => (b.probability > a.probability ? b : a)).label, 'high');
    checkDistributions(body);
    assert.ok(body.usage.input_tokens > 0);
    assert.equal(body.usage.output_tokens, 0);
    assert.equal(body.usage.total_tokens, body.usage.input_tokens);
    assert.ok(body.svc > 0, 'billed on input');
  });

  test('a denied fact scores low; a claim the input says nothing about stays low', async () => {
    const body: any = await server.openai(key).post('/decisions', {
      body: {
        model: '~typesafe/jev-latest',
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'The package did not arrive damaged.' }] }],
        questions: [
          { name: 'damaged', type: 'predicate', instructions: 'Is the package damaged on arrival?' },
          { name: 'weather', type: 'predicate', instructions: 'The weather was sunny' },
        ],
      },
    });
    assert.equal(body.model, '~typesafe/jev-latest');
    assert.ok(body.results[0].probability < 0.1, String(body.results[0].probability));
    assert.ok(body.results[1].probability < 0.5, String(body.results[1].probability));
  });

  test('32 questions of mixed types in one request: every distribution valid, score the weighted index', async () => {
    const many = Array.from({ length: 32 }, (_, i) => ({ ...questions[i % 4]!, name: `q${i}` }));
    const body: any = await server.openai(key).post('/decisions', { body: { input: ticket, questions: many } });
    assert.equal(body.results.length, 32);
    assert.deepEqual(body.results.map((r: any) => r.name), many.map((q) => q.name));
    checkDistributions(body);
  });

  test('refusals: no words to weigh, nothing to look for', async () => {
    const body: any = await server.openai(key).post('/decisions', { body: { input: '!!! ???', questions: [questions[0]] } });
    assert.equal(body.results[0].type, 'predicate');
    assert.match(body.results[0].refusal, /no words/);
    const vague: any = await server.openai(key).post('/decisions', { body: { input: ticket, questions: [{ name: 'x', type: 'predicate', instructions: 'Is it?' }] } });
    assert.match(vague.results[0].refusal, /nothing/);
    validateDecision(server, vague);
  });

  test('every violation is a 400 naming its exact path', async () => {
    const client = server.openai(key);
    const post = (body: unknown) => client.post('/decisions', { body });
    const choices = [{ value: 'a', description: '' }, { value: 'b', description: '' }];
    await refused(post({ input: 'x', questions: [] }), 400, 'questions');
    await refused(post({ input: 'x', questions: Array.from({ length: 33 }, (_, i) => ({ name: `q${i}`, type: 'predicate', instructions: 'x' })) }), 400, 'questions');
    await refused(post({ input: 'x', questions: [questions[0], { ...questions[1], name: 'damaged' }] }), 400, 'questions[1].name');
    const dup = [{ value: 'a', description: '' }, { value: 'b', description: '' }, { value: 'c', description: '' }, { value: 'b', description: '' }];
    await refused(post({ input: 'x', questions: [questions[0], questions[1], questions[2], { name: 'c', type: 'choice', instructions: 'x', choices: dup }] }), 400, 'questions[3].choices[3].value');
    await refused(post({ input: 'x', questions: [{ name: 'c', type: 'choice', instructions: 'x', choices: [choices[0]] }] }), 400, 'questions[0].choices');
    await refused(post({ input: 'x', questions: [{ name: 's', type: 'score', instructions: 'x', levels: Array.from({ length: 33 }, (_, i) => ({ label: `l${i}`, description: '' })) }] }), 400, 'questions[0].levels');
    await refused(post({ input: 'x', questions: [{ name: 's', type: 'score', instructions: 'x', levels: [{ label: 'a', description: '' }, { label: 'a', description: '' }] }] }), 400, 'questions[0].levels[1].label');
    await refused(post({ input: 'x', questions: [{ name: 's', type: 'bogus', instructions: 'x' }] }), 400, 'questions[0].type');
    await refused(post({ input: 'x', questions: [{ name: 's', type: 'predicate' }] }), 400, 'questions[0].instructions');
    await refused(post({ questions: [questions[0]] }), 400, 'input');
    await refused(post({ input: [{ role: 'assistant', content: 'x' }], questions: [questions[0]] }), 400, 'input[0].role');
    await refused(post({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }], questions: [questions[0]] }), 400, 'input[0].content[0].image_url');
    await refused(post({ model: 'gpt-4o', input: 'x', questions: [questions[0]] }), 404, 'model', 'model_not_found');
  });

  test('an image is refused offline naming the part, charging nothing', async () => {
    const account = await server.createAccount(5);
    const { key: own } = await server.createKey({ account_id: account.id, permissions: { decisions: true } });
    const image = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const input = [{ role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: image }] }];
    await refused(server.openai(own).post('/decisions', { body: { input, questions: [questions[0]] } }), 400, 'input[0].content[1]');
    const after = await server.admin('GET', `/accounts/${account.id}`);
    assert.equal(after.body.available_credits, 5);
  });

  test("the model that runs must be one the key may use, named or chosen by an image", async () => {
    const { key: limited } = await server.createKey({ permissions: { decisions: true }, models: ['~typesafe/jev-latest'] });
    const client = server.openai(limited);
    const ok: any = await client.post('/decisions', { body: { model: '~typesafe/jev-latest', input: ticket, questions: [questions[0]] } });
    assert.equal(ok.model, '~typesafe/jev-latest');
    await refused(client.post('/decisions', { body: { input: ticket, questions: [questions[0]] } }), 403, 'model', 'model_not_allowed');
    const image = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const input = [{ role: 'user', content: [{ type: 'input_image', image_url: image }] }];
    await refused(client.post('/decisions', { body: { model: '~typesafe/jev-latest', input, questions: [questions[0]] } }), 403, 'input[0].content[0]', 'model_not_allowed');
  });

  test('the Decisions switch off is 403', async () => {
    const { key: plain } = await server.createKey({});
    await refused(server.openai(plain).post('/decisions', { body: { input: ticket, questions } }), 403, null, 'model_not_allowed');
  });
});

/** A chat completion as OpenAI answers with logprobs: the chosen token and its alternatives. */
function logprobAnswer(res: ServerResponse, model: string, alternatives: [string, number][], extra: Record<string, unknown> = {}) {
  const [token, logprob] = alternatives[0]!;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-AbC123',
      object: 'chat.completion',
      created: 1764000000,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: token, refusal: null, annotations: [], ...extra },
          logprobs: {
            content: [{ token, logprob, bytes: [...Buffer.from(token)], top_logprobs: alternatives.map(([t, l]) => ({ token: t, logprob: l, bytes: [...Buffer.from(t)] })) }],
            refusal: null,
          },
          finish_reason: 'length',
        },
      ],
      usage: { prompt_tokens: 120, completion_tokens: 1, total_tokens: 121 },
      system_fingerprint: 'fp_1',
    }),
  );
}

describe('upstream engine', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let key: string;
  let inFlight = 0;
  let mostInFlight = 0;
  before(async () => {
    upstream = await startFakeUpstream(async (req, res) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
      const body = req.body as any;
      const prompt = String(body.messages.at(-1).content);
      if (prompt.includes('break me')) {
        res.writeHead(400, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { message: 'logprobs are not supported for this model', type: 'invalid_request_error', param: 'logprobs', code: null } }));
      }
      if (prompt.includes('refuse me')) return logprobAnswer(res, body.model, [['I', -0.01]], { content: null, refusal: "I can't help with that." });
      if (prompt.includes('off topic')) return logprobAnswer(res, body.model, [['Maybe', -0.2], ['Perhaps', -1.9]]);
      if (prompt.startsWith('Statement')) return logprobAnswer(res, body.model, [['yes', Math.log(0.6)], ['Yes', Math.log(0.2)], ['no', Math.log(0.1)], ['The', Math.log(0.05)]]);
      // Choice and score: A, B and C with 0.5, 0.25, 0.1; a stray token left out.
      return logprobAnswer(res, body.model, [[' A', Math.log(0.5)], ['B', Math.log(0.25)], ['C', Math.log(0.1)], ['I', Math.log(0.1)]]);
    });
    server = await startTestServer({
      UPSTREAM_BASE_URL: upstream.baseUrl,
      UPSTREAM_MODEL_AGENT: 'gpt-4o-mini',
      UPSTREAM_DECISIONS: 'upstream',
      UPSTREAM_DECISION_MODELS: JSON.stringify({ 'typesafe/jev-1.14': 'openai/gpt-4.1-mini', 'gpt-6-luna': 'openai/gpt-4o' }),
    });
    key = (await server.createKey({ permissions: { decisions: true } })).key;
    await loadDoc(server);
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('top_logprobs give the probabilities they imply, renormalized over the allowed answers', async () => {
    upstream.requests.length = 0;
    const body: any = await server.openai(key).post('/decisions', { body: { input: ticket, questions } });
    validateDecision(server, body);
    const [damaged, intact, wants, urgency] = body.results;
    // yes 0.6 + Yes 0.2 over (0.8 + no 0.1): "The" is not an answer.
    assert.ok(Math.abs(damaged.probability - 0.8 / 0.9) < 1e-9, String(damaged.probability));
    assert.ok(Math.abs(intact.probability - 0.8 / 0.9) < 1e-9);
    assert.deepEqual(wants.choices.map((c: any) => +c.probability.toFixed(6)), [0.5 / 0.85, 0.25 / 0.85, 0.1 / 0.85].map((p) => +p.toFixed(6)));
    assert.equal(wants.value, 'refund');
    assert.ok(Math.abs(urgency.score - (0.25 / 0.85 + (2 * 0.1) / 0.85)) < 1e-9);
    checkDistributions(body);
    // One call per question, each a single-token answer with logprobs, on the mapped model.
    assert.equal(upstream.requests.length, 4);
    for (const r of upstream.requests) {
      const b = r.body as any;
      assert.equal(r.url, '/v1/chat/completions');
      assert.equal(b.model, 'openai/gpt-4.1-mini');
      assert.equal(b.max_tokens, 1);
      assert.equal(b.logprobs, true);
      assert.equal(b.top_logprobs, 20);
      assert.equal(b.messages[1].content[0].text, ticket);
    }
    const choicePrompt = (upstream.requests.map((r) => (r.body as any).messages.at(-1).content) as string[]).find((p) => p.includes('Choices'))!;
    assert.match(choicePrompt, /A\) refund: their money back\nB\) replacement/);
    // Paid on input: the upstream's prompt tokens, four calls of 120.
    assert.equal(body.usage.input_tokens, 480);
    assert.equal(body.usage.output_tokens, 4);
    assert.ok(body.svc > 0);
  });

  test('questions run concurrently; a refusal and an answer outside the allowed ones are refusals', async () => {
    mostInFlight = 0;
    const many = Array.from({ length: 16 }, (_, i) => ({ ...questions[i % 4]!, name: `q${i}` }));
    many.push({ name: 'no', type: 'predicate', instructions: 'refuse me' }, { name: 'odd', type: 'predicate', instructions: 'off topic' });
    const body: any = await server.openai(key).post('/decisions', { body: { input: ticket, questions: many } });
    assert.ok(mostInFlight > 1, `at most ${mostInFlight} at once`);
    assert.equal(body.results.at(-2).refusal, "I can't help with that.");
    assert.equal(body.results.at(-2).type, 'predicate');
    assert.match(body.results.at(-1).refusal, /none of the allowed answers/);
    validateDecision(server, body);
  });

  test('a failed question fails the request with a 502, charging nothing', async () => {
    const account = await server.createAccount(5);
    const { key: own } = await server.createKey({ account_id: account.id, permissions: { decisions: true } });
    const body = { input: ticket, questions: [...questions, { name: 'broken', type: 'predicate', instructions: 'break me' }] };
    await refused(server.openai(own).post('/decisions', { body }), 502, null);
    assert.equal((await server.admin('GET', `/accounts/${account.id}`)).body.available_credits, 5);
  });

  test('an input with images runs on gpt-6-luna and reaches the upstream as image parts', async () => {
    upstream.requests.length = 0;
    const image = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const input = [{ role: 'user', content: [{ type: 'input_text', text: 'Is this a cat?' }, { type: 'input_image', image_url: image }] }];
    const body: any = await server.openai(key).post('/decisions', { body: { input, questions: [questions[0]] } });
    assert.equal(body.model, 'gpt-6-luna');
    const sent = upstream.requests[0]!.body as any;
    assert.equal(sent.model, 'openai/gpt-4o');
    assert.deepEqual(sent.messages[1].content[1], { type: 'image_url', image_url: { url: image } });
  });
});
