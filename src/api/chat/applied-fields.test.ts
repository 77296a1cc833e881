// Every field an offered model endpoint lists as applied has an effect: it reaches the
// upstream model server (or is one of the few the service itself applies, named below
// with where). The fields are read from the contract tables, so a field added there
// without a mapping, or a mapping lost (as /v1/completions once dropped
// response_format), fails here.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createChatCompletion } from '../../contract/endpoints/chat.ts';
import { createCompletion } from '../../contract/endpoints/completions.ts';
import type { EndpointContract } from '../../contract/types.ts';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

type Body = Record<string, unknown>;
type Upstream = Record<string, any>;

/** Applied by the service itself, not sent to the model, and where. */
const SERVICE_SIDE: Record<string, string> = {
  store: 'keeps the completion (stored-completions.test.ts)',
  metadata: 'kept with a stored completion (stored-completions.test.ts)',
  safety_identifier: 'kept in the activity log (admin.test.ts)',
  stream_options: 'include_usage adds our final usage chunk; upstream usage is always asked for',
  'stream_options.include_usage': 'as stream_options',
};

const tool = { type: 'function', function: { name: 'probe', parameters: { type: 'object', properties: {} } } };

/** Per field: what to add to a base request, and how the upstream request shows it arrived. */
const PROBES: Record<string, { add: Body; seen: (u: Upstream) => boolean }> = {
  model: { add: { model: 'agent-think' }, seen: (u) => u.model === 'upstream-think' },
  messages: { add: { messages: [{ role: 'user', content: 'probe-message' }] }, seen: (u) => JSON.stringify(u.messages).includes('probe-message') },
  prompt: { add: { prompt: 'probe-prompt' }, seen: (u) => u.prompt === 'probe-prompt' },
  tools: { add: { tools: [tool] }, seen: (u) => u.tools?.[0]?.function?.name === 'probe' },
  tool_choice: { add: { tools: [tool], tool_choice: { type: 'function', function: { name: 'probe' } } }, seen: (u) => u.tool_choice?.function?.name === 'probe' },
  functions: { add: { functions: [tool.function] }, seen: (u) => u.tools?.[0]?.function?.name === 'probe' },
  function_call: { add: { functions: [tool.function], function_call: { name: 'probe' } }, seen: (u) => u.tool_choice?.function?.name === 'probe' },
  parallel_tool_calls: { add: { tools: [tool], parallel_tool_calls: false }, seen: (u) => u.parallel_tool_calls === false },
  max_tokens: { add: { max_tokens: 77 }, seen: (u) => u.max_tokens === 77 },
  max_completion_tokens: { add: { max_completion_tokens: 78 }, seen: (u) => u.max_tokens === 78 },
  temperature: { add: { temperature: 0.3 }, seen: (u) => u.temperature === 0.3 },
  top_p: { add: { top_p: 0.9 }, seen: (u) => u.top_p === 0.9 },
  top_k: { add: { top_k: 40 }, seen: (u) => u.top_k === 40 },
  min_p: { add: { min_p: 0.05 }, seen: (u) => u.min_p === 0.05 },
  top_a: { add: { top_a: 0.2 }, seen: (u) => u.top_a === 0.2 },
  repetition_penalty: { add: { repetition_penalty: 1.1 }, seen: (u) => u.repetition_penalty === 1.1 },
  presence_penalty: { add: { presence_penalty: 0.5 }, seen: (u) => u.presence_penalty === 0.5 },
  frequency_penalty: { add: { frequency_penalty: -0.5 }, seen: (u) => u.frequency_penalty === -0.5 },
  logit_bias: { add: { logit_bias: { '50256': -100 } }, seen: (u) => u.logit_bias?.['50256'] === -100 },
  logprobs: { add: { logprobs: true }, seen: (u) => u.logprobs === true },
  top_logprobs: { add: { logprobs: true, top_logprobs: 3 }, seen: (u) => u.top_logprobs === 3 },
  seed: { add: { seed: 42 }, seen: (u) => u.seed === 42 },
  stop: { add: { stop: ['END'] }, seen: (u) => u.stop?.[0] === 'END' },
  stream: { add: { stream: true }, seen: (u) => u.stream === true },
  response_format: {
    add: { response_format: { type: 'json_schema', json_schema: { name: 'probe_format', schema: { type: 'object' } } } },
    seen: (u) => u.response_format?.json_schema?.name === 'probe_format',
  },
  // agent-think's upstream model is configured as a reasoning model below.
  reasoning_effort: { add: { model: 'agent-think', reasoning_effort: 'high' }, seen: (u) => u.reasoning_effort === 'high' },
  reasoning: { add: { model: 'agent-think', reasoning: { effort: 'low' } }, seen: (u) => u.reasoning_effort === 'low' },
  verbosity: { add: { verbosity: 'high' }, seen: (u) => JSON.stringify(u.messages).includes('Answer length: detailed') },
  user: { add: { user: 'probe-user' }, seen: (u) => u.user === 'probe-user' },
};

const ENDPOINTS: { contract: EndpointContract; path: string; base: Body }[] = [
  { contract: createChatCompletion, path: '/v1/chat/completions', base: { model: 'agent', messages: [{ role: 'user', content: 'hi' }] } },
  { contract: createCompletion, path: '/v1/completions', base: { model: 'agent', prompt: 'hi' } },
];

let upstream: FakeUpstream;
let server: TestServer;
let key: string;

before(async () => {
  upstream = await startFakeUpstream(async (req, res) => {
    const chat = req.url.endsWith('/chat/completions');
    const answer = chat
      ? { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: '{}' }, finish_reason: 'stop' }] }
      : { id: 'x', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: '{}', finish_reason: 'stop' }] };
    const usage = { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 };
    if (req.body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const delta = chat ? { choices: [{ index: 0, delta: { content: '{}' }, finish_reason: 'stop' }] } : { choices: [{ index: 0, text: '{}', finish_reason: 'stop' }] };
      res.end(`data: ${JSON.stringify({ ...answer, ...delta })}\n\ndata: ${JSON.stringify({ ...answer, choices: [], usage })}\n\ndata: [DONE]\n\n`);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...answer, usage }));
    }
  });
  server = await startTestServer({
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_MODEL_AGENT: 'upstream-small',
    UPSTREAM_MODEL_AGENT_THINK: 'upstream-think',
    UPSTREAM_REASONING_MODELS: 'upstream-think',
    UPSTREAM_MAX_RETRIES: '0',
  });
  key = (await server.createKey({ permissions: { function_calling: true } })).key;
});
after(async () => {
  await server.close();
  await upstream.close();
});

for (const { contract, path, base } of ENDPOINTS) {
  test(`every applied field of ${contract.method} ${path} reaches the upstream, or is applied by the service`, async () => {
    const applied = Object.entries(contract.body!.fields)
      .filter(([, rule]) => rule.category === 'applied')
      .map(([name]) => name);
    const unprobed = applied.filter((f) => !PROBES[f] && !SERVICE_SIDE[f]);
    assert.deepEqual(unprobed, [], 'an applied field without a probe: add how it reaches the model (or why it does not)');
    for (const field of applied.filter((f) => PROBES[f])) {
      const before = upstream.requests.length;
      const res = await server.fetch(path, {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...base, ...PROBES[field]!.add }),
      });
      assert.equal(res.status, 200, `${field}: ${await res.clone().text()}`);
      await res.arrayBuffer();
      assert.equal(upstream.requests.length, before + 1, `${field}: one upstream call`);
      const sent = upstream.requests.at(-1)!.body;
      assert.ok(PROBES[field]!.seen(sent), `${field} did not reach the upstream: ${JSON.stringify(sent)}`);
    }
  });
}
