// Hostile requests end to end (issue 8, defects 2 and 3): JSON Schemas that used to
// crash or hang the process, and prompts that used to hold the event loop while being
// tokenized. Each either is refused by the contract (400 with the keyword's path in
// param) or runs bounded by max_tokens (finish_reason "length"); the server answers
// afterwards.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let server: TestServer;
let client: OpenAI;
let key: string;
before(async () => {
  server = await startTestServer();
  key = (await server.createKey({ account_id: (await server.createAccount(1_000_000)).id, permissions: { function_calling: true } })).key;
  client = server.openai(key);
});
after(() => server.close());

const messages = [{ role: 'user' as const, content: 'hi' }];

/** The schema as a response_format and as a tool's parameters, and the param each is refused at. */
function asBoth(schema: Record<string, unknown>, at: string): [Record<string, unknown>, string][] {
  return [
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }, `response_format.json_schema.schema${at}`],
    [{ tools: [{ type: 'function', function: { name: 'f', parameters: schema } }], tool_choice: 'required' }, `tools[0].function.parameters${at}`],
  ];
}

async function post(body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await server.fetch('/v1/chat/completions', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'agent', messages, ...body }),
  });
  return { status: res.status, body: await res.json() };
}

async function assertServerAnswers(): Promise<void> {
  assert.equal((await server.fetch('/healthz')).status, 200);
  const r = await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'What is 2 + 2?' }] });
  assert.match(r.choices[0]!.message.content ?? '', /4/);
}

describe('hostile JSON Schemas', () => {
  // Refused up front: no model can write a billion characters or items (the budget's
  // minimums stop at 1,000,000), RE2 and the budget cap a repetition at 1,000, and
  // nothing matches anyOf: []. Refusing says what is wrong instead of a cut answer.
  const REFUSED: [string, Record<string, unknown>, string][] = [
    ['minLength: 1e9', { type: 'object', properties: { s: { type: 'string', minLength: 1e9 } }, required: ['s'] }, '.properties.s.minLength'],
    ['minItems: 1e9', { type: 'array', minItems: 1e9 }, '.minItems'],
    ['pattern: a{1000000}', { type: 'object', properties: { s: { type: 'string', pattern: 'a{1000000}' } } }, '.properties.s.pattern'],
    ['anyOf: []', { anyOf: [] }, '.anyOf'],
  ];
  for (const [name, schema, at] of REFUSED) {
    test(`${name} is a 400 invalid_request naming the keyword, in response_format and in tool parameters`, async () => {
      for (const [body, param] of asBoth(schema, at)) {
        const r = await post(body);
        assert.equal(r.status, 400, JSON.stringify(r.body));
        assert.equal(r.body.error.code, 'invalid_request');
        assert.equal(r.body.error.param, param);
      }
      await assertServerAnswers();
    });
  }

  test('the legacy functions field is checked too (SDK error carries the param)', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'agent', messages, functions: [{ name: 'f', parameters: { type: 'string', minLength: 1e9 } }] }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'functions[0].parameters.minLength',
    );
  });

  // Accepted: the pattern is small and valid; only a backtracking engine makes it
  // dangerous, and user patterns run on RE2. The answer is cut by max_tokens.
  test('a ReDoS pattern with a large minLength runs on RE2, bounded by max_tokens (finish length)', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$', minLength: 900_000 } }, required: ['s'] };
    const format = await client.chat.completions.create({
      model: 'agent',
      messages,
      max_tokens: 16,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
    });
    assert.equal(format.choices[0]!.finish_reason, 'length');
    assert.ok(format.usage!.completion_tokens <= 16);
    assert.match(format.choices[0]!.message.content ?? '', /^\{"s":"a+$/);

    const tool = await client.chat.completions.create({
      model: 'agent',
      messages,
      max_tokens: 16,
      tools: [{ type: 'function', function: { name: 'f', parameters: schema } }],
      tool_choice: 'required',
    });
    assert.equal(tool.choices[0]!.finish_reason, 'length');
    assert.ok(tool.usage!.completion_tokens <= 16);
    assert.match(tool.choices[0]!.message.tool_calls?.[0]?.type === 'function' ? tool.choices[0]!.message.tool_calls[0].function.arguments : '', /^\{"s":"a+$/);
    await assertServerAnswers();
  });

  test('within the budget, a minItems or minLength larger than max_tokens allows is cut with finish length (streamed too)', async () => {
    const stream = await client.chat.completions.create({
      model: 'agent',
      messages,
      max_tokens: 16,
      stream: true,
      stream_options: { include_usage: true },
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'array', minItems: 1_000_000, items: { type: 'string', minLength: 1_000_000 } } } },
    });
    let finish: string | null = null;
    let completionTokens = 0;
    for await (const chunk of stream) {
      finish = chunk.choices[0]?.finish_reason ?? finish;
      completionTokens = chunk.usage?.completion_tokens ?? completionTokens;
    }
    assert.equal(finish, 'length');
    assert.ok(completionTokens > 0 && completionTokens <= 16);
    await assertServerAnswers();
  });
});

describe('long prompts', () => {
  test('a prompt of one 100,000-character run is counted and answered', async () => {
    const r = await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'A'.repeat(100_000) }], max_tokens: 8 });
    // About 8 letters a token (o200k), give or take one token per forced cut.
    assert.ok(Math.abs(r.usage!.prompt_tokens - 100_000 / 8) < 1_000, `${r.usage!.prompt_tokens}`);
    await assertServerAnswers();
  });

  test('prompts that made the offline heuristics quadratic are answered (they read a bounded excerpt)', async () => {
    // 200,000 digits before no "=": the continuation's arithmetic expression backtracked
    // for minutes; "say" then 200,000 spaces did the same to the echo.
    const digits = await client.completions.create({ model: 'agent', prompt: '1'.repeat(200_000), max_tokens: 8 });
    assert.ok(digits.usage!.prompt_tokens > 0);
    const say = await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: `say a${' '.repeat(200_000)}b` }], max_tokens: 8 });
    assert.ok(say.choices[0]!.message.content);
    await assertServerAnswers();
  });
});
