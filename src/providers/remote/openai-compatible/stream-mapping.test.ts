// Unit cases the fixtures do not cover; full fixture replays are in provider.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProviderError } from '../../types.ts';
import type { ProviderEvent } from '../../types.ts';
import { mapFinishReason, StreamMapper } from './stream-mapping.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

function run(payloads: unknown[], sawDone = true): ProviderEvent[] {
  let n = 0;
  const mapper = new StreamMapper('chat', () => `call_gen${++n}`);
  return [...payloads.flatMap((p) => mapper.push(p)), ...mapper.end(sawDone)];
}

describe('StreamMapper', () => {
  it('maps finish reasons', () => {
    assert.equal(mapFinishReason('function_call', false), 'tool_calls');
    assert.equal(mapFinishReason('length', true), 'length');
    assert.equal(mapFinishReason('content_filter', false), 'content_filter');
    assert.equal(mapFinishReason('eos', false), 'stop');
    assert.equal(mapFinishReason(undefined, false), 'stop');
    assert.equal(mapFinishReason('stop', true), 'tool_calls');
  });

  it('maps legacy function_call deltas to tool call 0 with a made-up id', () => {
    assert.deepEqual(
      run([
        chunk({ role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '' } }),
        chunk({ function_call: { arguments: '{"q":' } }),
        chunk({ function_call: { arguments: '1}' } }),
        chunk({}, 'function_call'),
      ]),
      [
        { type: 'tool_call', index: 0, id: 'call_gen1', name: 'lookup', argumentsDelta: '' },
        { type: 'tool_call', index: 0, argumentsDelta: '{"q":' },
        { type: 'tool_call', index: 0, argumentsDelta: '1}' },
        { type: 'finish', reason: 'tool_calls' },
      ],
    );
  });

  it('continues an index-less call in fragments and opens a new index for a new id', () => {
    assert.deepEqual(
      run([
        chunk({ tool_calls: [{ id: 'a', function: { name: 'f', arguments: '{' } }] }),
        chunk({ tool_calls: [{ function: { arguments: '}' } }] }),
        chunk({ tool_calls: [{ id: 'a', function: { arguments: '' } }] }), // a repeated header: nothing new
        chunk({ tool_calls: [{ id: 'b', function: { name: 'g', arguments: { x: 1 } } }] }), // object arguments
      ]),
      [
        { type: 'tool_call', index: 0, id: 'a', name: 'f', argumentsDelta: '{' },
        { type: 'tool_call', index: 0, argumentsDelta: '}' },
        { type: 'tool_call', index: 1, id: 'b', name: 'g', argumentsDelta: '{"x":1}' },
        { type: 'finish', reason: 'tool_calls' },
      ],
    );
  });

  it('takes one of reasoning_content / reasoning when a server sends both', () => {
    assert.deepEqual(run([chunk({ reasoning_content: 'hm', reasoning: 'hm' })]), [
      { type: 'reasoning', delta: 'hm' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('keeps the last usage of cumulative usage chunks and ignores other choices', () => {
    assert.deepEqual(
      run([
        { choices: [{ index: 0, delta: { content: 'a' } }, { index: 1, delta: { content: 'IGNORED' } }], usage: { prompt_tokens: 5, completion_tokens: 1 } },
        { choices: [{ index: 0, delta: { content: 'b' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2 } },
      ]),
      [
        { type: 'text', delta: 'a' },
        { type: 'text', delta: 'b' },
        { type: 'usage', usage: { inputTokens: 5, outputTokens: 2 } },
        { type: 'finish', reason: 'stop' },
      ],
    );
  });

  it('throws ProviderError on error payloads of every known shape', () => {
    const shapes = [
      { error: { message: 'boom', code: 500 } },
      { error: 'boom' },
      { object: 'error', message: 'boom', type: 'BadRequestError', code: 400 },
    ];
    for (const payload of shapes) {
      assert.throws(
        () => new StreamMapper('chat').push(payload),
        (err: unknown) => err instanceof ProviderError && err.message.includes('boom'),
      );
    }
  });

  it('refuses a stream that ended with neither [DONE] nor a finish reason', () => {
    const mapper = new StreamMapper('chat');
    mapper.push(chunk({ content: 'half' }));
    assert.throws(() => mapper.end(false), (err: unknown) => err instanceof ProviderError && /ended before/.test(err.message));
  });

  it('accepts a finish reason without [DONE]', () => {
    assert.deepEqual(run([chunk({ content: 'x' }, 'stop')], false), [
      { type: 'text', delta: 'x' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('maps a whole non-streamed chat.completion', () => {
    const mapper = new StreamMapper('chat');
    assert.deepEqual(
      mapper.whole({
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Let me check.',
              reasoning_content: 'think',
              tool_calls: [
                { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
                { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"a":1}' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 20, completion_tokens_details: { reasoning_tokens: 4 } },
      }),
      [
        { type: 'reasoning', delta: 'think' },
        { type: 'text', delta: 'Let me check.' },
        { type: 'tool_call', index: 0, id: 'c1', name: 'f', argumentsDelta: '{}' },
        { type: 'tool_call', index: 1, id: 'c2', name: 'g', argumentsDelta: '{"a":1}' },
        { type: 'usage', usage: { inputTokens: 10, outputTokens: 20, reasoningTokens: 4 } },
        { type: 'finish', reason: 'tool_calls' },
      ],
    );
  });
});
