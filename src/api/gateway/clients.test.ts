// OpenRouter's own clients pointed at the gateway, only the base URL and our key set:
// @openrouter/sdk (chat whole and streamed, its key, credits and generation calls, whose
// answers it validates strictly) and @openrouter/ai-sdk-provider with the Vercel AI SDK.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenRouter } from '@openrouter/ai-sdk-provider';
import { OpenRouter } from '@openrouter/sdk';
import type { ChatResult, ChatStreamChunk } from '@openrouter/sdk/models';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { startFakeAggregator, type FakeAggregator } from '../../../test/helpers/fake-aggregator.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const ROOT = '/api/gateway/v1';
const UPSTREAM_KEY = 'sk-or-v1-upstream-clients-0123456789';

describe('OpenRouter clients through the gateway', () => {
  let fake: FakeAggregator;
  let server: TestServer;
  let key: string;

  before(async () => {
    fake = await startFakeAggregator({ apiKey: UPSTREAM_KEY });
    server = await startTestServer({ GATEWAY_UPSTREAM_URL: fake.url, GATEWAY_UPSTREAM_KEY: UPSTREAM_KEY });
    const account = await server.createAccount(10_000);
    key = (await server.createKey({ account_id: account.id, name: 'clients', permissions: { ai_gateway: true } })).key;
  });
  after(async () => {
    await server?.close();
    await fake?.close();
  });

  const sdk = () => new OpenRouter({ apiKey: key, serverURL: server.origin + ROOT, retryConfig: { strategy: 'none' } });

  test('@openrouter/sdk: chat whole and streamed, then its key, credits and generation calls', async () => {
    const or = sdk();
    const res = (await or.chat.send({ chatRequest: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }] } })) as ChatResult;
    assert.ok(res.choices[0]?.message.content);
    assert.ok((res.usage?.cost ?? 0) > 0);
    const stream = (await or.chat.send({ chatRequest: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }], stream: true } })) as unknown as AsyncIterable<ChatStreamChunk>;
    let text = '';
    let cost = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage?.cost) cost = chunk.usage.cost;
    }
    assert.ok(text.length > 0);
    assert.ok(cost > 0);

    const meta = await or.apiKeys.getCurrentKeyMetadata();
    assert.equal(meta.data.label, 'clients');
    assert.equal(meta.data.isFreeTier, false);
    assert.ok(Math.abs(meta.data.usage - ((res.usage?.cost ?? 0) + cost)) < 1e-9, `usage ${meta.data.usage}`);
    const credits = await or.credits.getCredits();
    assert.ok(Math.abs(credits.data.totalCredits - 10_000 / server.config.creditsPerUsd) < 1e-9);
    assert.ok(Math.abs(credits.data.totalUsage - meta.data.usage) < 1e-9);
    const gen = await or.generations.getGeneration({ id: res.id });
    assert.equal(gen.data.id, res.id);
    assert.ok(Math.abs(gen.data.totalCost - (res.usage?.cost ?? 0)) < 1e-12);
    assert.equal(gen.data.streamed, false);
  });

  test('@openrouter/ai-sdk-provider with ai 6: generateText and streamText (with a tool)', async () => {
    const openrouter = createOpenRouter({ apiKey: key, baseURL: server.origin + ROOT });
    const gen = await generateText({ model: openrouter('openai/gpt-4o-mini'), prompt: 'Say hello.', maxRetries: 0 });
    assert.ok(gen.text.length > 0);
    assert.ok(((gen.providerMetadata?.openrouter as { usage?: { cost?: number } } | undefined)?.usage?.cost ?? 0) > 0);
    const s = streamText({
      model: openrouter('openai/gpt-4o-mini'),
      prompt: 'Say hello.',
      maxRetries: 0,
      tools: { echo: tool({ description: 'echo', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => text }) },
      stopWhen: stepCountIs(2),
    });
    let text = '';
    for await (const t of s.textStream) text += t;
    assert.ok(text.length > 0);
    assert.equal(await s.finishReason, 'stop');
    const body = JSON.parse(fake.received.at(-1)!.body.toString());
    assert.equal(body.stream, true);
    assert.equal(body.tools[0].function.name, 'echo');
  });
});
