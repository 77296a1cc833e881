// POST /v1/responses end to end with the official openai SDK, on the database the run
// selected: the object, streamed events against the reference's schemas and order, the
// stream's final response equal to the stored and the non-streamed one, storage and
// deletion, input items, the field table's refused and limited rows, and batches.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { toMicro } from '../../accounts/money.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { checkStream, parseSse, validateResponseObject } from './event-checks.test-support.ts';

let server: TestServer;
let client: OpenAI;
let accountId: string;
before(async () => {
  server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20' });
  const account = await server.createAccount(100);
  accountId = account.id;
  const { key } = await server.createKey({ account_id: account.id, permissions: { function_calling: true, files: true } });
  client = server.openai(key);
});
after(() => server.close());

async function collectEvents(stream: AsyncIterable<any>): Promise<any[]> {
  const events: any[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

describe('a response', () => {
  test('non-streamed: the reference object, echoing what ran, with usage and svc', async () => {
    const r = await client.responses.create({ model: 'agent', input: 'What is 2 + 3?', instructions: 'Answer briefly.', metadata: { run: 'one' }, max_output_tokens: 200 });
    validateResponseObject(r);
    assert.match(r.id, /^resp_/);
    assert.equal(r.object, 'response');
    assert.equal(r.status, 'completed');
    assert.equal(r.output.length, 1);
    const [message] = r.output as any[];
    assert.equal(message.type, 'message');
    assert.match(message.id, /^msg_/);
    assert.equal(message.role, 'assistant');
    assert.equal(message.content[0].type, 'output_text');
    assert.match(r.output_text, /\b5\b/);
    assert.equal(r.instructions, 'Answer briefly.');
    assert.deepEqual(r.metadata, { run: 'one' });
    assert.equal(r.temperature, 0.7);
    assert.equal(r.max_output_tokens, 200);
    assert.equal((r as any).store, true);
    assert.deepEqual(r.text?.format, { type: 'text' });
    assert.ok(r.usage!.input_tokens > 0 && r.usage!.output_tokens > 0);
    assert.equal(r.usage!.total_tokens, r.usage!.input_tokens + r.usage!.output_tokens);
    assert.equal(typeof (r as any).svc, 'number');
  });

  test('agent-think: a reasoning item with summary text, then the message', async () => {
    const r = await client.responses.create({ model: 'agent-think', input: 'Say hi' });
    assert.deepEqual(r.output.map((i) => i.type), ['reasoning', 'message']);
    const reasoning = r.output[0] as any;
    assert.match(reasoning.id, /^rs_/);
    assert.equal(reasoning.summary[0].type, 'summary_text');
    assert.ok(reasoning.summary[0].text.length > 0);
    assert.ok(r.usage!.output_tokens_details.reasoning_tokens > 0);
  });

  test('streamed: every event matches its reference schema, in order, numbered from 0; the final response is the stored one and matches the non-streamed one', async () => {
    const events = await collectEvents(await client.responses.create({ model: 'agent-think', input: 'What is 12 * 7?', stream: true }));
    const final = checkStream(events);
    assert.equal(events.at(-1).type, 'response.completed');
    assert.ok(events.some((e) => e.type === 'response.reasoning_summary_text.delta'));
    assert.ok(events.some((e) => e.type === 'response.output_text.delta'));
    assert.equal(final.status, 'completed');
    // The SDK adds output_text to what it retrieves; the rest is the stored object as streamed.
    const { output_text: _, _request_id: __, ...stored } = (await client.responses.retrieve(final.id)) as any;
    assert.deepEqual(stored, final);
    // The same request not streamed: the same items and text.
    const once = await client.responses.create({ model: 'agent-think', input: 'What is 12 * 7?' });
    assert.deepEqual(once.output.map((i) => i.type), final.output.map((i: any) => i.type));
    assert.equal(once.output_text, final.output.filter((i: any) => i.type === 'message').map((i: any) => i.content[0].text).join(''));
  });

  test('the stream() helper gives the final response; SSE event lines name each event', async () => {
    const stream = client.responses.stream({ model: 'agent', input: 'Say exactly: hello there' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    assert.equal(final.output_text, 'hello there');
    assert.equal(deltas.join(''), 'hello there');

    const res = await server.fetch('/v1/responses', {
      method: 'POST',
      key: client.apiKey!,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ model: 'agent', input: 'hi', stream: true }),
    });
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const raw = parseSse(await res.text());
    for (const { event, data } of raw) assert.equal(event, data.type);
    checkStream(raw.map((r) => r.data));
  });

  test('max_output_tokens cuts the answer: status incomplete, reason max_output_tokens, response.incomplete when streamed', async () => {
    const input = 'Summarize: ' + 'Trains cross rivers near small towns every morning. '.repeat(40);
    const r = await client.responses.create({ model: 'agent', input, max_output_tokens: 16 });
    assert.equal(r.status, 'incomplete');
    assert.deepEqual(r.incomplete_details, { reason: 'max_output_tokens' });
    const events = await collectEvents(await client.responses.create({ model: 'agent', input, max_output_tokens: 16, stream: true }));
    assert.equal(checkStream(events).status, 'incomplete');
    assert.equal(events.at(-1).type, 'response.incomplete');
  });

  test('include message.output_text.logprobs with top_logprobs: every text token carries its logprobs, streamed and stored', async () => {
    const r = await client.responses.create({ model: 'agent', input: 'Say exactly: hello there', include: ['message.output_text.logprobs'], top_logprobs: 2 });
    const part = (r.output[0] as any).content[0];
    assert.ok(part.logprobs.length > 0);
    assert.equal(part.logprobs.map((l: any) => l.token).join(''), part.text);
    assert.equal(part.logprobs[0].top_logprobs.length, 2);
    const plain = await client.responses.create({ model: 'agent', input: 'Say exactly: hello there' });
    assert.deepEqual((plain.output[0] as any).content[0].logprobs, []);
  });

    test('text.format json_schema: the output text is JSON of that shape', async () => {
    const r = await client.responses.create({
      model: 'agent',
      input: 'What is 6 * 7?',
      text: { format: { type: 'json_schema', name: 'answer', strict: true, schema: { type: 'object', properties: { value: { type: 'number' } }, required: ['value'], additionalProperties: false } } },
    });
    const parsed = JSON.parse(r.output_text);
    assert.equal(typeof parsed.value, 'number');
    assert.deepEqual(r.text?.format, { type: 'json_schema', name: 'answer', strict: true, schema: { type: 'object', properties: { value: { type: 'number' } }, required: ['value'], additionalProperties: false } });
  });
});

describe('storage and continuation', () => {
  test('store: false is not kept; delete removes; another account sees nothing', async () => {
    const kept = await client.responses.create({ model: 'agent', input: 'hello' });
    const notKept = await client.responses.create({ model: 'agent', input: 'hello', store: false });
    assert.equal((notKept as any).store, false);
    await assert.rejects(client.responses.retrieve(notKept.id), (e: any) => e.status === 404);
    await assert.rejects(client.responses.create({ model: 'agent', input: 'more', previous_response_id: notKept.id }), (e: any) => e.status === 404 && e.param === 'previous_response_id');

    const { key: otherKey } = await server.createKey({ permissions: { function_calling: true } });
    const other = server.openai(otherKey);
    await assert.rejects(other.responses.retrieve(kept.id), (e: any) => e.status === 404);
    await assert.rejects(other.responses.delete(kept.id), (e: any) => e.status === 404);
    await assert.rejects(other.responses.inputItems.list(kept.id), (e: any) => e.status === 404);
    await assert.rejects(other.responses.cancel(kept.id), (e: any) => e.status === 404);
    await assert.rejects(other.responses.create({ model: 'agent', input: 'x', previous_response_id: kept.id }), (e: any) => e.status === 404);

    await client.responses.delete(kept.id);
    await assert.rejects(client.responses.retrieve(kept.id), (e: any) => e.status === 404);
    await assert.rejects(client.responses.delete(kept.id), (e: any) => e.status === 404);
  });

  test('cancel of a foreground response is 400 response_not_cancellable, unchanged', async () => {
    const r = await client.responses.create({ model: 'agent', input: 'hello' });
    await assert.rejects(client.responses.cancel(r.id), (e: any) => e.status === 400 && e.code === 'response_not_cancellable');
    assert.equal((await client.responses.retrieve(r.id)).status, 'completed');
  });

  test('input items: text is one user message; given ids are kept; paging both ways', async () => {
    const text = await client.responses.create({ model: 'agent', input: 'hello' });
    const listed = await client.responses.inputItems.list(text.id);
    assert.equal(listed.data.length, 1);
    const [item] = listed.data as any[];
    assert.equal(item.type, 'message');
    assert.equal(item.role, 'user');
    assert.match(item.id, /^msg_/);
    assert.deepEqual(item.content, [{ type: 'input_text', text: 'hello' }]);

    const input = Array.from({ length: 5 }, (_, i) => ({ type: 'message' as const, id: `msg_given_${i}`, role: 'user' as const, content: `line ${i}` }));
    const r = await client.responses.create({ model: 'agent', input });
    const desc = await client.responses.inputItems.list(r.id, { limit: 2 });
    assert.deepEqual(desc.data.map((i: any) => i.id), ['msg_given_4', 'msg_given_3']);
    assert.equal(desc.has_more, true);
    const next = await client.responses.inputItems.list(r.id, { limit: 2, after: 'msg_given_3' });
    assert.deepEqual(next.data.map((i: any) => i.id), ['msg_given_2', 'msg_given_1']);
    const asc = await client.responses.inputItems.list(r.id, { order: 'asc', limit: 10 });
    assert.deepEqual(asc.data.map((i: any) => i.id), input.map((i) => i.id));
    assert.equal(asc.has_more, false);
    await assert.rejects(client.responses.inputItems.list(r.id, { include: ['foo' as never] }), (e: any) => e.status === 400 && e.param === 'include');
  });

  test("input items show an image's URL only with include message.input_image.image_url", async () => {
    const url = 'https://example.com/cat.png';
    const r = await client.responses.create({ model: 'agent', input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: url, detail: 'auto' }] }] });
    const plain = (await client.responses.inputItems.list(r.id)).data[0] as any;
    assert.equal(plain.content[1].image_url, null);
    const withUrl = (await client.responses.inputItems.list(r.id, { include: ['message.input_image.image_url'] })).data[0] as any;
    assert.equal(withUrl.content[1].image_url, url);
  });
});

describe('the field table', () => {
  for (const [field, value] of [
    ['prompt', { id: 'pmpt_1' }],
    ['context_management', [{ type: 'compaction' }]],
    ['max_tool_calls', 3],
    ['moderation', 'auto'],
    ['access_programs', ['x']],
  ] as const) {
    test(`refused: ${field}`, async () => {
      await assert.rejects(client.responses.create({ model: 'agent', input: 'hi', [field]: value } as never), (e: any) => e.status === 400 && e.code === 'unsupported_parameter' && e.param === field);
    });
  }
  for (const [field, value] of [
    ['service_tier', 'flex'],
    ['truncation', 'auto'],
    ['include', ['foo']],
  ] as const) {
    test(`limited: ${field} ${JSON.stringify(value)}`, async () => {
      await assert.rejects(client.responses.create({ model: 'agent', input: 'hi', [field]: value } as never), (e: any) => e.status === 400 && e.code === 'unsupported_parameter' && e.param === field);
    });
  }

  test("without effect and unknown fields are accepted (Codex's fields among them)", async () => {
    const res = await server.fetch('/v1/responses', {
      method: 'POST',
      key: client.apiKey!,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'agent',
        input: [{ type: 'message', id: 'msg_codex_1', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
        store: false,
        include: ['reasoning.encrypted_content'],
        reasoning: { effort: 'low', summary: 'auto' },
        prompt_cache_key: 'session-1',
        client_metadata: { origin: 'codex' },
        tools: [{ type: 'web_search', external_web_access: false }],
        tool_choice: 'auto',
        parallel_tool_calls: true,
      }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(res.headers.get('x-service-ignored-parameters') ?? '', /client_metadata/);
  });

  test('background with stream, and previous_response_id with conversation, are refused', async () => {
    await assert.rejects(client.responses.create({ model: 'agent', input: 'hi', background: true, stream: true } as never), (e: any) => e.status === 400 && e.param === 'background');
  });
});

describe('batches', () => {
  test('a batch of /v1/responses lines runs to completed; each output line is a response; charges equal their svc', async () => {
    const { key } = await server.createKey({ account_id: accountId, permissions: { files: true } });
    const c = server.openai(key);
    const before = (await server.admin('GET', `/accounts/${accountId}`)).body.credits as number;
    const lines = Array.from({ length: 5 }, (_, i) => JSON.stringify({ custom_id: `r-${i}`, method: 'POST', url: '/v1/responses', body: { model: 'agent', input: `What is ${i} + 2?` } }));
    const file = await c.files.create({ file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'r.jsonl'), purpose: 'batch' });
    let batch = await c.batches.create({ input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h' });
    for (let i = 0; i < 1500 && !['completed', 'failed', 'cancelled'].includes(batch.status); i++) {
      await new Promise((r) => setTimeout(r, 20));
      batch = await c.batches.retrieve(batch.id);
    }
    assert.equal(batch.status, 'completed', JSON.stringify(batch.errors));
    const out = (await (await c.files.content(batch.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(out.length, 5);
    for (const o of out) {
      assert.equal(o.response.status_code, 200);
      assert.equal(o.response.body.object, 'response');
      assert.match(o.response.body.output_text ?? o.response.body.output[0].content[0].text, /\d/);
    }
    let after = (await server.admin('GET', `/accounts/${accountId}`)).body;
    for (let i = 0; i < 100 && after.reserved_credits > 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = (await server.admin('GET', `/accounts/${accountId}`)).body;
    }
    const charged = out.reduce((s, o) => s + toMicro(o.response.body.svc), 0);
    assert.equal(toMicro(before) - toMicro(after.credits), charged);
  });
});

describe('input token counts', () => {
  test('grow with input, instructions and tools; count a previous chain; free, even for an account without credits', async () => {
    const account = await server.createAccount(0);
    const { key } = await server.createKey({ account_id: account.id, permissions: { function_calling: true } });
    const broke = server.openai(key);
    const count = async (body: Record<string, unknown>) => (await broke.responses.inputTokens.count({ model: 'agent', ...body } as never)).input_tokens;
    const base = await count({ input: 'What is the capital of France?' });
    assert.ok(base > 0);
    assert.ok((await count({ input: 'What is the capital of France? '.repeat(20) })) > base);
    assert.ok((await count({ input: 'What is the capital of France?', instructions: 'Answer in one word.' })) > base);
    assert.ok((await count({ input: 'What is the capital of France?', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }] })) > base);
    const image = await count({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is the capital of France?' }, { type: 'input_image', image_url: 'https://example.com/a.png' }] }] });
    assert.ok(image > base + 100, 'an image adds a fixed amount');
    const stored = await client.responses.create({ model: 'agent', input: 'What is the capital of France?' });
    const chained = await (await client.responses.inputTokens.count({ model: 'agent', previous_response_id: stored.id, input: 'and Spain?' })).input_tokens;
    assert.ok(chained > (await count({ input: 'and Spain?' })) + 5);
    assert.equal((await server.admin('GET', `/accounts/${account.id}`)).body.credits, 0);
    await assert.rejects(count({ input: 'x', personality: 'friendly' }), (e: any) => e.status === 400 && e.param === 'personality');
    await assert.rejects(count({ input: 'x', truncation: 'auto' }), (e: any) => e.status === 400 && e.param === 'truncation');
  });
});

describe('streaming a stored response', () => {
  test('GET with stream=true replays the events, each against its schema, ending with the stored response; starting_after skips what was seen', async () => {
    const r = await client.responses.create({ model: 'agent-think', input: 'What is 12 * 7?' });
    const events = await collectEvents(await client.responses.retrieve(r.id, { stream: true }));
    const final = checkStream(events);
    const { output_text: _, ...stored } = r as any;
    assert.deepEqual(final, stored);
    const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(text, r.output_text);
    const rest = await collectEvents(await client.responses.retrieve(r.id, { stream: true, starting_after: 3 }));
    assert.deepEqual(rest.map((e) => e.sequence_number), events.slice(4).map((e) => e.sequence_number));
  });

  test('a background response streams once it has finished', async () => {
    const queued = await client.responses.create({ model: 'agent', input: 'What is 3 + 3?', background: true });
    const events = await collectEvents(await client.responses.retrieve(queued.id, { stream: true }));
    const final = checkStream(events);
    assert.equal(final.status, 'completed');
    assert.match(final.output[0].content[0].text, /\b6\b/);
  });
});
