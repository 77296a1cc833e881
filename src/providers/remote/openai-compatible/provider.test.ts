// The provider against a fake upstream (node:http on 127.0.0.1, port 0) that
// replays recorded-shape streams and records what it was sent.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { ProviderError } from '../../types.ts';
import type { ChatRequest, StreamPart } from '../../types.ts';
import { fixture, replaySse } from './fake-upstream.test-support.ts';
import type { ReplayOptions } from './fake-upstream.test-support.ts';
import { ask, collect, provider, withUpstream } from './provider.test-support.ts';

// --- fixture replays -------------------------------------------------------

const FIXTURES: { file: string; events: StreamPart[]; error?: RegExp; status?: number; kind?: 'complete' }[] = [
  {
    file: 'openai-text-logprobs.sse',
    events: [
      { type: 'text-start', id: 'text-0' },
      {
        type: 'text-delta',
        id: 'text-0',
        delta: 'Hello',
        logprobs: [
          {
            token: 'Hello',
            logprob: -0.0012,
            bytes: [72, 101, 108, 108, 111],
            top_logprobs: [
              { token: 'Hello', logprob: -0.0012, bytes: [72, 101, 108, 108, 111] },
              { token: 'Hi', logprob: -6.75, bytes: [72, 105] },
            ],
          },
        ],
      },
      {
        type: 'text-delta',
        id: 'text-0',
        delta: ' wörld',
        logprobs: [{ token: ' wörld', logprob: -0.5, bytes: [32, 119, 195, 182, 114, 108, 100], top_logprobs: [] }],
      },
      { type: 'text-end', id: 'text-0' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 19, outputTokens: 2, reasoningTokens: 0, cachedInputTokens: 0 } },
    ],
  },
  {
    file: 'openai-tool-calls.sse',
    events: [
      { type: 'tool-input-start', id: 'call_Qx7LwY0b4nKp1sVt9Hc2Ezr3', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'call_Qx7LwY0b4nKp1sVt9Hc2Ezr3', delta: '{"ci' },
      { type: 'tool-input-delta', id: 'call_Qx7LwY0b4nKp1sVt9Hc2Ezr3', delta: 'ty": "Par' },
      { type: 'tool-input-delta', id: 'call_Qx7LwY0b4nKp1sVt9Hc2Ezr3', delta: 'is"}' },
      { type: 'tool-input-start', id: 'call_Zr8MkT2c5oLq0uWu1Jd3Fas4', toolName: 'get_time' },
      { type: 'tool-input-delta', id: 'call_Zr8MkT2c5oLq0uWu1Jd3Fas4', delta: '{"tz": "Europe/Paris"}' },
      { type: 'tool-input-end', id: 'call_Qx7LwY0b4nKp1sVt9Hc2Ezr3' },
      { type: 'tool-input-end', id: 'call_Zr8MkT2c5oLq0uWu1Jd3Fas4' },
      { type: 'finish', reason: 'tool_calls', usage: { inputTokens: 82, outputTokens: 47, reasoningTokens: 0, cachedInputTokens: 64 } },
    ],
  },
  {
    file: 'vllm-reasoning-tool.sse',
    events: [
      { type: 'reasoning-start', id: 'reasoning-0' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: 'The user' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: ' asks about Paris weather.' },
      { type: 'reasoning-end', id: 'reasoning-0' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: '\n\n' },
      { type: 'text-end', id: 'text-1' },
      { type: 'tool-input-start', id: 'chatcmpl-tool-9c1d7e5f3a2b4c6d8e0f1a2b3c4d5e6f', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'chatcmpl-tool-9c1d7e5f3a2b4c6d8e0f1a2b3c4d5e6f', delta: '{"city": "Paris", "unit": "celsius"}' },
      { type: 'tool-input-end', id: 'chatcmpl-tool-9c1d7e5f3a2b4c6d8e0f1a2b3c4d5e6f' },
      { type: 'finish', reason: 'tool_calls', usage: { inputTokens: 176, outputTokens: 65 } },
    ],
  },
  {
    file: 'vllm-usage-in-last-choice.sse',
    events: [
      { type: 'text-start', id: 'text-0' },
      { type: 'text-delta', id: 'text-0', delta: 'Four' },
      { type: 'text-delta', id: 'text-0', delta: '.' },
      { type: 'text-end', id: 'text-0' },
      { type: 'finish', reason: 'length', usage: { inputTokens: 25, outputTokens: 2 } },
    ],
  },
  {
    file: 'ollama-tool-calls.sse',
    events: [
      { type: 'reasoning-start', id: 'reasoning-0' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: 'Need the weather' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: ' for Paris.' },
      { type: 'reasoning-end', id: 'reasoning-0' },
      { type: 'tool-input-start', id: 'call_w1pq8z3n', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'call_w1pq8z3n', delta: '{"city":"Paris"}' },
      { type: 'tool-input-start', id: 'call_b7kd2m0x', toolName: 'get_time' },
      { type: 'tool-input-delta', id: 'call_b7kd2m0x', delta: '{"tz":"Europe/Paris"}' },
      { type: 'tool-input-end', id: 'call_w1pq8z3n' },
      { type: 'tool-input-end', id: 'call_b7kd2m0x' },
      // no usage: this Ollama sent none, the caller estimates
      { type: 'finish', reason: 'tool_calls' },
    ],
  },
  {
    file: 'openrouter-reasoning.sse',
    events: [
      { type: 'reasoning-start', id: 'reasoning-0' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: 'Two plus two' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: ' is four.' },
      { type: 'reasoning-end', id: 'reasoning-0' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: '4' },
      { type: 'text-end', id: 'text-1' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 12, outputTokens: 41, reasoningTokens: 38, cachedInputTokens: 0 }, costUsd: 0.0000954 },
    ],
  },
  {
    file: 'openrouter-error-mid-stream.sse',
    events: [
      { type: 'text-start', id: 'text-0' },
      { type: 'text-delta', id: 'text-0', delta: 'The answer' },
    ],
    error: /^the upstream model server reported an error mid-stream \(502\): Provider disconnected unexpectedly$/,
    status: 502,
  },
  {
    file: 'vllm-error-mid-stream.sse',
    events: [
      { type: 'text-start', id: 'text-0' },
      { type: 'text-delta', id: 'text-0', delta: 'Partial' },
    ],
    error: /^the upstream model server reported an error mid-stream \(400, BadRequestError\): The decoder prompt \(length 40961\) is longer than the maximum model length of 40960\.$/,
    status: 400,
  },
  {
    file: 'vllm-completion.sse',
    kind: 'complete',
    events: [
      { type: 'text-start', id: 'text-0' },
      { type: 'text-delta', id: 'text-0', delta: ' upon' },
      { type: 'text-delta', id: 'text-0', delta: ' a time' },
      { type: 'text-end', id: 'text-0' },
      { type: 'finish', reason: 'length', usage: { inputTokens: 4, outputTokens: 3 } },
    ],
  },
];

const REPLAYS: [string, ReplayOptions][] = [
  ['one write per event', { split: 'event' }],
  ['7-byte network chunks', { split: 7, delayMs: 0 }],
  ['\\r\\n line ends in 5-byte chunks', { split: 5, crlf: true, delayMs: 0 }],
];

describe('fixture streams map to exact events', () => {
  for (const f of FIXTURES) {
    for (const [how, replay] of REPLAYS) {
      it(`${f.file}, ${how}`, async () => {
        await withUpstream(
          (_req, res) => replaySse(res, fixture(f.file), replay),
          async (up) => {
            const p = provider(up);
            const signal = new AbortController().signal;
            const iter = f.kind === 'complete' ? p.complete({ model: 'agent', prompt: 'Once' }, signal) : p.chat(ask, signal);
            const { events, error } = await collect(iter);
            assert.deepEqual(events, f.events);
            if (f.error) {
              assert.ok(error instanceof ProviderError, String(error));
              assert.match(error.message, f.error);
              assert.equal(error.status, f.status);
            } else {
              assert.equal(error, undefined);
            }
            assert.equal(up.requests.length, 1, 'no retry');
          },
        );
      });
    }
  }
});

// --- request ---------------------------------------------------------------

describe('request', () => {
  const full: ChatRequest = {
    model: 'agent-think',
    messages: [
      { role: 'developer', content: 'Be helpful.' },
      {
        role: 'user',
        name: 'ann',
        content: [
          { type: 'text', text: 'What is in this image?' },
          { type: 'image_url', url: 'https://example.com/cat.png', detail: 'low' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        reasoning: 'not forwarded',
        tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      },
      { role: 'tool', content: '{"temp":21}', tool_call_id: 'call_1' },
    ],
    tools: [
      {
        name: 'get_weather',
        description: 'Weather by city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: true,
      },
    ],
    toolChoice: { name: 'get_weather' },
    parallelToolCalls: false,
    responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
    maxTokens: 256,
    temperature: 0.3,
    topP: 0.9,
    topK: 40,
    minP: 0.05,
    topA: 0.2,
    repetitionPenalty: 1.1,
    presencePenalty: 0.5,
    frequencyPenalty: -0.5,
    logitBias: { '50256': -100 },
    seed: 42,
    stop: ['END'],
    logprobs: true,
    topLogprobs: 3,
    reasoningEffort: 'high',
    verbosity: 'high',
    user: 'user-123',
  };

  it('forwards every field, the Authorization header and the extra headers', async () => {
    await withUpstream(
      (_req, res) => replaySse(res, fixture('openai-text-logprobs.sse')),
      async (up) => {
        await collect(provider(up, { UPSTREAM_REASONING_MODELS: 'think-model' }).chat(full, new AbortController().signal));
        const [req] = up.requests;
        assert.ok(req);
        assert.equal(req.method, 'POST');
        assert.equal(req.url, '/v1/chat/completions');
        assert.equal(req.headers.authorization, 'Bearer sk-test-123');
        assert.equal(req.headers['x-title'], 'agent-api');
        assert.equal(req.headers['http-referer'], 'https://example.test');
        assert.equal(req.headers['content-type'], 'application/json');
        assert.deepEqual(req.body, {
          model: 'think-model',
          stream: true,
          stream_options: { include_usage: true },
          messages: [
            { role: 'system', content: 'Be helpful.\n\nAnswer length: detailed.' },
            {
              role: 'user',
              name: 'ann',
              content: [
                { type: 'text', text: 'What is in this image?' },
                { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
              ],
            },
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
            },
            { role: 'tool', content: '{"temp":21}', tool_call_id: 'call_1' },
          ],
          tools: [
            {
              type: 'function',
              function: {
                name: 'get_weather',
                description: 'Weather by city',
                parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
                strict: true,
              },
            },
          ],
          tool_choice: { type: 'function', function: { name: 'get_weather' } },
          parallel_tool_calls: false,
          response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
          max_completion_tokens: 256,
          temperature: 0.3,
          top_p: 0.9,
          top_k: 40,
          min_p: 0.05,
          top_a: 0.2,
          repetition_penalty: 1.1,
          presence_penalty: 0.5,
          frequency_penalty: -0.5,
          logit_bias: { '50256': -100 },
          seed: 42,
          stop: ['END'],
          logprobs: true,
          top_logprobs: 3,
          reasoning_effort: 'high',
          user: 'user-123',
        });
      },
    );
  });

  it('drops reasoning_effort (and max_completion_tokens) for a model not listed as reasoning', async () => {
    await withUpstream(
      (_req, res) => replaySse(res, fixture('openai-text-logprobs.sse')),
      async (up) => {
        await collect(provider(up).chat({ ...full, model: 'agent' }, new AbortController().signal));
        const body = up.requests[0]?.body;
        assert.equal(body?.model, 'small-model');
        assert.equal('reasoning_effort' in (body ?? {}), false);
        assert.equal('max_completion_tokens' in (body ?? {}), false);
        assert.equal(body?.max_tokens, 256);
      },
    );
  });

  it('adds the verbosity instruction (low: brief; medium: nothing)', async () => {
    await withUpstream(
      (_req, res) => replaySse(res, fixture('openai-text-logprobs.sse')),
      async (up) => {
        const p = provider(up);
        await collect(p.chat({ ...ask, verbosity: 'low' }, new AbortController().signal));
        await collect(p.chat({ ...ask, verbosity: 'medium' }, new AbortController().signal));
        assert.deepEqual(up.requests[0]?.body.messages, [
          { role: 'system', content: 'Answer length: brief.' },
          { role: 'user', content: 'What is the weather in Paris?' },
        ]);
        assert.deepEqual(up.requests[1]?.body.messages, [{ role: 'user', content: 'What is the weather in Paris?' }]);
      },
    );
  });

  it('complete() posts the prompt to /completions', async () => {
    await withUpstream(
      (_req, res) => replaySse(res, fixture('vllm-completion.sse')),
      async (up) => {
        await collect(provider(up).complete({ model: 'agent', prompt: 'Once', topK: 3, minP: 0.1 }, new AbortController().signal));
        assert.equal(up.requests[0]?.url, '/v1/completions');
        assert.deepEqual(up.requests[0]?.body, {
          model: 'small-model',
          stream: true,
          stream_options: { include_usage: true },
          prompt: 'Once',
          top_k: 3,
          min_p: 0.1,
        });
      },
    );
  });

  it('sends no Authorization header without an API key', async () => {
    await withUpstream(
      (_req, res) => replaySse(res, fixture('openai-text-logprobs.sse')),
      async (up) => {
        await collect(provider(up, { UPSTREAM_API_KEY: '', UPSTREAM_HEADERS: '' }).chat(ask, new AbortController().signal));
        assert.equal(up.requests[0]?.headers.authorization, undefined);
      },
    );
  });

  it('UPSTREAM_API_KEY wins over an Authorization in UPSTREAM_HEADERS, which applies without a key', async () => {
    await withUpstream(
      (_req, res) => replaySse(res, fixture('openai-text-logprobs.sse')),
      async (up) => {
        const headers = '{"Authorization":"Bearer from-headers"}';
        await collect(provider(up, { UPSTREAM_HEADERS: headers }).chat(ask, new AbortController().signal));
        await collect(provider(up, { UPSTREAM_HEADERS: headers, UPSTREAM_API_KEY: '' }).chat(ask, new AbortController().signal));
        assert.equal(up.requests[0]?.headers.authorization, 'Bearer sk-test-123');
        assert.equal(up.requests[1]?.headers.authorization, 'Bearer from-headers');
      },
    );
  });

  it('reuses the kept-alive connection for the next call', async () => {
    await withUpstream(
      (_req, res) => replaySse(res, fixture('openai-text-logprobs.sse')),
      async (up) => {
        const p = provider(up);
        await collect(p.chat(ask, new AbortController().signal));
        await delay(50); // the first body's tail (after [DONE]) is read off in the background
        await collect(p.chat(ask, new AbortController().signal));
        assert.equal(up.requests.length, 2);
        assert.equal(up.requests[0]?.remotePort, up.requests[1]?.remotePort);
      },
    );
  });
});

// --- responses that are not streams ----------------------------------------

describe('non-stream answers', () => {
  it('maps a server that ignores stream: true and answers one JSON object', async () => {
    await withUpstream(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Sunny.' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
          }),
        );
      },
      async (up) => {
        const { events, error } = await collect(provider(up).chat(ask, new AbortController().signal));
        assert.equal(error, undefined);
        assert.deepEqual(events, [
          { type: 'text-start', id: 'text-0' },
          { type: 'text-delta', id: 'text-0', delta: 'Sunny.' },
          { type: 'text-end', id: 'text-0' },
          { type: 'finish', reason: 'stop', usage: { inputTokens: 9, outputTokens: 2 } },
        ]);
      },
    );
  });
});

describe('non-streamed calls (the caller does not stream)', () => {
  const whole = { ...ask, stream: false };
  const answer = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27, cost: 0.0004 },
      }),
    );
  };

  it('ask for JSON without stream_options and map the whole answer, tool calls and cost included', async () => {
    await withUpstream((_req, res) => answer(res), async (up) => {
      const { events, error } = await collect(provider(up).chat(whole, new AbortController().signal));
      assert.equal(error, undefined);
      assert.equal(up.requests[0]!.body.stream, false);
      assert.equal(up.requests[0]!.body.stream_options, undefined);
      assert.deepEqual(events, [
        { type: 'tool-input-start', id: 'call_1', toolName: 'get_weather' },
        { type: 'tool-input-delta', id: 'call_1', delta: '{"city":"Paris"}' },
        { type: 'tool-input-end', id: 'call_1' },
        { type: 'finish', reason: 'tool_calls', usage: { inputTokens: 20, outputTokens: 7 }, costUsd: 0.0004 },
      ]);
    });
  });

  it('are not cut by the first-byte timeout: the first byte of a whole answer comes at its end', async () => {
    await withUpstream(
      async (_req, res) => {
        await delay(300);
        answer(res);
      },
      async (up) => {
        const { events, error } = await collect(provider(up, { UPSTREAM_CONNECT_TIMEOUT_MS: '100' }).chat(whole, new AbortController().signal));
        assert.equal(error, undefined);
        assert.equal(events.at(-1)?.type, 'finish');
      },
    );
  });

  it('a caller that goes away closes the upstream request at once', async () => {
    await withUpstream(
      () => {}, // still thinking
      async (up) => {
        const controller = new AbortController();
        const run = collect(provider(up).chat(whole, controller.signal));
        for (let i = 0; i < 200 && up.requests.length === 0; i++) await delay(5);
        controller.abort();
        const { events, error } = await run;
        assert.deepEqual(events, []);
        assert.equal((error as Error).name, 'AbortError');
        await up.requests[0]!.closed;
      },
    );
  });
});
