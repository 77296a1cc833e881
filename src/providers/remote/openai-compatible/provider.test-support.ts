// Test support only: helpers shared by the provider's test files.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { ChatRequest, StreamPart } from '../../types.ts';
import { loadUpstreamConfig } from './config.ts';
import type { UpstreamConfig } from './config.ts';
import { startFakeUpstream } from './fake-upstream.test-support.ts';
import type { FakeUpstream, Handler } from './fake-upstream.test-support.ts';
import { createOpenAICompatibleProvider } from './provider.ts';
import type { OpenAICompatibleProvider, ProviderOptions } from './provider.ts';
export function makeConfig(baseUrl: string, env: Record<string, string> = {}): UpstreamConfig {
  const config = loadUpstreamConfig({
    UPSTREAM_BASE_URL: baseUrl,
    UPSTREAM_MODEL_AGENT: 'small-model',
    UPSTREAM_MODEL_AGENT_THINK: 'think-model',
    UPSTREAM_API_KEY: 'sk-test-123',
    UPSTREAM_HEADERS: '{"X-Title":"agent-api","HTTP-Referer":"https://example.test"}',
    ...env,
  });
  assert.ok(config);
  return config;
}

/** Runs a fake upstream for the duration of one test. */
export async function withUpstream<T>(handler: Handler, fn: (up: FakeUpstream) => Promise<T>): Promise<T> {
  const up = await startFakeUpstream(handler);
  try {
    return await fn(up);
  } finally {
    await up.close();
  }
}

/** The parts before the end, and the failure: an `error` part, or what the stream threw (an abort). */
export async function collect(iter: AsyncIterable<StreamPart>): Promise<{ events: StreamPart[]; error?: unknown }> {
  const events: StreamPart[] = [];
  try {
    for await (const e of iter) {
      if (e.type === 'error') return { events, error: e.error };
      events.push(e);
    }
    return { events };
  } catch (error) {
    return { events, error };
  }
}

export const ask: ChatRequest = { model: 'agent', messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };

export function provider(up: FakeUpstream, env: Record<string, string> = {}, options: ProviderOptions = {}): OpenAICompatibleProvider {
  return createOpenAICompatibleProvider(makeConfig(up.baseUrl, env), options);
}

// Writes headers and the given SSE text, then keeps the response open.
export function startStream(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(text);
}

export const content = (text: string) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
