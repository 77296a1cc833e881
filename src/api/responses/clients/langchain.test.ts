// LangChain's ChatOpenAI with useResponsesApi against agent-api, unchanged: invoke,
// stream, and bound tools returning tool calls.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { startTestServer, type TestServer } from '../../../../test/helpers/test-server.ts';

let server: TestServer;
let model: ChatOpenAI;
before(async () => {
  server = await startTestServer();
  const { key } = await server.createKey({ permissions: { function_calling: true } });
  model = new ChatOpenAI({ model: 'agent', useResponsesApi: true, apiKey: key, configuration: { baseURL: server.baseURL }, maxRetries: 0 });
});
after(() => server.close());

test('invoke', async () => {
  const message = await model.invoke('What is 2 + 3?');
  assert.match(message.text, /\b5\b/);
  assert.ok((message.usage_metadata?.input_tokens ?? 0) > 0);
});

test('stream: the chunks make the answer', async () => {
  let text = '';
  let chunks = 0;
  for await (const chunk of await model.stream('Say exactly: hello there')) {
    chunks++;
    text += typeof chunk.content === 'string' ? chunk.content : chunk.content.map((p: any) => p.text ?? '').join('');
  }
  assert.ok(chunks > 1);
  assert.equal(text, 'hello there');
});

test('bindTools: the answer carries the tool call', async () => {
  const weather = tool(async ({ city }) => `sunny in ${city}`, { name: 'get_weather', description: 'Current weather for a city', schema: z.object({ city: z.string() }) });
  const message = await model.bindTools([weather]).invoke('What is the weather in Paris?');
  assert.equal(message.tool_calls?.length, 1);
  assert.equal(message.tool_calls![0]!.name, 'get_weather');
  assert.deepEqual(message.tool_calls![0]!.args, { city: 'Paris' });
  assert.ok(message.tool_calls![0]!.id);
});
