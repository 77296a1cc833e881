// Unit cases the fixtures do not cover; full fixture replays are in provider.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProviderError } from '../../types.ts';
import type { StreamPart } from '../../types.ts';
import { mapFinishReason, StreamMapper } from './stream-mapping.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

function run(payloads: unknown[], sawDone = true): StreamPart[] {
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
        { type: 'tool-input-start', id: 'call_gen1', toolName: 'lookup' },
        { type: 'tool-input-delta', id: 'call_gen1', delta: '{"q":' },
        { type: 'tool-input-delta', id: 'call_gen1', delta: '1}' },
        { type: 'tool-input-end', id: 'call_gen1' },
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
        { type: 'tool-input-start', id: 'a', toolName: 'f' },
        { type: 'tool-input-delta', id: 'a', delta: '{' },
        { type: 'tool-input-delta', id: 'a', delta: '}' },
        { type: 'tool-input-start', id: 'b', toolName: 'g' },
        { type: 'tool-input-delta', id: 'b', delta: '{"x":1}' },
        { type: 'tool-input-end', id: 'a' },
        { type: 'tool-input-end', id: 'b' },
        { type: 'finish', reason: 'tool_calls' },
      ],
    );
  });

  it('a call whose name comes late opens once it is known, its early arguments kept', () => {
    assert.deepEqual(run([chunk({ tool_calls: [{ index: 0, id: 'a', function: { arguments: '{"x"' } }] }), chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: ':1}' } }] })]), [
      { type: 'tool-input-start', id: 'a', toolName: 'f' },
      { type: 'tool-input-delta', id: 'a', delta: '{"x":1}' },
      { type: 'tool-input-end', id: 'a' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('takes one of reasoning_content / reasoning when a server sends both', () => {
    assert.deepEqual(run([chunk({ reasoning_content: 'hm', reasoning: 'hm' })]), [
      { type: 'reasoning-start', id: 'reasoning-0' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: 'hm' },
      { type: 'reasoning-end', id: 'reasoning-0' },
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
        { type: 'text-start', id: 'text-0' },
        { type: 'text-delta', id: 'text-0', delta: 'a' },
        { type: 'text-delta', id: 'text-0', delta: 'b' },
        { type: 'text-end', id: 'text-0' },
        { type: 'finish', reason: 'stop', usage: { inputTokens: 5, outputTokens: 2 } },
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
      { type: 'text-start', id: 'text-0' },
      { type: 'text-delta', id: 'text-0', delta: 'x' },
      { type: 'text-end', id: 'text-0' },
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
        { type: 'reasoning-start', id: 'reasoning-0' },
        { type: 'reasoning-delta', id: 'reasoning-0', delta: 'think' },
        { type: 'reasoning-end', id: 'reasoning-0' },
        { type: 'text-start', id: 'text-1' },
        { type: 'text-delta', id: 'text-1', delta: 'Let me check.' },
        { type: 'text-end', id: 'text-1' },
        { type: 'tool-input-start', id: 'c1', toolName: 'f' },
        { type: 'tool-input-delta', id: 'c1', delta: '{}' },
        { type: 'tool-input-start', id: 'c2', toolName: 'g' },
        { type: 'tool-input-delta', id: 'c2', delta: '{"a":1}' },
        { type: 'tool-input-end', id: 'c1' },
        { type: 'tool-input-end', id: 'c2' },
        { type: 'finish', reason: 'tool_calls', usage: { inputTokens: 10, outputTokens: 20, reasoningTokens: 4 } },
      ],
    );
  });
});
