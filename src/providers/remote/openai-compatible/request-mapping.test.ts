import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatRequest } from '../../types.ts';
import { loadUpstreamConfig } from './config.ts';
import type { UpstreamConfig } from './config.ts';
import { toChatBody, toCompletionBody, toWireMessage, withVerbosity } from './request-mapping.ts';

function config(env: Record<string, string> = {}): UpstreamConfig {
  const c = loadUpstreamConfig({
    UPSTREAM_BASE_URL: 'http://127.0.0.1:1/v1',
    UPSTREAM_MODEL_AGENT: 'small',
    UPSTREAM_MODEL_AGENT_THINK: 'thinker',
    ...env,
  });
  assert.ok(c);
  return c;
}

const hello: ChatRequest = { model: 'agent', messages: [{ role: 'user', content: 'Hi' }] };

describe('toChatBody', () => {
  it('streams with usage by default and names only what was set', () => {
    assert.deepEqual(toChatBody(hello, config()), {
      model: 'small',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });

  it('asks for one JSON answer when the caller does not stream', () => {
    assert.deepEqual(toChatBody({ ...hello, stream: false }, config()), {
      model: 'small',
      stream: false,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    assert.equal(toCompletionBody({ model: 'agent', prompt: 'Hi', stream: false }, config()).stream, false);
  });

  it('maps every message form', () => {
    assert.deepEqual(toWireMessage({ role: 'developer', content: 'rules' }), { role: 'system', content: 'rules' });
    assert.deepEqual(
      toWireMessage({
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', url: 'data:image/png;base64,AAAA' },
          { type: 'file', file_id: 'file-1', filename: 'a.pdf', data_url: 'data:application/pdf;base64,JVBE' },
          { type: 'input_audio', data: 'UklGR', format: 'wav' },
        ],
      }),
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'file', file: { file_id: 'file-1', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
          { type: 'input_audio', input_audio: { data: 'UklGR', format: 'wav' } },
        ],
      },
    );
    assert.deepEqual(toWireMessage({ role: 'assistant', content: 'plain', tool_calls: [] }), { role: 'assistant', content: 'plain' });
    assert.deepEqual(toWireMessage({ role: 'tool', content: 'ok', tool_call_id: 'call_1' }), {
      role: 'tool',
      content: 'ok',
      tool_call_id: 'call_1',
    });
  });

  it('sends one output cap: max_completion_tokens (and reasoning_effort) to configured reasoning models, max_tokens to the rest', () => {
    const req: ChatRequest = { ...hello, maxTokens: 100, reasoningEffort: 'low' };
    const plain = toChatBody(req, config());
    assert.equal(plain.reasoning_effort, undefined);
    assert.equal(plain.max_completion_tokens, undefined);
    assert.equal(plain.max_tokens, 100);

    // No reasoning models unless configured: agent-think's upstream model gets max_tokens too.
    const unlisted = toChatBody({ ...req, model: 'agent-think' }, config());
    assert.equal(unlisted.model, 'thinker');
    assert.equal(unlisted.reasoning_effort, undefined);
    assert.equal(unlisted.max_completion_tokens, undefined);
    assert.equal(unlisted.max_tokens, 100);

    const think = toChatBody({ ...req, model: 'agent-think' }, config({ UPSTREAM_REASONING_MODELS: 'thinker' }));
    assert.equal(think.reasoning_effort, 'low');
    assert.equal(think.max_completion_tokens, 100);
    assert.equal(think.max_tokens, undefined);
    assert.equal(toCompletionBody({ model: 'agent-think', prompt: 'x', maxTokens: 7 }, config({ UPSTREAM_REASONING_MODELS: 'thinker' })).max_completion_tokens, 7);

    const listed = toChatBody(req, config({ UPSTREAM_REASONING_MODELS: 'small' }));
    assert.equal(listed.reasoning_effort, 'low');
    const none = toChatBody({ ...req, model: 'agent-think' }, config({ UPSTREAM_REASONING_MODELS: '' }));
    assert.equal(none.reasoning_effort, undefined);
  });

  it('maps tool_choice and response_format forms', () => {
    assert.equal(toChatBody({ ...hello, toolChoice: 'required' }, config()).tool_choice, 'required');
    assert.deepEqual(toChatBody({ ...hello, responseFormat: { type: 'json_object' } }, config()).response_format, {
      type: 'json_object',
    });
    assert.deepEqual(
      toChatBody({ ...hello, responseFormat: { type: 'json_schema', name: 'x', schema: { type: 'object' } } }, config())
        .response_format,
      { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
    );
  });
});

describe('verbosity', () => {
  const user = { role: 'user', content: 'Hi' };
  it('low adds a brief instruction as a leading system message', () => {
    assert.deepEqual(withVerbosity([user], 'low'), [{ role: 'system', content: 'Answer length: brief.' }, user]);
  });
  it('high joins an existing leading system message', () => {
    assert.deepEqual(withVerbosity([{ role: 'system', content: 'Be kind.' }, user], 'high'), [
      { role: 'system', content: 'Be kind.\n\nAnswer length: detailed.' },
      user,
    ]);
  });
  it('medium and unset change nothing', () => {
    assert.deepEqual(withVerbosity([user], 'medium'), [user]);
    assert.deepEqual(withVerbosity([user], undefined), [user]);
  });
});

describe('toCompletionBody', () => {
  it('sends the prompt and the shared fields, no chat-only ones', () => {
    const body = toCompletionBody(
      { model: 'agent', prompt: 'Once', maxTokens: 3, topK: 5, stop: ['\n'], verbosity: 'low', seed: 1 },
      config(),
    );
    assert.deepEqual(body, {
      model: 'small',
      stream: true,
      stream_options: { include_usage: true },
      prompt: 'Once',
      max_tokens: 3,
      top_k: 5,
      stop: ['\n'],
      seed: 1,
    });
  });
});
