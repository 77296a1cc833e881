// A call holds several runs: an agent loop of three model steps that calls a tool with a
// flat fee twice is one call, three ledger entries under their own run ids (the model's
// run, extended per step, and one per fee), and one activity row whose credits are the
// ledger's charge and the sum of the runs. Each step's text reaches the next step.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';
import type { AgentTool } from '../tools/types.ts';
import type { ChatProvider, ChatRequest, StreamPart } from '../providers/types.ts';
import { toMicro } from '../accounts/money.ts';
import { callRuns } from './ledger.ts';

const FEE_USD = 0.002;
const PRICE = { inputPerMTok: 1, outputPerMTok: 2 };

const requests: ChatRequest[] = [];
const step = (n: number, callsTool: boolean): StreamPart[] => [
  { type: 'text-start', id: `t${n}` },
  { type: 'text-delta', id: `t${n}`, delta: `Step ${n} looked.` },
  { type: 'text-end', id: `t${n}` },
  ...(callsTool
    ? ([
        { type: 'tool-input-start', id: `call_${n}`, toolName: 'paid_lookup' },
        { type: 'tool-input-delta', id: `call_${n}`, delta: `{"q":${n}}` },
        { type: 'tool-input-end', id: `call_${n}` },
      ] as StreamPart[])
    : []),
  { type: 'finish', reason: callsTool ? 'tool_calls' : 'stop', usage: { inputTokens: 100 * n, outputTokens: 10 * n } },
];
/** Three steps per request: the first two call the paid tool. */
const provider: ChatProvider = {
  name: 'scripted',
  async *chat(request) {
    requests.push(request);
    const n = request.messages.filter((m) => m.role === 'tool').length + 1;
    yield* step(n, n < 3);
  },
  complete: () => {
    throw new Error('not used');
  },
};
const paid: AgentTool = { definition: { name: 'paid_lookup', parameters: { type: 'object' } }, feeUsd: FEE_USD, run: async (args) => `found ${args}` };

let server: TestServer;
before(async () => {
  server = await startTestServer({}, { chat: { provider, price: () => PRICE, describe: 'scripted' }, assistantTools: () => [paid] });
});
after(() => server.close());

test('three agent steps and two tool fees in one request: one activity row equal to the ledger and the sum of its runs', async () => {
  const account = await server.createAccount(10);
  const { key, id: keyId } = await server.createKey({ account_id: account.id, permissions: { agent_tools: true } });
  const res = await server
    .openai(key)
    .chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Look it up twice.' }] })
    .withResponse();
  assert.match(res.data.choices[0]!.message.content ?? '', /Step 3 looked\./);

  // Each step saw what the steps before it said, beside their calls and results.
  assert.equal(requests.length, 3);
  const third = requests[2]!.messages.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : ''}`);
  assert.deepEqual(third.slice(1), ['assistant: Step 1 looked.', 'tool: found {"q":1}', 'assistant: Step 2 looked.', 'tool: found {"q":2}']);

  const requestId = res.response.headers.get('x-request-id')!;
  const { from, to } = callRuns(requestId);
  const { db } = server.app.services.store;
  const entries = await db.selectFrom('credit_reservations').selectAll().where('run_id', '>=', from).where('run_id', '<', to).orderBy('run_id').execute();
  assert.deepEqual(
    entries.map((e) => [e.run_id, e.request_id]),
    [requestId, `${requestId}.1`, `${requestId}.2`].map((id) => [id, requestId]),
  );
  // The model's run: the three steps' usage at the model's price; each fee its flat price.
  const modelUsd = (600 * PRICE.inputPerMTok + 60 * PRICE.outputPerMTok) / 1_000_000;
  const perUsd = server.app.services.config.creditsPerUsd;
  assert.equal(entries[0]!.charged, Math.ceil(modelUsd * perUsd * 1_000_000));
  assert.deepEqual([entries[0]!.input_tokens, entries[0]!.output_tokens], [600, 60]);
  for (const fee of entries.slice(1)) assert.equal(fee.charged, Math.ceil(FEE_USD * perUsd * 1_000_000));
  const charged = entries.reduce((sum, e) => sum + Number(e.charged), 0);

  await server.app.services.activity.flush();
  const rows = await db.selectFrom('activity').selectAll().where('key_id', '=', keyId).execute();
  assert.equal(rows.length, 1, 'one row for the call');
  assert.equal(rows[0]!.request_id, requestId);
  assert.equal(Number(rows[0]!.credits_settled), charged, 'the row is the sum of the runs');
  assert.equal(Number(rows[0]!.credits_reserved), entries.reduce((sum, e) => sum + Number(e.amount), 0));
  assert.deepEqual([Number(rows[0]!.input_tokens), Number(rows[0]!.output_tokens)], [600, 60]);
  const account2 = (await server.admin('GET', `/accounts/${account.id}`)).body;
  assert.equal(toMicro(10) - toMicro(account2.credits), charged, "the balance lost the ledger's charge");
  assert.equal(account2.reserved_credits, 0, 'nothing stays held');
  // What the response reported is what was charged.
  assert.equal(toMicro((res.data as unknown as { svc: number }).svc), charged);
});
