// The agent loop over a scripted provider: service calls passed on whole after their
// step, each just before it runs and followed by its result (with its data); client
// tools offered beside the service's, a client call ending the loop; usage summed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatProvider, ChatRequest, StreamPart } from '../providers/types.ts';
import type { AgentTool } from '../tools/types.ts';
import { runAgent } from './agent-loop.ts';

/** Answers each step with the next script; records the requests. */
function scripted(steps: StreamPart[][]): ChatProvider & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    name: 'scripted',
    requests,
    async *chat(request) {
      requests.push(request);
      yield* steps[requests.length - 1] ?? [];
    },
    complete: () => {
      throw new Error('not used');
    },
  };
}

const call = (id: string, name: string, args: string): StreamPart[] => [
  { type: 'tool-input-start', id, toolName: name },
  { type: 'tool-input-delta', id, delta: args },
  { type: 'tool-input-end', id },
];
const usage = { inputTokens: 10, outputTokens: 2 };

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const p of parts) out.push(p);
  return out;
}

test('service calls are passed on whole after their step, each just before it runs, with its result and data', async () => {
  const ran: string[] = [];
  const search: AgentTool = {
    definition: { name: 'file_search', parameters: { type: 'object' } },
    async run(args) {
      ran.push(args);
      return { text: `found for ${args}`, data: { n: ran.length } };
    },
  };
  const provider = scripted([
    [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Looking.' }, { type: 'text-end', id: 't' }, ...call('a', 'file_search', '{"query":"x"}'), ...call('b', 'file_search', '{"query":"y"}'), { type: 'finish', reason: 'tool_calls', usage }],
    [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Done [1].' }, { type: 'text-end', id: 't' }, { type: 'finish', reason: 'stop', usage }],
  ]);
  const parts = await collect(runAgent(provider, { model: 'agent', messages: [{ role: 'user', content: 'q' }], toolChoice: 'required' }, [search], new AbortController().signal));
  assert.deepEqual(
    parts.map((p) => (p.type === 'tool-input-start' ? `start ${p.id} ${p.providerExecuted}` : p.type === 'tool-result' ? `result ${p.toolCallId} ${JSON.stringify(p.data)}` : p.type)),
    ['text-start', 'text-delta', 'text-end', 'start a true', 'tool-input-delta', 'tool-input-end', 'result a {"n":1}', 'start b true', 'tool-input-delta', 'tool-input-end', 'result b {"n":2}', 'text-start', 'text-delta', 'text-end', 'finish'],
  );
  assert.deepEqual(parts.at(-1), { type: 'finish', reason: 'stop', usage: { inputTokens: 20, outputTokens: 4, reasoningTokens: 0 } });
  assert.deepEqual(provider.requests.map((r) => r.toolChoice), ['required', 'auto'], "the request's own choice for the first step, then auto");
  const second = provider.requests[1]!.messages;
  assert.deepEqual(second.slice(1).map((m) => m.role), ['assistant', 'tool', 'tool']);
  assert.equal((second[1] as { content: string }).content, 'Looking.', "the step's own text stays in the conversation");
  assert.equal((second[2] as { content: string }).content, 'found for {"query":"x"}');
});

test('client tools are offered beside the service tools; a step calling one ends the loop after its service calls ran', async () => {
  let ran = 0;
  const search: AgentTool = { definition: { name: 'file_search' }, run: async () => (ran++, 'text only') };
  const provider = scripted([[...call('c', 'get_weather', '{"city":"Paris"}'), ...call('s', 'file_search', '{}'), ...call('x', 'unknown', '{}'), { type: 'finish', reason: 'tool_calls', usage }]]);
  const request: ChatRequest = { model: 'agent', messages: [{ role: 'user', content: 'q' }], tools: [{ name: 'get_weather' }] };
  const parts = await collect(runAgent(provider, request, [search], new AbortController().signal));
  assert.deepEqual(provider.requests[0]!.tools!.map((t) => t.name), ['get_weather', 'file_search']);
  assert.deepEqual(provider.requests[0]!.toolChoice, 'auto');
  assert.deepEqual(
    parts.map((p) => p.type + ('id' in p ? ` ${p.id}` : '') + (p.type === 'tool-input-start' ? ` ${p.providerExecuted ?? false}` : '')),
    ['tool-input-start c false', 'tool-input-delta c', 'tool-input-end c', 'tool-input-start s true', 'tool-input-delta s', 'tool-input-end s', 'tool-result', 'finish'],
  );
  assert.equal(ran, 1);
  assert.equal((parts.at(-1) as { reason: string }).reason, 'tool_calls');
  assert.equal(provider.requests.length, 1);
});

test("three steps: each step's text and reasoning reach the next, beside its calls and their results; usage adds up", async () => {
  const search: AgentTool = { definition: { name: 'lookup' }, run: async (args) => `result of ${args}` };
  const step = (n: number, withCall: boolean): StreamPart[] => [
    { type: 'reasoning-start', id: 'r' },
    { type: 'reasoning-delta', id: 'r', delta: `thinking ${n}` },
    { type: 'reasoning-end', id: 'r' },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: `step ${n} ` },
    { type: 'text-delta', id: 't', delta: 'says' },
    { type: 'text-end', id: 't' },
    ...(withCall ? call(`c${n}`, 'lookup', `{"n":${n}}`) : []),
    { type: 'finish', reason: withCall ? 'tool_calls' : 'stop', usage: { inputTokens: 10 * n, outputTokens: n } },
  ];
  const provider = scripted([step(1, true), step(2, true), step(3, false)]);
  const parts = await collect(runAgent(provider, { model: 'agent', messages: [{ role: 'user', content: 'q' }] }, [search], new AbortController().signal));
  assert.equal(provider.requests.length, 3);
  const third = provider.requests[2]!.messages;
  assert.deepEqual(
    third.map((m) => [m.role, m.content, 'reasoning' in m ? m.reasoning : undefined]),
    [
      ['user', 'q', undefined],
      ['assistant', 'step 1 says', 'thinking 1'],
      ['tool', 'result of {"n":1}', undefined],
      ['assistant', 'step 2 says', 'thinking 2'],
      ['tool', 'result of {"n":2}', undefined],
    ],
  );
  assert.deepEqual(parts.at(-1), { type: 'finish', reason: 'stop', usage: { inputTokens: 60, outputTokens: 6, reasoningTokens: 0 } });
});

/** A provider that calls the tool at every step it may, and answers when told to (toolChoice none). */
function alwaysCalls(): ChatProvider & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    name: 'eager',
    requests,
    async *chat(request) {
      requests.push(request);
      const n = requests.length;
      if (request.toolChoice === 'none') {
        yield* [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Answer.' }, { type: 'text-end', id: 't' }] as StreamPart[];
        yield { type: 'finish', reason: 'stop', usage };
        return;
      }
      yield* call(`c${n}`, 'lookup', `{"n":${n}}`);
      yield { type: 'finish', reason: 'tool_calls', usage };
    },
    complete: () => {
      throw new Error('not used');
    },
  };
}

test('the step cap: the last step allowed must answer, so a model that always calls tools still ends', async () => {
  let ran = 0;
  const tool: AgentTool = { definition: { name: 'lookup', parameters: { type: 'object' } }, run: async () => `result ${++ran}` };
  const provider = alwaysCalls();
  const parts = await collect(runAgent(provider, { model: 'agent', messages: [{ role: 'user', content: 'q' }] }, [tool], new AbortController().signal, {}, { maxSteps: 3, deadlineMs: 60_000 }));
  assert.deepEqual(provider.requests.map((r) => r.toolChoice), ['auto', 'auto', 'none']);
  assert.equal(ran, 2);
  assert.equal(parts.at(-1)!.type, 'finish');
  assert.equal((parts.at(-1) as { reason: string }).reason, 'stop');
});

test('the deadline: once it has passed, the next step must answer', async () => {
  let ran = 0;
  const tool: AgentTool = { definition: { name: 'lookup', parameters: { type: 'object' } }, run: async () => `result ${++ran}` };
  const provider = alwaysCalls();
  // A deadline already passed after the first step: the second step answers.
  await collect(runAgent(provider, { model: 'agent', messages: [{ role: 'user', content: 'q' }] }, [tool], new AbortController().signal, {}, { maxSteps: 8, deadlineMs: 0 }));
  assert.deepEqual(provider.requests.map((r) => r.toolChoice), ['none']);
  assert.equal(ran, 0);
});

test('max uses: past its cap a tool does not run and costs nothing; the model is told', async () => {
  let ran = 0;
  let fees = 0;
  const tool: AgentTool = { definition: { name: 'lookup', parameters: { type: 'object' } }, maxUses: 2, feeUsd: 0.01, run: async () => `result ${++ran}` };
  const provider = alwaysCalls();
  const parts = await collect(
    runAgent(provider, { model: 'agent', messages: [{ role: 'user', content: 'q' }] }, [tool], new AbortController().signal, { beforeTool: async () => void fees++ }, { maxSteps: 5, deadlineMs: 60_000 }),
  );
  assert.equal(ran, 2);
  assert.equal(fees, 2);
  const results = parts.filter((p) => p.type === 'tool-result').map((p) => (p as { result: string }).result);
  assert.deepEqual(results.slice(0, 2), ['result 1', 'result 2']);
  assert.ok(results.slice(2).every((r) => /at most 2 times/.test(r)));
});

test('pause at the limit: the last step may still call service tools; its calls are passed on, not run, and the loop finishes paused', async () => {
  let ran = 0;
  const tool: AgentTool = { definition: { name: 'lookup', parameters: { type: 'object' } }, run: async () => `result ${++ran}` };
  const provider = alwaysCalls();
  const parts = await collect(
    runAgent(provider, { model: 'agent', messages: [{ role: 'user', content: 'q' }] }, [tool], new AbortController().signal, {}, { maxSteps: 2, deadlineMs: 60_000 }, { pauseAtLimit: true }),
  );
  assert.deepEqual(provider.requests.map((r) => r.toolChoice), ['auto', 'auto'], 'the last step is offered the tools');
  assert.equal(ran, 1, 'the last step\'s call does not run');
  assert.deepEqual(
    parts.map((p) => (p.type === 'tool-input-start' ? `start ${p.id} ${p.providerExecuted}` : p.type === 'tool-result' ? `result ${p.toolCallId}` : p.type)),
    ['start c1 true', 'tool-input-delta', 'tool-input-end', 'result c1', 'start c2 true', 'tool-input-delta', 'tool-input-end', 'finish'],
  );
  assert.deepEqual(parts.at(-1), { type: 'finish', reason: 'tool_calls', paused: true, usage: { inputTokens: 20, outputTokens: 4, reasoningTokens: 0 } });
});

test('pause at the limit: a last step that answers finishes as usual', async () => {
  const tool: AgentTool = { definition: { name: 'lookup' }, run: async () => 'x' };
  const provider = scripted([[{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Hi.' }, { type: 'text-end', id: 't' }, { type: 'finish', reason: 'stop', usage }]]);
  const parts = await collect(runAgent(provider, { model: 'agent', messages: [{ role: 'user', content: 'q' }] }, [tool], new AbortController().signal, {}, { maxSteps: 1, deadlineMs: 60_000 }, { pauseAtLimit: true }));
  assert.deepEqual(parts.at(-1), { type: 'finish', reason: 'stop', usage: { inputTokens: 10, outputTokens: 2, reasoningTokens: 0 } });
});

test('pending calls of a paused turn run first (charged, counted against max uses), then the steps go on from their results', async () => {
  const ran: string[] = [];
  let fees = 0;
  const tool: AgentTool = { definition: { name: 'lookup', parameters: { type: 'object' } }, feeUsd: 0.01, run: async (args) => (ran.push(args), `result of ${args}`) };
  const provider = scripted([[{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Done.' }, { type: 'text-end', id: 't' }, { type: 'finish', reason: 'stop', usage }]]);
  const pending = [{ id: 'p1', name: 'lookup', arguments: '{"n":1}' }];
  const request: ChatRequest = { model: 'agent', messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'Looking.', tool_calls: pending }] };
  const parts = await collect(runAgent(provider, request, [tool], new AbortController().signal, { beforeTool: async () => void fees++ }, { maxSteps: 2, deadlineMs: 60_000 }, { pending }));
  assert.deepEqual(ran, ['{"n":1}']);
  assert.equal(fees, 1);
  assert.deepEqual(parts.map((p) => p.type), ['tool-result', 'text-start', 'text-delta', 'text-end', 'finish'], 'no input parts for calls the client already has');
  assert.equal((parts[0] as { toolCallId: string }).toolCallId, 'p1');
  assert.deepEqual(provider.requests[0]!.messages.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.equal((provider.requests[0]!.messages[2] as { content: string }).content, 'result of {"n":1}');
});
