// The Vercel AI SDK 6's Anthropic provider (@ai-sdk/anthropic 3, which rejects
// `citations: null` on text blocks) against the messages surface, unchanged but for its
// base URL: generateText, and streamText with a tool the SDK runs itself.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { startTestServer, type TestServer } from '../../../../test/helpers/test-server.ts';

let server: TestServer;
let anthropic: ReturnType<typeof createAnthropic>;
before(async () => {
  server = await startTestServer();
  const { key } = await server.createKey({ permissions: { function_calling: true } });
  anthropic = createAnthropic({ baseURL: `${server.origin}/api/messages/v1`, apiKey: key });
});
after(() => server.close());

const weather = tool({
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, forecast: 'sunny, 21 C' }),
});

test('generateText', async () => {
  const { text, usage, finishReason } = await generateText({ model: anthropic('claude-sonnet-4-5'), prompt: 'What is 2 + 3?' });
  assert.match(text, /\b5\b/);
  assert.equal(finishReason, 'stop');
  assert.ok((usage.inputTokens ?? 0) > 0 && (usage.outputTokens ?? 0) > 0);
});

test('streamText with a tool: tool call and result parts, text, a finish with usage', async () => {
  const result = streamText({ model: anthropic('claude-sonnet-4-5'), prompt: 'What is the weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
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
