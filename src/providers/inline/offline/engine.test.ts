import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatRequest, CompletionRequest, FunctionTool, StreamPart } from '../../types.ts';
import { DATA_DIR, pyString } from './data-program.ts';
import { createOfflineEngine } from './index.ts';
import { toPieces, countChatTokens } from './tokens.ts';

const engine = createOfflineEngine();
const ajv = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true });
ajvFormats.default(ajv); // CommonJS default under NodeNext

type Ev<T extends StreamPart['type']> = Extract<StreamPart, { type: T }>;

async function collect(events: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const ev of events) out.push(ev);
  return out;
}
const chat = (req: Partial<ChatRequest> & { messages: ChatRequest['messages'] }): Promise<StreamPart[]> =>
  collect(engine.chat({ model: 'agent', ...req }, new AbortController().signal));
const complete = (req: Partial<CompletionRequest> & { prompt: string }): Promise<StreamPart[]> =>
  collect(engine.complete({ model: 'agent', ...req }, new AbortController().signal));
const user = (content: string): ChatRequest['messages'] => [{ role: 'user', content }];

const of = <T extends StreamPart['type']>(events: StreamPart[], type: T): Ev<T>[] =>
  events.filter((e): e is Ev<T> => e.type === type);
const textOf = (events: StreamPart[]): string => of(events, 'text-delta').map((e) => e.delta).join('');
const usageOf = (events: StreamPart[]) => of(events, 'finish')[0]!.usage!;
const finishOf = (events: StreamPart[]) => of(events, 'finish')[0]!.reason;

function assertEndsWithUsageThenFinish(events: StreamPart[]): void {
  const last = events.at(-1);
  assert.equal(last?.type, 'finish');
  assert.ok(last?.type === 'finish' && last.usage, 'the finish carries usage');
  assert.equal(of(events, 'finish').length, 1);
  // Text opens before its deltas and closes after them.
  const text = events.flatMap((e, i) => (e.type.startsWith('text-') ? [[e.type, i] as const] : []));
  if (text.length) {
    assert.equal(text[0]![0], 'text-start');
    assert.equal(text.at(-1)![0], 'text-end');
    assert.equal(of(events, 'text-start').length, 1);
  }
}

const LONG = Array.from({ length: 40 }, (_, i) => `Sentence number ${i + 1} talks about trains, rivers and small towns.`).join(' ');

// --- Tokens, usage, streaming ------------------------------------------------

test('streams one token per text event and reports real o200k usage', async () => {
  const messages = user('What is 12 * 7?');
  const events = await chat({ messages });
  const text = textOf(events);
  assert.match(text, /\b84\b/);
  assertEndsWithUsageThenFinish(events);
  assert.equal(finishOf(events), 'stop');
  assert.deepEqual(of(events, 'text-delta').map((e) => e.delta), toPieces(text).map((p) => p.text));
  assert.ok(of(events, 'text-delta').length > 3);
  const usage = usageOf(events);
  assert.equal(usage.outputTokens, encode(text).length);
  assert.equal(usage.inputTokens, encode('What is 12 * 7?').length + 3 + 3);
  assert.equal(usage.inputTokens, await countChatTokens(messages));
  assert.equal(usage.reasoningTokens, 0);
});

test('multi-byte characters are never split into broken strings', async () => {
  const events = await chat({ messages: user('Say exactly: 🎉 日本語 👩‍👩‍👧 ok') });
  assert.equal(textOf(events), '🎉 日本語 👩‍👩‍👧 ok');
  for (const e of of(events, 'text-delta')) assert.ok(!e.delta.includes('\uFFFD'), JSON.stringify(e.delta));
  assert.equal(usageOf(events).outputTokens, encode('🎉 日本語 👩‍👩‍👧 ok').length);
});

test('stops when the consumer aborts between tokens', async () => {
  const controller = new AbortController();
  const seen: StreamPart[] = [];
  for await (const ev of engine.chat({ model: 'agent', messages: user(LONG), verbosity: 'high' }, controller.signal)) {
    seen.push(ev);
    if (ev.type === 'text-delta') controller.abort();
  }
  assert.deepEqual(seen.map((e) => e.type), ['text-start', 'text-delta'], 'nothing after the abort, not even the finish');
});

test('an abort from another task (I/O, a timer) stops a long stream early', async () => {
  const controller = new AbortController();
  setImmediate(() => controller.abort());
  const events = await collect(engine.chat({ model: 'agent', messages: user(LONG), verbosity: 'high' }, controller.signal));
  const full = await chat({ messages: user(LONG), verbosity: 'high' });
  assert.ok(of(full, 'text-delta').length > 300);
  assert.ok(of(events, 'text-delta').length < of(full, 'text-delta').length / 2, `${of(events, 'text-delta').length} events before the abort`);
  assert.equal(of(events, 'finish').length, 0);
});

test('an already aborted signal yields nothing', async () => {
  const controller = new AbortController();
  controller.abort();
  assert.deepEqual(await collect(engine.chat({ model: 'agent', messages: user('hi') }, controller.signal)), []);
});

// --- Determinism --------------------------------------------------------------

test('same input and seed give the same output; seeds may vary wording; temperature 0 ignores the seed', async (t) => {
  t.mock.method(Math, 'random', () => {
    throw new Error('Math.random used');
  });
  const messages = user('Tell me about the river near my town.');
  const a = await chat({ messages, seed: 42 });
  const b = await chat({ messages, seed: 42 });
  assert.deepEqual(a, b);
  assert.deepEqual(await chat({ messages }), await chat({ messages }), 'no seed: a stable default');

  const bySeed = new Set<string>();
  for (let seed = 0; seed < 10; seed++) bySeed.add(textOf(await chat({ messages, seed })));
  assert.ok(bySeed.size > 1, 'different seeds vary the wording');

  const cold = new Set<string>();
  for (let seed = 0; seed < 10; seed++) cold.add(textOf(await chat({ messages, seed, temperature: 0 })));
  assert.equal(cold.size, 1);
});

test('verbosity changes the answer length', async () => {
  const lengths = [];
  for (const verbosity of ['low', 'medium', 'high'] as const) {
    lengths.push(usageOf(await chat({ messages: user(LONG), verbosity })).outputTokens);
  }
  assert.ok(lengths[0]! < lengths[1]! && lengths[1]! < lengths[2]!, lengths.join(' < '));
});

test('a "be brief" instruction lowers verbosity when the request sets none', async () => {
  const plain = usageOf(await chat({ messages: user(LONG) })).outputTokens;
  const brief = usageOf(await chat({ messages: [{ role: 'system', content: 'Be brief.' }, ...user(LONG)] })).outputTokens;
  assert.ok(brief < plain, `${brief} < ${plain}`);
});

// --- stop and maxTokens -------------------------------------------------------

test('stop sequences never appear in the output', async () => {
  const messages = user('Say exactly: alpha beta gamma delta');
  for (const stop of [['gamma'], ['delta', ' beta'], ['a b'], ['alpha']]) {
    const events = await chat({ messages, stop });
    const text = textOf(events);
    for (const s of stop) assert.ok(!text.includes(s), `${JSON.stringify(stop)} → ${text}`);
    assert.ok('alpha beta gamma delta'.startsWith(text));
    assert.equal(finishOf(events), 'stop');
    assert.equal(usageOf(events).outputTokens, encode(text).length);
  }
  assert.equal(textOf(await chat({ messages, stop: ['gamma'] })), 'alpha beta ');
});

test('maxTokens cuts the output with finish reason length', async () => {
  const events = await chat({ messages: user(LONG), maxTokens: 7 });
  assert.equal(finishOf(events), 'length');
  assert.equal(usageOf(events).outputTokens, 7);
  assert.equal(of(events, 'text-delta').length, 7);
  assertEndsWithUsageThenFinish(events);
  const roomy = await chat({ messages: user('What is 2 + 2?'), maxTokens: 500 });
  assert.equal(finishOf(roomy), 'stop');
});

// --- Tools ----------------------------------------------------------------------

const weather: FunctionTool = {
  name: 'get_weather',
  description: 'Get the current weather for a city',
  strict: true,
  parameters: {
    type: 'object',
    properties: {
      location: { type: 'string', description: 'City name' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer', minimum: 1, maximum: 7 },
    },
    required: ['location', 'unit', 'days'],
    additionalProperties: false,
  },
};
const booking: FunctionTool = {
  name: 'book_flight',
  description: 'Book a flight between two airports',
  parameters: {
    $defs: { airport: { type: 'string', pattern: '^[A-Z]{3}$' } },
    type: 'object',
    properties: {
      from: { $ref: '#/$defs/airport' },
      to: { $ref: '#/$defs/airport' },
      date: { type: 'string', format: 'date' },
      passengers: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } }, required: ['name', 'age'], additionalProperties: false }, minItems: 1 },
    },
    required: ['from', 'to', 'date', 'passengers'],
    additionalProperties: false,
  },
};

interface Call {
  id: string;
  name: string;
  args: string;
  fragments: number;
}
function callsOf(events: StreamPart[]): Call[] {
  const calls: Call[] = [];
  let open: Call | null = null;
  for (const e of events) {
    if (e.type === 'tool-input-start') {
      assert.equal(open, null, 'one call streams at a time');
      open = { id: e.id, name: e.toolName, args: '', fragments: 0 };
      calls.push(open);
    } else if (e.type === 'tool-input-delta') {
      assert.equal(e.id, (open as Call | null)?.id, 'a delta belongs to the open call');
      open!.args += e.delta;
      open!.fragments++;
    } else if (e.type === 'tool-input-end') {
      assert.equal(e.id, (open as Call | null)?.id);
      open = null;
    }
  }
  assert.equal(open, null, 'every call is closed');
  return calls;
}

test('required: calls the best-matching function with schema-valid arguments, streamed in fragments', async () => {
  const events = await chat({ messages: user("What's the weather in Paris?"), tools: [booking, weather], toolChoice: 'required' });
  const calls = callsOf(events);
  assert.equal(calls.length, 1);
  const [call] = calls as [Call];
  assert.equal(call.name, 'get_weather');
  assert.match(call.id, /^call_[A-Za-z0-9]{24}$/);
  assert.ok(call.fragments > 3, 'arguments arrive in several token-sized chunks');
  const args: Record<string, unknown> = JSON.parse(call.args);
  assert.ok(ajv.validate(weather.parameters!, args), JSON.stringify(ajv.errors));
  assert.equal(args.location, 'Paris');
  assert.equal(finishOf(events), 'tool_calls');
  assert.equal(of(events, 'text-delta').length, 0);
  assertEndsWithUsageThenFinish(events);
  assert.equal(usageOf(events).outputTokens, encode('get_weather').length + encode(call.args).length);
});

test('a named tool choice calls that function, even when another matches better', async () => {
  const events = await chat({ messages: user("What's the weather in Paris?"), tools: [weather, booking], toolChoice: { name: 'book_flight' } });
  const [call] = callsOf(events) as [Call];
  assert.equal(call.name, 'book_flight');
  assert.ok(ajv.validate(booking.parameters!, JSON.parse(call.args)), JSON.stringify(ajv.errors));
});

test('auto calls a tool only when asked for; none never calls', async () => {
  assert.equal(callsOf(await chat({ messages: user('weather in Rome please'), tools: [weather], toolChoice: 'auto' })).length, 1);
  assert.equal(callsOf(await chat({ messages: user('weather in Rome please'), tools: [weather] })).length, 1, 'auto is the default');
  const chatty = await chat({ messages: user('Tell me a joke'), tools: [weather], toolChoice: 'auto' });
  assert.equal(callsOf(chatty).length, 0);
  assert.equal(finishOf(chatty), 'stop');
  assert.equal(callsOf(await chat({ messages: user('weather in Rome please'), tools: [weather], toolChoice: 'none' })).length, 0);
});

test('parallel tool calls: two matched tools get indexes 0 and 1', async () => {
  const messages = user('Check the weather in Paris and book a flight to Paris');
  const both = callsOf(await chat({ messages, tools: [weather, booking], parallelToolCalls: true }));
  assert.deepEqual(both.map((c) => c.name).sort(), ['book_flight', 'get_weather']);
  const one = callsOf(await chat({ messages, tools: [weather, booking], parallelToolCalls: false }));
  assert.equal(one.length, 1);
});

test('after a tool result, answers in text using it', async () => {
  const events = await chat({
    messages: [
      ...user("What's the weather in Paris?"),
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":21,"sky":"clear"}' },
    ],
    tools: [weather],
  });
  assert.equal(textOf(events), 'The tool returned: {"temperature":21,"sky":"clear"}');
  assert.equal(finishOf(events), 'stop');
});

const codeInterpreter: FunctionTool = {
  name: 'code_interpreter',
  description: 'Runs Python code in a sandbox and returns what it printed.',
  parameters: { type: 'object', properties: { code: { type: 'string', description: 'The Python program to run.' } }, required: ['code'] },
};

test('code_interpreter: a question about a CSV is a call, its program really runs, and the answer gives what it printed', async () => {
  const question = user('What is the total amount in sales.csv?');
  const first = await chat({ messages: question, tools: [codeInterpreter] });
  const [call] = callsOf(first) as [Call];
  assert.equal(call.name, 'code_interpreter');
  assert.equal(finishOf(first), 'tool_calls');

  // Run as the sandbox does, in a directory standing in for /mnt/data.
  const dir = mkdtempSync(path.join(tmpdir(), 'offline-engine-'));
  let stdout: string;
  try {
    writeFileSync(path.join(dir, 'sales.csv'), 'region,amount\nnorth,10\nsouth,20\nwest,30\n');
    const { code } = JSON.parse(call.args) as { code: string };
    stdout = execFileSync('python3', ['-I', '-S', '-'], { input: code.replace(`DATA = ${pyString(DATA_DIR)}`, `DATA = ${pyString(dir)}`), cwd: dir, encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const result = JSON.stringify({ status: 'completed', exit_code: 0, timed_out: false, stdout, stderr: '', files: [] });

  const second = await chat({
    messages: [...question, { role: 'assistant', content: null, tool_calls: [{ id: call.id, name: call.name, arguments: call.args }] }, { role: 'tool', tool_call_id: call.id, content: result }],
    tools: [codeInterpreter],
  });
  assert.equal(callsOf(second).length, 0, 'auto answers after the result');
  assert.equal(textOf(second), 'The total amount is 60.\n\nThe code printed:\n```\ntotal amount: 60\nfile: sales.csv\nrows: 3\ncolumns: region, amount\namount: sum=60 mean=20 min=10 max=30\n```');
  assert.equal(finishOf(second), 'stop');
});

test('maxTokens can cut a tool call short (finish length)', async () => {
  const events = await chat({ messages: user('weather in Paris'), tools: [weather], toolChoice: 'required', maxTokens: 6 });
  assert.equal(finishOf(events), 'length');
  assert.equal(usageOf(events).outputTokens, 6);
});

// --- Response formats -----------------------------------------------------------

const SCHEMAS: Record<string, Record<string, unknown>> = {
  answer: { type: 'object', properties: { answer: { type: 'number' }, explanation: { type: 'string' } }, required: ['answer', 'explanation'], additionalProperties: false },
  nested: {
    $defs: { step: { type: 'object', properties: { explanation: { type: 'string' }, output: { type: 'string' } }, required: ['explanation', 'output'], additionalProperties: false } },
    type: 'object',
    properties: { steps: { type: 'array', items: { $ref: '#/$defs/step' }, minItems: 2 }, final_answer: { type: 'string' }, mood: { enum: ['happy', 'sad'] } },
    required: ['steps', 'final_answer', 'mood'],
    additionalProperties: false,
  },
  list: { type: 'array', items: { type: 'integer', minimum: 3 }, minItems: 2, uniqueItems: true },
};

test('json_schema output validates against the schema', async () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const events = await chat({ messages: user('What is 12 * 7?'), responseFormat: { type: 'json_schema', name, schema, strict: true } });
    const value = JSON.parse(textOf(events));
    assert.ok(ajv.validate(schema, value), `${name}: ${textOf(events)} ${JSON.stringify(ajv.errors)}`);
  }
  const events = await chat({ messages: user('What is 12 * 7?'), responseFormat: { type: 'json_schema', name: 'answer', schema: SCHEMAS.answer! } });
  assert.equal(JSON.parse(textOf(events)).answer, 84, 'a numeric answer property gets the computed value');
});

// Hostile schemas (the contract refuses them with a 400; the engine must still hold if
// one slips through, e.g. from another caller): output bounded by maxTokens, finish length.
const HOSTILE: Record<string, Record<string, unknown>> = {
  'minLength 1e9': { type: 'string', minLength: 1e9 },
  'minItems 1e9': { type: 'array', minItems: 1e9 },
  'pattern a{1000000} with minLength': { type: 'string', pattern: 'a{1000000}', minLength: 1e7 },
  'ReDoS pattern with minLength': { type: 'string', pattern: '^(a+)+$', minLength: 1e6 },
};

test('hostile json_schema formats and tool parameters end at maxTokens with finish length', async () => {
  for (const [name, schema] of Object.entries(HOSTILE)) {
    for (const maxTokens of [16, 1e9]) {
      const asFormat = await chat({ messages: user('hi'), responseFormat: { type: 'json_schema', name: 'x', schema }, maxTokens });
      assert.equal(finishOf(asFormat), 'length', name);
      assert.ok(usageOf(asFormat).outputTokens <= maxTokens, name);
      assert.ok(textOf(asFormat).length <= 262_144, name);
      const asTool = await chat({ messages: user('hi'), tools: [{ name: 'f', parameters: schema }], toolChoice: 'required', maxTokens });
      assert.equal(finishOf(asTool), 'length', name);
      assert.ok(usageOf(asTool).outputTokens <= maxTokens, name);
    }
  }
});

test('a generation cut at its character budget ends with finish length even below maxTokens', async () => {
  // Runs of spaces take over 16 characters a token, so the 64 x 16 characters run out
  // before the 64 tokens do: the output is a JSON prefix and says so.
  const schema = { type: 'array', minItems: 1e9, items: { const: ' '.repeat(200) } };
  const events = await chat({ messages: user('hi'), responseFormat: { type: 'json_schema', name: 'x', schema }, maxTokens: 64 });
  assert.equal(finishOf(events), 'length');
  assert.ok(usageOf(events).outputTokens < 64);
  assert.ok(textOf(events).startsWith('["  '));
});

test('anyOf: [] gives null instead of failing the stream', async () => {
  const events = await chat({ messages: user('hi'), responseFormat: { type: 'json_schema', name: 'x', schema: { anyOf: [] } } });
  assert.equal(textOf(events), 'null');
  assert.equal(finishOf(events), 'stop');
  const call = await chat({ messages: user('hi'), tools: [{ name: 'f', parameters: { anyOf: [] } }], toolChoice: 'required' });
  assert.equal(of(call, 'tool-input-delta').map((e) => e.delta).join(''), 'null');
});

test('a long output streams only maxTokens pieces', async () => {
  const events = await chat({ messages: user('hi'), responseFormat: { type: 'json_schema', name: 'x', schema: { type: 'array', minItems: 1e9 } }, maxTokens: 5 });
  assert.equal(of(events, 'text-delta').length, 5);
  assert.equal(usageOf(events).outputTokens, 5);
});

test('json_object output is a JSON object', async () => {
  const events = await chat({ messages: user('who are you'), responseFormat: { type: 'json_object' } });
  const value = JSON.parse(textOf(events));
  assert.equal(typeof value, 'object');
  assert.match(value.answer, /offline engine/);
});

// --- Logprobs -------------------------------------------------------------------

test('logprobs: one entry per token, chosen token most likely, sorted distinct alternatives summing to <= 1', async () => {
  for (const topLogprobs of [0, 1, 5, 20]) {
    const events = await chat({ messages: user('Say exactly: Hello 🎉 world, this is a test.'), logprobs: true, topLogprobs, temperature: 1.5 });
    let entries = 0;
    for (const e of of(events, 'text-delta')) {
      assert.ok(e.logprobs && e.logprobs.length > 0);
      assert.deepEqual(e.logprobs.flatMap((l) => l.bytes ?? []), [...Buffer.from(e.delta)], 'bytes are the token bytes');
      for (const lp of e.logprobs) {
        entries++;
        assert.ok(Number.isFinite(lp.logprob) && lp.logprob <= 0);
        assert.equal(lp.top_logprobs.length, topLogprobs);
        const tokens = lp.top_logprobs.map((x) => x.token);
        assert.equal(new Set(tokens).size, tokens.length, 'distinct tokens');
        for (let i = 1; i < lp.top_logprobs.length; i++) assert.ok(lp.top_logprobs[i - 1]!.logprob >= lp.top_logprobs[i]!.logprob, 'sorted');
        for (const alt of lp.top_logprobs) {
          assert.ok(Number.isFinite(alt.logprob) && alt.logprob <= lp.logprob);
          if (!alt.token.startsWith('bytes:')) assert.deepEqual(alt.bytes, [...Buffer.from(alt.token)]);
        }
        assert.ok(lp.top_logprobs.reduce((s, x) => s + Math.exp(x.logprob), 0) <= 1 + 1e-12);
      }
    }
    assert.equal(entries, usageOf(events).outputTokens);
  }
  const plain = await chat({ messages: user('hello') });
  assert.ok(of(plain, 'text-delta').every((e) => e.logprobs === undefined), 'no logprobs unless asked');
});

test('asking for logprobs does not change the text', async () => {
  const messages = user('Tell me about the river near my town.');
  assert.equal(textOf(await chat({ messages, seed: 5, logprobs: true, topLogprobs: 3 })), textOf(await chat({ messages, seed: 5 })));
});

// --- Reasoning ------------------------------------------------------------------

test('agent-think streams reasoning before the answer and counts it', async () => {
  const events = await chat({ model: 'agent-think', messages: user('What is 12 * 7?') });
  const firstOther = events.findIndex((e) => !e.type.startsWith('reasoning'));
  const reasoning = of(events, 'reasoning-delta');
  assert.ok(reasoning.length > 5);
  assert.ok(events.slice(0, firstOther).every((e) => e.type.startsWith('reasoning')), 'reasoning comes first');
  assert.ok(events.slice(firstOther).every((e) => !e.type.startsWith('reasoning')));
  const thought = reasoning.map((e) => e.delta).join('');
  assert.match(thought, /12 \* 7/);
  const usage = usageOf(events);
  assert.equal(usage.reasoningTokens, encode(thought).length);
  assert.equal(usage.outputTokens, encode(thought).length + encode(textOf(events)).length);
  assert.match(textOf(events), /84/);
});

test('reasoning effort: none gives no reasoning, low < medium < high', async () => {
  const messages = user('What is 12 * 7?');
  const none = await chat({ model: 'agent-think', messages, reasoningEffort: 'none' });
  assert.equal(of(none, 'reasoning-delta').length, 0);
  assert.equal(usageOf(none).reasoningTokens, 0);
  const sizes = [];
  for (const reasoningEffort of ['low', 'medium', 'high'] as const) {
    sizes.push(usageOf(await chat({ model: 'agent-think', messages, reasoningEffort })).reasoningTokens!);
  }
  assert.ok(sizes[0]! < sizes[1]! && sizes[1]! < sizes[2]!, sizes.join(' < '));
  assert.equal(of(await chat({ model: 'agent', messages, reasoningEffort: 'high' }), 'reasoning-delta').length, 0, 'agent does not reason');
});

test('agent-think reasons before tool calls too', async () => {
  const events = await chat({ model: 'agent-think', messages: user('weather in Paris'), tools: [weather], toolChoice: 'required' });
  const firstCall = events.findIndex((e) => e.type === 'tool-input-start');
  assert.ok(firstCall > 0 && events.slice(0, firstCall).every((e) => e.type.startsWith('reasoning')));
});

// --- Text completions -----------------------------------------------------------

test('complete(): continues the prompt with usage, stop, maxTokens and seeds', async () => {
  const events = await complete({ prompt: '2 + 3 =' });
  assert.equal(textOf(events), ' 5');
  assertEndsWithUsageThenFinish(events);
  assert.deepEqual(usageOf(events), { inputTokens: encode('2 + 3 =').length, outputTokens: encode(' 5').length, reasoningTokens: 0 });

  const prompt = 'The river runs past the old mill and the river bends near the town where the mill stands';
  const a = await complete({ prompt, seed: 1 });
  assert.deepEqual(await complete({ prompt, seed: 1 }), a);
  const texts = new Set<string>();
  for (let seed = 0; seed < 6; seed++) texts.add(textOf(await complete({ prompt, seed })));
  assert.ok(texts.size > 1);

  const stopped = await complete({ prompt, seed: 1, stop: [' the'] });
  assert.ok(!textOf(stopped).includes(' the'));
  const capped = await complete({ prompt, maxTokens: 4 });
  assert.equal(usageOf(capped).outputTokens, 4);
  assert.equal(finishOf(capped), 'length');
});
