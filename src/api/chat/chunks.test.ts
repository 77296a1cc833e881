// Chunks are built as text around the choice; they must read as the reference's
// chat.completion.chunk, keys in its order, usage null only with include_usage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventChunk, roleChunk, type ChunkContext } from './chunks.ts';

const ctx = (includeUsage: boolean, legacyFunctions = false): ChunkContext => ({ id: 'chatcmpl-x"y', created: 7, model: 'agent', legacyFunctions, includeUsage });

test('a text chunk has the reference shape and key order; strings are escaped', () => {
  const text = eventChunk(ctx(true), { type: 'text-delta', id: 't', delta: 'a "quoted"\nline' }) as string;
  const parsed = JSON.parse(text) as { choices: Record<string, unknown>[] } & Record<string, unknown>;
  assert.deepEqual(parsed, {
    id: 'chatcmpl-x"y',
    object: 'chat.completion.chunk',
    created: 7,
    model: 'agent',
    service_tier: 'default',
    system_fingerprint: 'agent-api',
    choices: [{ index: 0, delta: { content: 'a "quoted"\nline' }, logprobs: null, finish_reason: null }],
    usage: null,
  });
  assert.deepEqual(Object.keys(parsed), ['id', 'object', 'created', 'model', 'service_tier', 'system_fingerprint', 'choices', 'usage']);
  assert.deepEqual(Object.keys(parsed.choices[0]!), ['index', 'delta', 'logprobs', 'finish_reason']);
});

test('without include_usage there is no usage key; role, finish, tool-call and legacy chunks', () => {
  const c = ctx(false);
  assert.equal('usage' in JSON.parse(roleChunk(c)), false);
  assert.deepEqual(JSON.parse(roleChunk(c)).choices[0].delta, { role: 'assistant', content: '', refusal: null });
  assert.equal(JSON.parse(eventChunk(c, { type: 'finish', reason: 'length' }) as string).choices[0].finish_reason, 'length');
  eventChunk(c, { type: 'tool-input-start', id: 'call_0', toolName: 'g' });
  const call = JSON.parse(eventChunk(c, { type: 'tool-input-start', id: 'call_1', toolName: 'f' }) as string);
  assert.deepEqual(call.choices[0].delta, { tool_calls: [{ index: 1, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] });
  const args = JSON.parse(eventChunk(c, { type: 'tool-input-delta', id: 'call_1', delta: '{"a"' }) as string);
  assert.deepEqual(args.choices[0].delta, { tool_calls: [{ index: 1, function: { arguments: '{"a"' } }] });
  assert.equal(eventChunk(c, { type: 'tool-input-start', id: 'call_s', toolName: 'search', providerExecuted: true }), null, "the service's own tool is not the client's call");
  const legacy = ctx(false, true);
  assert.deepEqual(JSON.parse(eventChunk(legacy, { type: 'tool-input-start', id: 'call_1', toolName: 'f' }) as string).choices[0].delta, {
    function_call: { name: 'f', arguments: '' },
  });
  assert.equal(JSON.parse(eventChunk(legacy, { type: 'finish', reason: 'tool_calls' }) as string).choices[0].finish_reason, 'function_call');
  const lp = [{ token: 'a', logprob: -0.1, bytes: [97], top_logprobs: [] }];
  assert.deepEqual(JSON.parse(eventChunk(c, { type: 'text-delta', id: 't', delta: 'a', logprobs: lp }) as string).choices[0].logprobs, { content: lp, refusal: null });
  assert.equal(eventChunk(c, { type: 'text-start', id: 't' }), null);
});
