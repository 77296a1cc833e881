// The last assistant turn sent back with server calls in it (a turn continued after
// pause_turn) maps to the agent loop's own steps: each step's text beside its calls,
// their results as tool messages, and the calls at its end without a result pending.
// Earlier assistant turns keep reading server blocks as text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ThinkingSignatures } from './thinking-signature.ts';
import { toChatRequest, type MessageBody } from './to-chat-request.ts';

const signatures = new ThinkingSignatures(Buffer.alloc(32, 7));
const map = (messages: unknown[]) => toChatRequest({ model: 'agent', max_tokens: 100, messages } as unknown as MessageBody, 'agent', 100, new Map(), signatures, 'acct');

const turn = [
  { type: 'text', text: 'Let me look.' },
  { type: 'server_tool_use', id: 'srv_a', name: 'web_search', input: { query: 'trains' } },
  { type: 'web_search_tool_result', tool_use_id: 'srv_a', content: [{ type: 'web_search_result', url: 'https://x.test', title: 'X' }] },
  { type: 'text', text: 'More.' },
  { type: 'server_tool_use', id: 'srv_b', name: 'web_fetch', input: { url: 'https://x.test' } },
];

test('a last assistant turn with server calls: its steps, their results, and the pending call at its end', () => {
  const mapped = map([{ role: 'user', content: 'q' }, { role: 'assistant', content: turn }]);
  const messages = mapped.request.messages;
  assert.deepEqual(
    messages.map((m) => [m.role, m.content, 'tool_calls' in m ? m.tool_calls?.map((c) => `${c.id} ${c.name} ${c.arguments}`) : undefined]),
    [
      ['user', 'q', undefined],
      ['assistant', 'Let me look.', ['srv_a web_search {"query":"trains"}']],
      ['tool', JSON.stringify(turn[2]!.content), undefined],
      ['assistant', 'More.', ['srv_b web_fetch {"url":"https://x.test"}']],
    ],
  );
  assert.deepEqual(
    mapped.pending.map((p) => [p.call.id, p.at]),
    [['srv_b', 'messages[1].content[4]']],
  );
  assert.equal(mapped.pending[0]!.call, (messages[3] as { tool_calls: unknown[] }).tool_calls[0], 'the pending call is the mapped message\'s own');
});

test('the same turn followed by a user turn reads as text, with nothing pending; a client tool_use in the open turn is refused', () => {
  const mapped = map([{ role: 'user', content: 'q' }, { role: 'assistant', content: turn }, { role: 'user', content: 'thanks' }]);
  assert.deepEqual(mapped.request.messages.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.deepEqual(mapped.pending, []);
  assert.throws(
    () => map([{ role: 'user', content: 'q' }, { role: 'assistant', content: [...turn, { type: 'tool_use', id: 't1', name: 'f', input: {} }] }]),
    (e: unknown) => (e as { param?: string }).param === 'messages[1].content[5]',
  );
});
