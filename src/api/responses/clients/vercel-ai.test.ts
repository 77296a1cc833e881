// The Vercel AI SDK 6's default OpenAI provider (`openai('agent')` calls POST
// /v1/responses) against agent-api, unchanged: generateText, a tool round trip the SDK
// runs itself, and streamText with a tool.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { startTestServer, type TestServer } from '../../../../test/helpers/test-server.ts';

let server: TestServer;
let openai: ReturnType<typeof createOpenAI>;
before(async () => {
  server = await startTestServer();
  const { key } = await server.createKey({ permissions: { function_calling: true } });
  openai = createOpenAI({ baseURL: server.baseURL, apiKey: key });
});
after(() => server.close());

const weather = tool({
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, forecast: 'sunny, 21 C' }),
});

test('generateText', async () => {
  const { text, usage, finishReason } = await generateText({ model: openai('agent'), prompt: 'What is 2 + 3?' });
  assert.match(text, /\b5\b/);
  assert.equal(finishReason, 'stop');
  assert.ok((usage.inputTokens ?? 0) > 0 && (usage.outputTokens ?? 0) > 0);
});

test('generateText with a tool: the SDK runs it and the final text uses its result', async () => {
  const result = await generateText({ model: openai('agent'), prompt: 'What is the weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
  const calls = result.steps.flatMap((s) => s.toolCalls);
  assert.equal(calls.length, 1);
  assert.equal(calls[0]!.toolName, 'get_weather');
  assert.deepEqual(calls[0]!.input, { city: 'Paris' });
  assert.match(result.text, /sunny, 21 C/);
});

test('streamText with a tool: tool call and result parts, text, a finish with usage', async () => {
  const result = streamText({ model: openai('agent'), prompt: 'What is the weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
  const types: string[] = [];
  let finishUsage: unknown;
  for await (const part of result.fullStream) {
    types.push(part.type);
    if (part.type === 'error') assert.fail(String((part as { error: unknown }).error));
    if (part.type === 'finish') finishUsage = part.totalUsage;
  }
  assert.ok(types.includes('tool-call'), types.join(','));
  assert.ok(types.includes('tool-result'));
  assert.ok(types.includes('text-delta'));
  assert.ok(finishUsage);
  assert.match(await result.text, /sunny, 21 C/);
});
