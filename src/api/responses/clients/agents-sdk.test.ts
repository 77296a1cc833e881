// The OpenAI Agents SDK against agent-api, given an openai 6 client: a function tool
// round trip, streamed and not, continued with previousResponseId and with the full
// history.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { startTestServer, type TestServer } from '../../../../test/helpers/test-server.ts';

let server: TestServer;
let calls: string[] = [];
const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    calls.push(city);
    return `sunny, 21 C in ${city}`;
  },
});
const agent = new Agent({ name: 'Assistant', instructions: 'You answer questions.', model: 'agent', tools: [weather] });

before(async () => {
  server = await startTestServer();
  const { key } = await server.createKey({ permissions: { function_calling: true } });
  setTracingDisabled(true);
  setDefaultOpenAIClient(server.openai(key) as never);
  setOpenAIAPI('responses');
});
after(() => server.close());

test('run: the tool runs and the final output uses its result', async () => {
  calls = [];
  const result = await run(agent, 'What is the weather in Paris?');
  assert.deepEqual(calls, ['Paris']);
  assert.match(String(result.finalOutput), /sunny, 21 C in Paris/);
  assert.match(result.lastResponseId ?? '', /^resp_/);
});

test('run streamed: text deltas, then the completed result', async () => {
  calls = [];
  const result = await run(agent, 'What is the weather in Tokyo?', { stream: true });
  let text = '';
  for await (const chunk of result.toTextStream()) text += chunk;
  await result.completed;
  assert.deepEqual(calls, ['Tokyo']);
  assert.match(text, /sunny, 21 C in Tokyo/);
  assert.match(String(result.finalOutput), /Tokyo/);
});

test('a second turn with previousResponseId, and one with the full history', async () => {
  const first = await run(agent, 'What is the weather in Paris?');
  const byId = await run(agent, 'What is 2 + 3?', { previousResponseId: first.lastResponseId! });
  assert.match(String(byId.finalOutput), /\b5\b/);
  const full = await run(agent, [...first.history, { role: 'user', content: 'What is 4 + 4?' }]);
  assert.match(String(full.finalOutput), /\b8\b/);
});
