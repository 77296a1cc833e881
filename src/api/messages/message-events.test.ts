// The encoder alone: a server tool's call past its max_uses (the agent loop answers it
// without running the tool, so the result carries no data) is the vendor's
// max_uses_exceeded error block and is not counted as a request; the stop reasons map
// as the vendor's; a stream's events and the whole message hold the same blocks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StreamPart } from '../../providers/types.ts';
import { MessageEncoder, stopReasonFor } from './message-events.ts';
import { ThinkingSignatures } from './thinking-signature.ts';

const ctx = { id: 'msg_x', model: 'm', accountId: 'acct', signatures: new ThinkingSignatures(Buffer.alloc(32, 1)), thinking: 'shown' as const, inputTokens: 5, stopSequences: [], cache: null, serverTools: true, mcpNames: new Map() };

const parts = (name: string, ran: boolean): StreamPart[] => [
  { type: 'tool-input-start', id: 'c1', toolName: name, providerExecuted: true },
  { type: 'tool-input-delta', id: 'c1', delta: '{"query":"x"}' },
  { type: 'tool-input-end', id: 'c1' },
  ran
    ? { type: 'tool-result', toolCallId: 'c1', toolName: name, result: 'Page: https://a.test\nTitle: A\n\ntext', data: { kind: 'web', status: 'completed', action: { type: 'search' }, sources: [{ url: 'https://a.test', title: 'A' }] } }
    : { type: 'tool-result', toolCallId: 'c1', toolName: name, result: `${name} may be used at most 1 times in one answer` },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'done' },
  { type: 'text-end', id: 't' },
  { type: 'finish', reason: 'stop', usage: { inputTokens: 5, outputTokens: 2 } },
];

for (const name of ['web_search', 'web_fetch']) {
  test(`${name} past max_uses: max_uses_exceeded, not counted`, () => {
    const enc = new MessageEncoder(ctx);
    for (const p of parts(name, false)) enc.collect(p);
    const m = enc.message({ inputTokens: 5, outputTokens: 2 }) as { content: { type: string; content: { type: string; error_code: string } }[]; usage: { server_tool_use: Record<string, number> } };
    assert.equal(m.content[1]!.content.error_code, 'max_uses_exceeded');
    assert.match(m.content[1]!.content.type, /_tool_result_error$/);
    assert.deepEqual(m.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 0 });
  });

  test(`${name} that ran: counted, and the streamed blocks equal the whole message's`, () => {
    const streamed = new MessageEncoder(ctx);
    const events = parts(name, true).flatMap((p) => streamed.events(p));
    const whole = new MessageEncoder(ctx);
    for (const p of parts(name, true)) whole.collect(p);
    const usage = { inputTokens: 5, outputTokens: 2 };
    const started = events.filter((e) => e.type === 'content_block_start').map((e) => (e.content_block as { type: string }).type);
    assert.deepEqual(started, ['server_tool_use', `${name}_tool_result`, 'text']);
    const m = whole.message(usage) as { content: { type: string; input?: unknown; content?: unknown }[]; usage: { server_tool_use: Record<string, number> } };
    assert.deepEqual(m.content[0]!.input, { query: 'x' });
    assert.equal(m.usage.server_tool_use[`${name}_requests`], 1);
    assert.deepEqual((streamed.message(usage) as { content: unknown[] }).content.map((b) => JSON.stringify(b).replace(/"retrieved_at":"[^"]*"/, '')), m.content.map((b) => JSON.stringify(b).replace(/"retrieved_at":"[^"]*"/, '')));
  });
}

test('stop reasons map as the vendor names them', () => {
  assert.equal(stopReasonFor('stop', null), 'end_turn');
  assert.equal(stopReasonFor('stop', 'END'), 'stop_sequence');
  assert.equal(stopReasonFor('length', null), 'max_tokens');
  assert.equal(stopReasonFor('tool_calls', null), 'tool_use');
  assert.equal(stopReasonFor('content_filter', null), 'refusal');
  assert.equal(stopReasonFor('tool_calls', null, true), 'pause_turn');
});
