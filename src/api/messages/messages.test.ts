// The messages-style surface driven by both generations of the vendor's SDK installed
// side by side (@anthropic-ai/sdk 1.x, which sends `Authorization: Bearer`, and 0.x as
// the alias anthropic-sdk-0, which sends `x-api-key`), with only baseURL and the key
// set: answers, streams that accumulate to the same message, tool round trips per
// tool_choice, thinking signatures across turns, structured output, count_tokens,
// models, the vendor's error classes per status, and the same answer and charge as
// /v1/chat/completions.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Anthropic1 from '@anthropic-ai/sdk';
import Anthropic0 from 'anthropic-sdk-0';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

type Client = InstanceType<typeof Anthropic1>;
const generations: [string, (apiKey: string) => Client][] = [
  ['@anthropic-ai/sdk 1.x', (apiKey) => new Anthropic1({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 })],
  ['@anthropic-ai/sdk 0.x', (apiKey) => new Anthropic0({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 }) as unknown as Client],
];

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

for (const [generation, make] of generations) {
  describe(`messages surface with ${generation}`, () => {
    let client: Client;
    let keyId: string;
    before(async () => {
      const created = await server.createKey({ permissions: { function_calling: true } });
      keyId = created.id;
      client = make(created.key);
    });

    test('create: a Message with text, stop reason, usage; _request_id is X-Request-Id', async () => {
      const { data: m, response } = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 200, messages: [{ role: 'user', content: 'What is 12 * 7?' }] }).withResponse();
      assert.match(m.id, /^msg_/);
      assert.equal(m.type, 'message');
      assert.equal(m.role, 'assistant');
      assert.equal(m.model, 'claude-sonnet-4-5', 'the model is echoed as sent');
      assert.equal(m.content[0]!.type, 'text');
      assert.match((m.content[0] as { text: string }).text, /84/);
      assert.ok(!('citations' in m.content[0]!), 'no citations key on text blocks');
      assert.equal(m.stop_reason, 'end_turn');
      assert.equal(m.stop_sequence, null);
      assert.ok(m.usage.input_tokens > 0 && m.usage.output_tokens > 0);
      assert.equal((m as unknown as { _request_id: string })._request_id, response.headers.get('x-request-id'));
      assert.equal(response.headers.get('request-id'), response.headers.get('x-request-id'));
    });

    test('stream(): the events accumulate to the non-streamed message', async () => {
      const params = { model: 'agent', max_tokens: 300, messages: [{ role: 'user' as const, content: 'Summarize: trains cross rivers near small towns every morning.' }] };
      const whole = await client.messages.create(params);
      const events: string[] = [];
      const stream = client.messages.stream(params);
      stream.on('streamEvent', (e: { type: string }) => events.push(e.type));
      // parsed_output is the SDK's own addition to a streamed message.
      const { parsed_output: _parsed, ...final } = (await stream.finalMessage()) as typeof whole & { parsed_output?: unknown };
      assert.deepEqual({ ...final, id: '' }, { ...whole, id: '' });
      assert.equal(events[0], 'message_start');
      assert.equal(events.at(-1), 'message_stop');
      assert.equal(events.at(-2), 'message_delta');
      assert.ok(events.filter((e) => e === 'content_block_delta').length > 3, 'token by token');
    });

    test('stop_sequences: stop_reason stop_sequence names the sequence', async () => {
      const m = await client.messages.create({ model: 'agent', max_tokens: 100, stop_sequences: ['7'], messages: [{ role: 'user', content: 'What is 12 * 7?' }] });
      assert.equal(m.stop_reason, 'stop_sequence');
      assert.equal(m.stop_sequence, '7');
      assert.ok(!(m.content[0] as { text: string }).text.includes('7'));
    });

    for (const choice of ['auto', 'any', 'tool', 'none'] as const) {
      test(`tool round trip with tool_choice ${choice}`, async () => {
        const tool_choice = choice === 'tool' ? { type: 'tool' as const, name: 'get_weather' } : { type: choice };
        const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
        const first = await client.messages.create({ model: 'agent', max_tokens: 300, tools: [weatherTool], tool_choice, messages: [question] });
        if (choice === 'none') {
          assert.ok(first.content.every((b) => b.type !== 'tool_use'));
          assert.equal(first.stop_reason, 'end_turn');
          return;
        }
        assert.equal(first.stop_reason, 'tool_use');
        const use = first.content.find((b) => b.type === 'tool_use') as { id: string; name: string; input: Record<string, unknown> };
        assert.equal(use.name, 'get_weather');
        assert.equal(typeof use.input, 'object', 'input is an object, not a string');
        assert.equal(typeof use.input.city, 'string');
        const second = await client.messages.create({
          model: 'agent',
          max_tokens: 300,
          tools: [weatherTool],
          messages: [question, { role: 'assistant', content: first.content as never }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny, 24 C' }] }],
        });
        assert.equal(second.stop_reason, 'end_turn');
        assert.ok(second.content.some((b) => b.type === 'text'));
      });
    }

    test('a streamed tool call arrives as input_json_delta fragments and an object input', async () => {
      const stream = client.messages.stream({ model: 'agent', max_tokens: 300, tools: [weatherTool], tool_choice: { type: 'any' }, messages: [{ role: 'user', content: 'Weather in Rome?' }] });
      const fragments: string[] = [];
      stream.on('inputJson', (partial: string) => fragments.push(partial));
      const final = await stream.finalMessage();
      const use = final.content.find((b) => b.type === 'tool_use') as { input: Record<string, unknown> };
      assert.ok(fragments.length > 1);
      assert.equal(typeof use.input.city, 'string');
    });

    test('thinking: a signed block carries across turns; a tampered one is refused', async () => {
      const first = await client.messages.create({ model: 'agent-think', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'What is 6 * 7?' }] });
      const thinking = first.content.find((b) => b.type === 'thinking') as { thinking: string; signature: string };
      assert.ok(thinking.thinking.length > 0);
      assert.ok(thinking.signature.length > 10);
      const turn = (content: unknown) =>
        client.messages.create({
          model: 'agent-think',
          max_tokens: 4000,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          messages: [{ role: 'user', content: 'What is 6 * 7?' }, { role: 'assistant', content: content as never }, { role: 'user', content: 'And plus one?' }],
        });
      const second = await turn(first.content);
      assert.ok(second.content.some((b) => b.type === 'text'));
      const tampered = first.content.map((b) => (b.type === 'thinking' ? { ...b, thinking: `${(b as { thinking: string }).thinking} (edited)` } : b));
      await assert.rejects(turn(tampered), (e: unknown) => e instanceof Anthropic1.BadRequestError || (e as { status?: number }).status === 400);
      // A budget at or above max_tokens is refused.
      await assert.rejects(
        client.messages.create({ model: 'agent-think', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [{ role: 'user', content: 'hi' }] }),
        (e: unknown) => (e as { status?: number }).status === 400,
      );
    });

    test('adaptive thinking with display omitted: empty thinking, signature kept', async () => {
      const m = await client.messages.create({
        model: 'claude-opus-4-5',
        max_tokens: 4000,
        thinking: { type: 'adaptive', display: 'omitted' } as never,
        output_config: { effort: 'low' } as never,
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      const thinking = m.content.find((b) => b.type === 'thinking') as { thinking: string; signature: string } | undefined;
      assert.ok(thinking, 'a vendor name with thinking runs on the thinking model');
      assert.equal(thinking.thinking, '');
      assert.ok(thinking.signature.length > 10);
    });

    test('output_config.format: the text validates against the schema', async () => {
      const schema = { type: 'object', properties: { answer: { type: 'integer' }, unit: { type: 'string' } }, required: ['answer', 'unit'], additionalProperties: false };
      const m = await client.messages.create({ model: 'agent', max_tokens: 400, output_config: { format: { type: 'json_schema', schema } } as never, messages: [{ role: 'user', content: 'How many legs does a spider have?' }] });
      const text = (m.content.find((b) => b.type === 'text') as { text: string }).text;
      const validate = new Ajv2020().compile(schema);
      assert.ok(validate(JSON.parse(text)), JSON.stringify(validate.errors));
    });

    test('count_tokens equals the input tokens the same request is charged for', async () => {
      const params = { model: 'agent', system: 'You are terse.', tools: [weatherTool], messages: [{ role: 'user' as const, content: 'Tell me about the weather in Oslo and Bergen.' }] };
      const counted = await client.messages.countTokens(params);
      const m = await client.messages.create({ ...params, max_tokens: 200 });
      assert.equal(counted.input_tokens, m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0));
    });

    test('cache_control: a repeated prefix reads from the per-account cache', async () => {
      const system = [{ type: 'text' as const, text: `${generation}: ${'Rivers carry water to the sea through valleys and plains. '.repeat(120)}`, cache_control: { type: 'ephemeral' as const } }];
      const params = { model: 'agent', max_tokens: 50, system, messages: [{ role: 'user' as const, content: 'Summarize the rules.' }] };
      const first = await client.messages.create(params);
      assert.ok((first.usage.cache_creation_input_tokens ?? 0) >= 1024, JSON.stringify(first.usage));
      assert.equal(first.usage.cache_read_input_tokens, 0);
      const second = await client.messages.create({ ...params, messages: [{ role: 'user', content: 'Now list them.' }] });
      assert.equal(second.usage.cache_read_input_tokens, first.usage.cache_creation_input_tokens);
      assert.equal(second.usage.cache_creation_input_tokens, 0);
      const counted = await client.messages.countTokens({ model: 'agent', system, messages: [{ role: 'user', content: 'Now list them.' }] });
      assert.equal(counted.input_tokens, second.usage.input_tokens + (second.usage.cache_read_input_tokens ?? 0));
      // A fifth breakpoint is refused, naming it.
      const five = Array.from({ length: 5 }, (_, i) => ({ type: 'text' as const, text: `part ${i}`, cache_control: { type: 'ephemeral' as const } }));
      await assert.rejects(client.messages.create({ ...params, system: five }), (e: unknown) => (e as { status?: number }).status === 400 && /system\[4\]\.cache_control/.test((e as Error).message));
    });

    test('models: list in pages and retrieve, in the vendor shape', async () => {
      const ids: string[] = [];
      for await (const model of client.models.list({ limit: 1 })) ids.push(model.id);
      assert.deepEqual(ids, ['agent', 'agent-think']);
      const one = await client.models.retrieve('agent-think');
      assert.equal(one.type, 'model');
      assert.equal(one.id, 'agent-think');
      await assert.rejects(client.models.retrieve('nope'), (e: unknown) => (e as { status?: number }).status === 404);
    });

    test('errors take the vendor shape and status: 400, 401, 404', async () => {
      await assert.rejects(client.messages.create({ model: 'agent', max_tokens: 0, messages: [{ role: 'user', content: 'x' }] }), (e: unknown) => {
        const err = e as { status: number; error: { type: string; error: { type: string; message: string }; request_id: string }; requestID?: string };
        assert.equal(err.status, 400);
        assert.equal(err.error.type, 'error');
        assert.equal(err.error.error.type, 'invalid_request_error');
        assert.match(err.error.request_id, /^req_/);
        return true;
      });
      const bad = make('sk-agent-not-a-real-key-0123456789abcdef');
      await assert.rejects(bad.messages.create({ model: 'agent', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }), (e: unknown) => (e as { status?: number }).status === 401);
      await assert.rejects(
        client.messages.create({ model: 'agent', max_tokens: 10, tools: [{ type: 'computer_20250124', name: 'computer', display_width_px: 10, display_height_px: 10 } as never], messages: [{ role: 'user', content: 'x' }] }),
        (e: unknown) => (e as { status?: number }).status === 400 && /computer/.test((e as Error).message),
      );
      assert.ok(keyId);
    });
  });
}

describe('messages surface: limits, credits and the /v1 twin', () => {
  test('a key at its usage cap gets 402 billing_error here and 429 on /v1', async () => {
    const { key } = await server.createKey({ limits: [{ metric: 'requests', period: 'day', max: 1 }] });
    const client = new Anthropic1({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
    await client.messages.create({ model: 'agent', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    await assert.rejects(client.messages.create({ model: 'agent', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => {
      const err = e as { status: number; error: { error: { type: string } } };
      assert.equal(err.status, 402);
      assert.equal(err.error.error.type, 'billing_error');
      return true;
    });
    const res = await server.fetch('/v1/chat/completions', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'hi' }] }) });
    assert.equal(res.status, 429);
  });

  test('an account without credits gets 402; the requests-per-minute limit 429 rate_limit_error', async () => {
    const account = await server.createAccount(0);
    const { key } = await server.createKey({ account_id: account.id });
    const client = new Anthropic1({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
    await assert.rejects(client.messages.create({ model: 'agent', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => (e as { status?: number }).status === 402);
    const limited = await server.createKey({ rpm: 1 });
    const rl = new Anthropic1({ apiKey: limited.key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
    await rl.messages.create({ model: 'agent', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    await assert.rejects(rl.messages.create({ model: 'agent', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => {
      assert.ok(e instanceof Anthropic1.RateLimitError);
      assert.equal((e as unknown as { error: { error: { type: string } } }).error.error.type, 'rate_limit_error');
      return true;
    });
  });

  test('tools need the key\'s Function calling switch, as on /v1: 403 permission_error without it', async () => {
    const { key } = await server.createKey();
    const client = new Anthropic1({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
    await assert.rejects(client.messages.create({ model: 'agent', max_tokens: 20, tools: [weatherTool], messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => {
      assert.ok(e instanceof Anthropic1.PermissionDeniedError);
      assert.equal((e as unknown as { error: { error: { type: string } } }).error.error.type, 'permission_error');
      return true;
    });
  });

  test('x-api-key and Authorization naming different keys: 401', async () => {
    const a = await server.createKey();
    const b = await server.createKey();
    const res = await fetch(`${server.origin}/api/messages/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.key, authorization: `Bearer ${b.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'agent', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 401);
    const body = (await res.json()) as { type: string; error: { type: string } };
    assert.equal(body.error.type, 'authentication_error');
  });

  test('the same prompt here and on /v1/chat/completions: same text, tokens and charge; both in the activity log', async () => {
    const { key, id } = await server.createKey();
    const content = 'Explain briefly why the sky looks blue.';
    const client = new Anthropic1({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
    const { data: m, response } = await client.messages.create({ model: 'agent', max_tokens: 300, messages: [{ role: 'user', content }] }).withResponse();
    const chat = await server.openai(key).chat.completions.create({ model: 'agent', max_tokens: 300, messages: [{ role: 'user', content }] });
    assert.equal((m.content[0] as { text: string }).text, chat.choices[0]!.message.content);
    assert.equal(m.usage.input_tokens, chat.usage!.prompt_tokens);
    assert.equal(m.usage.output_tokens, chat.usage!.completion_tokens);
    assert.equal(Number(response.headers.get('x-service-svc')), (chat as unknown as { svc: number }).svc);
    const activity = await server.fetch(`/admin/v1/activity?key_id=${id}`, { headers: { authorization: 'Bearer test-admin-token-0123456789' } });
    const rows = ((await activity.json()) as { data: { endpoint: string }[] }).data.map((r) => r.endpoint).sort();
    assert.deepEqual(rows, ['/api/messages/v1/messages', '/v1/chat/completions']);
  });

  test('unknown fields are named in X-Service-Ignored-Parameters; ?beta=true is accepted', async () => {
    const { key } = await server.createKey();
    const res = await fetch(`${server.origin}/api/messages/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
      body: JSON.stringify({ model: 'agent', max_tokens: 10, something_new: 1, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('x-service-ignored-parameters') ?? '', /something_new/);
  });

  test('the root publishes its own OpenAPI document with the vendor error shape', async () => {
    const res = await fetch(`${server.origin}/api/messages/v1/openapi.json`);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as { paths: Record<string, unknown>; info: { version: string } };
    assert.ok(doc.paths['/messages'] && doc.paths['/messages/count_tokens'] && doc.paths['/models']);
    assert.equal(doc.info.version, '1.0.0', 'SPEC Versioning item 5');
  });
});
