// LangChain's Anthropic chat model (@langchain/anthropic) against the messages surface,
// unchanged but for its API URL: invoke, stream, and a bound tool's call.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ChatAnthropic } from '@langchain/anthropic';
import { startTestServer, type TestServer } from '../../../../test/helpers/test-server.ts';

let server: TestServer;
let model: ChatAnthropic;
before(async () => {
  server = await startTestServer();
  const { key } = await server.createKey({ permissions: { function_calling: true } });
  model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: key, anthropicApiUrl: `${server.origin}/api/messages`, maxRetries: 0 });
});
after(() => server.close());

test('invoke', async () => {
  const answer = await model.invoke('What is 2 + 3?');
  assert.match(String(answer.content), /\b5\b/);
  assert.ok((answer.usage_metadata?.input_tokens ?? 0) > 0);
});

test('stream', async () => {
  let text = '';
  for await (const chunk of await model.stream('Say hello to the world')) text += typeof chunk.content === 'string' ? chunk.content : '';
  assert.ok(text.length > 0);
});

test('a bound tool: the call comes back with object arguments', async () => {
  const withTool = model.bindTools([{ name: 'get_weather', description: 'Current weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }], { tool_choice: 'any' });
  const answer = await withTool.invoke('What is the weather in Paris?');
  assert.equal(answer.tool_calls?.[0]?.name, 'get_weather');
  assert.equal(typeof answer.tool_calls?.[0]?.args.city, 'string');
});
