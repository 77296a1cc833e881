// Tools in /v1/responses with the official openai SDK: client-run tools round trips
// (function, custom, namespace, local shell, computer, apply_patch), switches, hosted
// tools refused until they exist, web search never called; and, against a recording
// upstream, what the model sees when a response continues another (on any instance).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { checkStream } from './event-checks.test-support.ts';

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

describe('client-run tools on the offline engine', () => {
  let server: TestServer;
  let client: OpenAI;
  before(async () => {
    server = await startTestServer();
    const { key } = await server.createKey({ permissions: { function_calling: true } });
    client = server.openai(key);
  });
  after(() => server.close());

  test('a function call, answered with previous_response_id or with the whole history', async () => {
    const r = await client.responses.create({ model: 'agent', input: 'What is the weather in Paris?', tools: [weather] });
    const call = r.output.find((i) => i.type === 'function_call') as any;
    assert.ok(call, JSON.stringify(r.output));
    assert.equal(call.name, 'get_weather');
    assert.match(call.id, /^fc_/);
    assert.match(call.call_id, /^call_/);
    assert.equal(JSON.parse(call.arguments).city, 'Paris');
    const output = { type: 'function_call_output' as const, call_id: call.call_id, output: '18 C and sunny' };
    const byId = await client.responses.create({ model: 'agent', previous_response_id: r.id, input: [output], tools: [weather] });
    assert.match(byId.output_text, /18 C and sunny/);
    const full = await client.responses.create({ model: 'agent', input: [{ role: 'user', content: 'What is the weather in Paris?' }, call, output], tools: [weather] });
    assert.match(full.output_text, /18 C and sunny/);
  });

  test('streamed function call events: added, argument deltas, done with the name, item done', async () => {
    const events: any[] = [];
    for await (const e of await client.responses.create({ model: 'agent', input: 'What is the weather in Paris?', tools: [weather], stream: true })) events.push(e);
    const final = checkStream(events);
    const types = events.map((e) => e.type);
    assert.ok(types.includes('response.function_call_arguments.delta'));
    const done = events.find((e) => e.type === 'response.function_call_arguments.done');
    assert.equal(done.name, 'get_weather');
    assert.equal(done.arguments, final.output[0].arguments);
  });

  test('a key without the Function calling switch is refused before anything runs', async () => {
    const { key } = await server.createKey();
    await assert.rejects(server.openai(key).responses.create({ model: 'agent', input: 'hi', tools: [weather] }), (e: any) => e.status === 403 && e.param === 'tools[0].type');
  });

  test('a hosted tool without its switch is refused naming the tool (image_generation: image-generation.test.ts)', async () => {
    const { key } = await server.createKey({ permissions: { function_calling: true } });
    await assert.rejects(server.openai(key).responses.create({ model: 'agent', input: 'hi', tools: [weather, { type: 'image_generation' } as never] }), (e: any) => e.status === 403 && e.param === 'tools[1].type');
  });

  test('web search is accepted and never called: the model says it cannot browse', async () => {
    const r = await client.responses.create({ model: 'agent', input: 'Search the web for the latest news about Mars', tools: [{ type: 'web_search', external_web_access: false } as never] });
    assert.equal(r.output.some((i) => i.type === 'web_search_call'), false);
    assert.match(r.output_text, /cannot browse/i);
  });

  test('a custom (freeform) tool: a custom_tool_call with raw input, answered by custom_tool_call_output', async () => {
    const tools = [{ type: 'custom' as const, name: 'apply_patch', description: 'Use the apply_patch tool to edit files.', format: { type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: begin_patch hunk+ end_patch' } }];
    const events: any[] = [];
    for await (const e of await client.responses.create({ model: 'agent', input: 'Create a file hello.txt containing "Hello world"', tools, stream: true })) events.push(e);
    const final = checkStream(events);
    const call = final.output[0];
    assert.equal(call.type, 'custom_tool_call');
    assert.equal(call.name, 'apply_patch');
    assert.equal(call.input, '*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch\n');
    assert.equal(events.find((e) => e.type === 'response.custom_tool_call_input.done').input, call.input);
    const next = await client.responses.create({ model: 'agent', previous_response_id: final.id, input: [{ type: 'custom_tool_call_output', call_id: call.call_id, output: 'Done: hello.txt created' } as never], tools });
    assert.match(next.output_text, /hello\.txt created/);
  });

  test('a namespace groups functions: the call names its namespace', async () => {
    const r = await client.responses.create({
      model: 'agent',
      input: 'What is the weather in Paris?',
      tools: [{ type: 'namespace', name: 'crm', description: 'tools', tools: [weather] } as never],
    });
    const call = r.output[0] as any;
    assert.equal(call.type, 'function_call');
    assert.equal(call.name, 'get_weather');
    assert.equal(call.namespace, 'crm');
    const next = await client.responses.create({ model: 'agent', previous_response_id: r.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'rainy' }] });
    assert.match(next.output_text, /rainy/);
  });

  test('the local shell: a shell_call with the commands, answered by shell_call_output', async () => {
    const tools = [{ type: 'shell', environment: { type: 'local' } } as never];
    const r = await client.responses.create({ model: 'agent', input: 'Run `echo PINEAPPLE` and tell me its output.', tools });
    const call = r.output[0] as any;
    assert.equal(call.type, 'shell_call');
    assert.deepEqual(call.action.commands, ['echo PINEAPPLE']);
    assert.match(call.id, /^sh_/);
    const next = await client.responses.create({
      model: 'agent',
      previous_response_id: r.id,
      input: [{ type: 'shell_call_output', call_id: call.call_id, output: [{ stdout: 'PINEAPPLE\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] } as never],
      tools,
    });
    assert.match(next.output_text, /PINEAPPLE/);
  });

  test('apply_patch and computer: their call items, and their outputs accepted back', async () => {
    const patch = await client.responses.create({ model: 'agent', input: 'Create a file notes.md containing "first note"', tools: [{ type: 'apply_patch' } as never] });
    const call = patch.output[0] as any;
    assert.equal(call.type, 'apply_patch_call');
    assert.deepEqual(call.operation, { type: 'create_file', path: 'notes.md', diff: '+first note\n' });
    const done = await client.responses.create({ model: 'agent', previous_response_id: patch.id, input: [{ type: 'apply_patch_call_output', call_id: call.call_id, status: 'completed', output: 'created notes.md' } as never], tools: [{ type: 'apply_patch' } as never] });
    assert.equal(done.status, 'completed');

    const screen = await client.responses.create({ model: 'agent', input: 'Take a screenshot', tools: [{ type: 'computer' } as never] });
    const shot = screen.output[0] as any;
    assert.equal(shot.type, 'computer_call');
    assert.deepEqual(shot.actions, [{ type: 'screenshot' }]);
    const after = await client.responses.create({
      model: 'agent',
      previous_response_id: screen.id,
      input: [{ type: 'computer_call_output', call_id: shot.call_id, output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,iVBORw0KGgo=' } } as never],
      tools: [{ type: 'computer' } as never],
    });
    assert.equal(after.status, 'completed');
  });

  test('tool_choice naming a tool that is not offered is refused', async () => {
    await assert.rejects(client.responses.create({ model: 'agent', input: 'hi', tools: [weather], tool_choice: { type: 'function', name: 'nope' } }), (e: any) => e.status === 400 && e.param === 'tool_choice');
  });
});

describe('continuation against a recording upstream', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let client: OpenAI;
  const env = (u: FakeUpstream) => ({ UPSTREAM_BASE_URL: u.baseUrl, UPSTREAM_MODEL_AGENT: 'up', UPSTREAM_MODEL_AGENT_THINK: 'up-think', UPSTREAM_MAX_RETRIES: '0', UPSTREAM_PRICE_INPUT_PER_MTOK: '1', UPSTREAM_PRICE_OUTPUT_PER_MTOK: '1' });
  before(async () => {
    let n = 0;
    upstream = await startFakeUpstream((_req, res) => {
      n++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'up', choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2 } }));
    });
    server = await startTestServer(env(upstream));
    const { key } = await server.createKey();
    client = server.openai(key);
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('the model sees the earlier chain in order, and only this request’s instructions', async () => {
    const first = await client.responses.create({ model: 'agent', instructions: 'Be terse.', input: 'one' });
    const second = await client.responses.create({ model: 'agent', instructions: 'Be kind.', previous_response_id: first.id, input: 'two' });
    await client.responses.create({ model: 'agent', previous_response_id: second.id, input: 'three' });
    const messages = upstream.requests.at(-1)!.body.messages as { role: string; content: unknown }[];
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', 'one'],
        ['assistant', 'answer 1'],
        ['user', 'two'],
        ['assistant', 'answer 2'],
        ['user', 'three'],
      ],
    );
    const withInstructions = upstream.requests.at(-2)!.body.messages as { role: string; content: unknown }[];
    assert.deepEqual(withInstructions[0], { role: 'system', content: 'Be kind.' });
  });

  test('compact: the user messages plus one sealed item; sent back as input, the conversation goes on; a changed or foreign item is refused', async () => {
    const first = await client.responses.create({ model: 'agent', input: 'My number is 42.' });
    const second = await client.responses.create({ model: 'agent', previous_response_id: first.id, input: 'Remember it.' });
    const compacted = (await (client.responses as any).compact({ model: 'agent', previous_response_id: second.id })) as any;
    assert.equal(compacted.object, 'response.compaction');
    assert.deepEqual(compacted.output.map((i: any) => [i.type, i.role]), [['message', 'user'], ['message', 'user'], ['compaction', undefined]]);
    const sealed = compacted.output[2];
    assert.match(sealed.id, /^cmp_/);
    assert.ok(!Buffer.from(sealed.encrypted_content.slice(3), 'base64url').toString('latin1').includes(first.output_text), 'the content is encrypted');
    assert.ok(compacted.usage.output_tokens > 0 && compacted.svc > 0, 'billed like a short response');
    const summary = upstream.requests.at(-1)!;
    assert.match(JSON.stringify(summary.body.messages), /Summarize the conversation/);

    await client.responses.create({ model: 'agent', input: [...compacted.output, { role: 'user', content: 'What was my number?' }] });
    const seen = (upstream.requests.at(-1)!.body.messages as { role: string; content: string }[]).map((m) => [m.role, m.content]);
    assert.deepEqual(seen.slice(0, 2), [['user', 'My number is 42.'], ['user', 'Remember it.']]);
    assert.match(String(seen[2]![0]), /^(developer|system)$/); // upstreams get developer messages as system
    assert.match(String(seen[2]![1]), /^Summary of the conversation before this point: answer \d+/);
    assert.deepEqual(seen.slice(3), [['assistant', first.output_text], ['assistant', second.output_text], ['user', 'What was my number?']]);

    const tampered = { ...sealed, encrypted_content: sealed.encrypted_content.slice(0, -4) + (sealed.encrypted_content.endsWith('AAAA') ? 'BBBB' : 'AAAA') };
    await assert.rejects(client.responses.create({ model: 'agent', input: [tampered, { role: 'user', content: 'x' }] }), (e: any) => e.status === 400 && e.param === 'input[0].encrypted_content');
    const other = server.openai((await server.createKey()).key);
    await assert.rejects(other.responses.create({ model: 'agent', input: [sealed, { role: 'user', content: 'x' }] }), (e: any) => e.status === 400 && e.param === 'input[0].encrypted_content');
  });

  test('a response made on one instance continues on another at once (same PostgreSQL database)', { skip: process.env.TEST_DATABASE !== 'postgres' && 'two instances share a database on PostgreSQL only' }, async () => {
    const other = await startTestServer({ ...env(upstream), DATABASE_URL: server.config.database.kind === 'postgres' ? server.config.database.url : '', AGENT_API_INSTANCE_ID: 'second' });
    try {
      const first = await client.responses.create({ model: 'agent', input: 'remember me' });
      const next = await other.openai(client.apiKey!).responses.create({ model: 'agent', previous_response_id: first.id, input: 'again' });
      assert.equal(next.previous_response_id, first.id);
      const messages = upstream.requests.at(-1)!.body.messages as { role: string; content: unknown }[];
      assert.deepEqual(messages.map((m) => m.content), ['remember me', first.output_text, 'again']);
    } finally {
      await other.close();
    }
  });
});
