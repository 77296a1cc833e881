// POST /v1/chat/completions and /v1/completions on the offline engine, driven by the
// official openai SDK: answers, streams in SPEC order, function calls assembled from
// fragments, json_schema output, the contract's refused/limited/ignored rows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import OpenAI from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startTestServer();
  // Function calling is a key switch (off until turned on); these tests send tools.
  client = server.openai((await server.createKey({ permissions: { function_calling: true } })).key);
});
after(() => server.close());

const user = (content: string) => [{ role: 'user' as const, content }];

describe('chat completions', () => {
  test('a non-streaming answer has the reference shape, usage and svc', async () => {
    const r = await client.chat.completions.create({ model: 'agent', messages: user('What is 12 * 7?') });
    assert.match(r.id, /^chatcmpl-/);
    assert.equal(r.object, 'chat.completion');
    assert.equal(r.model, 'agent');
    assert.match(r.choices[0]!.message.content ?? '', /84/);
    assert.equal(r.choices[0]!.finish_reason, 'stop');
    assert.ok(r.usage!.prompt_tokens > 0 && r.usage!.completion_tokens > 0);
    assert.equal(r.usage!.total_tokens, r.usage!.prompt_tokens + r.usage!.completion_tokens);
    assert.equal(typeof (r as unknown as { svc: number }).svc, 'number');
    assert.ok((r as unknown as { svc: number }).svc > 0);
  });

  test('a stream: role chunk, content chunks, finish chunk, usage chunk with usage.svc, [DONE]', async () => {
    const res = await server.fetch('/v1/chat/completions', {
      method: 'POST',
      key: (await server.createKey()).key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agent', messages: user('Say hello to the world'), stream: true, stream_options: { include_usage: true } }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
    const text = await res.text();
    const events = text.split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
    const usageChunk = chunks.at(-1);
    assert.deepEqual(usageChunk.choices, []);
    assert.ok(usageChunk.usage.svc > 0);
    const finish = chunks.at(-2);
    assert.equal(finish.choices[0].finish_reason, 'stop');
    const content = chunks.slice(1, -2);
    assert.ok(content.length > 3, 'token by token');
    for (const c of content) {
      assert.equal(c.object, 'chat.completion.chunk');
      assert.equal(typeof c.choices[0].delta.content, 'string');
      assert.equal(c.usage, null);
    }
  });

  test('without include_usage there is no usage chunk; the SDK assembles the stream', async () => {
    const stream = await client.chat.completions.create({ model: 'agent', messages: user('who are you'), stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const c of stream) {
      assert.ok(c.choices.length === 1, 'no usage-only chunk');
      text += c.choices[0]!.delta.content ?? '';
      finish = c.choices[0]!.finish_reason ?? finish;
    }
    assert.match(text, /offline/i);
    assert.equal(finish, 'stop');
  });

  test('agent-think streams reasoning_content before the answer', async () => {
    const stream = await client.chat.completions.create({ model: 'agent-think', messages: user('What is 2 + 2?'), stream: true });
    const kinds: string[] = [];
    for await (const c of stream) {
      const d = c.choices[0]?.delta as Record<string, unknown> | undefined;
      if (d?.reasoning_content) kinds.push('reasoning');
      if (d?.content) kinds.push('content');
    }
    assert.ok(kinds.includes('reasoning') && kinds.includes('content'));
    assert.ok(kinds.lastIndexOf('reasoning') < kinds.indexOf('content'));
  });

  test('a streamed function call arrives in fragments and assembles into valid arguments', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city', 'unit'], additionalProperties: false },
        },
      },
    ];
    const stream = client.chat.completions.stream({ model: 'agent', messages: user('What is the weather in Paris?'), tools, tool_choice: 'required' });
    let fragments = 0;
    stream.on('chunk', (c) => {
      if (c.choices[0]?.delta.tool_calls) fragments++;
    });
    const final = await stream.finalChatCompletion();
    assert.ok(fragments > 2, `arguments arrive in fragments (${fragments})`);
    const call = final.choices[0]!.message.tool_calls![0]!;
    assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(call.type, 'function');
    assert.equal(call.type === 'function' && call.function.name, 'get_weather');
    const args = JSON.parse(call.type === 'function' ? call.function.arguments : '{}');
    assert.equal(args.city, 'Paris');
    assert.ok(['c', 'f'].includes(args.unit));

    // After the tool result the model answers with it.
    const followUp = await client.chat.completions.create({
      model: 'agent',
      tools,
      messages: [
        ...user('What is the weather in Paris?'),
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '21 degrees and sunny' },
      ],
    });
    assert.match(followUp.choices[0]!.message.content ?? '', /21 degrees/);
  });

  test('legacy functions/function_call answer with function_call', async () => {
    const r = await client.chat.completions.create({
      model: 'agent',
      messages: user('lookup the order 42'),
      functions: [{ name: 'lookup_order', parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } }],
      function_call: { name: 'lookup_order' },
    });
    assert.equal(r.choices[0]!.finish_reason, 'function_call');
    assert.equal(r.choices[0]!.message.function_call?.name, 'lookup_order');
    assert.equal(typeof JSON.parse(r.choices[0]!.message.function_call!.arguments).id, 'number');
  });

  test('without the function_calling switch, tools and functions are 403 model_not_allowed naming the switch', async () => {
    const plain = server.openai((await server.createKey()).key);
    const tool = { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };
    for (const extra of [{ tools: [tool] }, { functions: [{ name: 'lookup' }] }]) {
      await assert.rejects(plain.chat.completions.create({ model: 'agent', messages: user('hi'), ...extra }), (e: unknown) => {
        assert.ok(e instanceof OpenAI.PermissionDeniedError);
        assert.equal(e.code, 'model_not_allowed');
        assert.equal(e.param, Object.keys(extra)[0]);
        assert.match(e.message, /function_calling/);
        return true;
      });
    }
    // Without tools the same key answers.
    assert.equal((await plain.chat.completions.create({ model: 'agent', messages: user('hi') })).object, 'chat.completion');
  });

  test('json_schema output validates against its schema; json_object is an object', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
        score: { type: 'integer', minimum: 1, maximum: 5 },
        address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      },
      required: ['name', 'tags', 'score', 'address'],
      additionalProperties: false,
    };
    const r = await client.chat.completions.create({
      model: 'agent',
      messages: user('Describe a restaurant'),
      response_format: { type: 'json_schema', json_schema: { name: 'restaurant', schema, strict: true } },
    });
    const value = JSON.parse(r.choices[0]!.message.content!);
    const validate = new Ajv2020({ strict: false }).compile(schema);
    assert.ok(validate(value), JSON.stringify(validate.errors));

    const o = await client.chat.completions.create({ model: 'agent', messages: user('hi'), response_format: { type: 'json_object' } });
    const obj = JSON.parse(o.choices[0]!.message.content!);
    assert.equal(typeof obj, 'object');
    assert.ok(obj !== null && !Array.isArray(obj));
  });

  test('stop, max_tokens, seed and logprobs', async () => {
    const stopped = await client.chat.completions.create({ model: 'agent', messages: user('Say exactly: alpha beta gamma'), stop: ['beta'] });
    assert.ok(!stopped.choices[0]!.message.content!.includes('beta'));
    const cut = await client.chat.completions.create({ model: 'agent', messages: user('Tell me a long story about the sea'), max_tokens: 5 });
    assert.equal(cut.choices[0]!.finish_reason, 'length');
    assert.equal(cut.usage!.completion_tokens, 5);
    const a = await client.chat.completions.create({ model: 'agent', messages: user('Tell me something'), seed: 7, temperature: 1 });
    const b = await client.chat.completions.create({ model: 'agent', messages: user('Tell me something'), seed: 7, temperature: 1 });
    assert.equal(a.choices[0]!.message.content, b.choices[0]!.message.content);
    const lp = await client.chat.completions.create({ model: 'agent', messages: user('hello'), logprobs: true, top_logprobs: 3 });
    const entries = lp.choices[0]!.logprobs!.content!;
    assert.ok(entries.length > 0);
    for (const e of entries) {
      assert.ok(e.logprob <= 0);
      assert.equal(e.top_logprobs.length, 3);
    }
  });

  test("the key's max_output_tokens caps every request's output, and its credit reservation", async () => {
    // 0.02 credits cannot cover the default 4096-token output cap, but the key's 5 tokens it can.
    const account = await server.createAccount(0.02);
    const capped = await server.createKey({ account_id: account.id, max_output_tokens: 5 });
    const c = server.openai(capped.key);
    const cut = await c.chat.completions.create({ model: 'agent', messages: user('Tell me a long story about the sea'), max_tokens: 500 });
    assert.equal(cut.choices[0]!.finish_reason, 'length');
    assert.equal(cut.usage!.completion_tokens, 5);
    const unset = await c.completions.create({ model: 'agent', prompt: 'Tell me a long story about the sea' });
    assert.equal(unset.usage!.completion_tokens, 5, 'the service default is capped too');
    // A request asking for less than the key allows gets what it asked for.
    const fewer = await c.chat.completions.create({ model: 'agent', messages: user('Tell me a long story about the sea'), max_tokens: 3 });
    assert.equal(fewer.usage!.completion_tokens, 3);
    // The same account through a key without a cap reserves for 4096 output tokens: refused.
    const uncapped = await server.createKey({ account_id: account.id });
    await assert.rejects(server.openai(uncapped.key).chat.completions.create({ model: 'agent', messages: user('hi') }), (e: unknown) => (e as { status: number }).status === 429);
  });

  test('refused, limited and ignored rows through the SDK', async () => {
    await assert.rejects(client.chat.completions.create({ model: 'agent', messages: user('x'), audio: { voice: 'alloy', format: 'mp3' }, modalities: ['text', 'audio'] }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.equal(e.code, 'unsupported_parameter');
      return true;
    });
    await assert.rejects(client.chat.completions.create({ model: 'agent', messages: user('x'), n: 3 }), (e: unknown) => (e as { param: string }).param === 'n');
    await assert.rejects(client.chat.completions.create({ model: 'agent', messages: user('x'), service_tier: 'flex' }), (e: unknown) => (e as { param: string }).param === 'service_tier');
    const ok = await client.chat.completions
      .create({ model: 'agent', messages: user('x'), n: 1, service_tier: 'auto', modalities: ['text'], prompt_cache_key: 'k', stream_options: null, frobnicate: 1 } as never)
      .withResponse();
    assert.equal(ok.response.headers.get('x-service-ignored-parameters'), 'frobnicate');
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: user('x') }), OpenAI.NotFoundError);
    await assert.rejects(
      client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-nope' } }] }] }),
      (e: unknown) => (e as { status: number; param: string }).status === 400 && (e as { param: string }).param === 'messages[0].content[0].file.file_id',
    );
  });

  test('images by https or data URL are accepted', async () => {
    const r = await client.chat.completions.create({
      model: 'agent',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this image?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }],
    });
    assert.equal(r.choices[0]!.finish_reason, 'stop');
    await assert.rejects(
      client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://insecure.example/x.png' } }] }] }),
      OpenAI.BadRequestError,
    );
  });
});

describe('text completions', () => {
  test('a prompt string or one-item list; limited fields; streaming', async () => {
    const r = await client.completions.create({ model: 'agent', prompt: '2 + 3 =', max_tokens: 8 });
    assert.equal(r.object, 'text_completion');
    assert.match(r.choices[0]!.text, /5/);
    assert.ok((r as unknown as { svc: number }).svc > 0);
    const list = await client.completions.create({ model: 'agent', prompt: ['Once upon a time'], max_tokens: 4 });
    assert.equal(list.choices[0]!.finish_reason, 'length');
    await assert.rejects(client.completions.create({ model: 'agent', prompt: ['a', 'b'] }), OpenAI.BadRequestError);
    await assert.rejects(client.completions.create({ model: 'agent', prompt: 'x', echo: true }), (e: unknown) => (e as { code: string }).code === 'unsupported_parameter');
    await assert.rejects(client.completions.create({ model: 'agent', prompt: 'x', best_of: 2 }), (e: unknown) => (e as { param: string }).param === 'best_of');
    const stream = await client.completions.create({ model: 'agent', prompt: 'Hello', stream: true, stream_options: { include_usage: true } });
    let text = '';
    let svc = 0;
    for await (const c of stream) {
      text += c.choices[0]?.text ?? '';
      if (c.usage) svc = (c.usage as unknown as { svc: number }).svc;
    }
    assert.ok(text.length > 0);
    assert.ok(svc > 0);
  });
});

describe('stored chat completions', () => {
  test('store: true keeps the completion: retrieve, list by metadata, messages, update, delete', async () => {
    const created = await client.chat.completions.create({
      model: 'agent',
      messages: [{ role: 'system', content: 'Be brief.' }, ...user('What is 6 * 7?')],
      store: true,
      metadata: { run: 'stored-1' },
    });
    const got = await client.chat.completions.retrieve(created.id);
    assert.equal(got.id, created.id);
    assert.equal(got.choices[0]!.message.content, created.choices[0]!.message.content);
    assert.deepEqual((got as unknown as { metadata: unknown }).metadata, { run: 'stored-1' });

    const listed = await client.chat.completions.list({ metadata: { run: 'stored-1' } });
    assert.deepEqual(listed.data.map((c) => c.id), [created.id]);
    const messages = await client.chat.completions.messages.list(created.id);
    assert.deepEqual(messages.data.map((m) => m.role), ['system', 'user']);

    const updated = await client.chat.completions.update(created.id, { metadata: { run: 'stored-1', reviewed: 'yes' } });
    assert.equal((updated as unknown as { metadata: Record<string, string> }).metadata.reviewed, 'yes');
    const deleted = await client.chat.completions.delete(created.id);
    assert.deepEqual(deleted, { id: created.id, object: 'chat.completion.deleted', deleted: true });
    await assert.rejects(client.chat.completions.retrieve(created.id), OpenAI.NotFoundError);
  });

  test('a streamed completion with store: true is kept; without store it is not', async () => {
    const stream = await client.chat.completions.create({ model: 'agent', messages: user('hello'), stream: true, store: true });
    let id = '';
    let text = '';
    for await (const c of stream) {
      id = c.id;
      text += c.choices[0]?.delta.content ?? '';
    }
    const got = await client.chat.completions.retrieve(id);
    assert.equal(got.choices[0]!.message.content, text);
    const plain = await client.chat.completions.create({ model: 'agent', messages: user('hello') });
    await assert.rejects(client.chat.completions.retrieve(plain.id), OpenAI.NotFoundError);
    // Another account cannot see it.
    const other = server.openai((await server.createKey()).key);
    await assert.rejects(other.chat.completions.retrieve(id), OpenAI.NotFoundError);
  });
});
