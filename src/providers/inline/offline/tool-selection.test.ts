import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FunctionTool, ToolChoice } from '../../types.ts';
import { chooseTools, planToolCalls, scoreTool, stem } from './tool-selection.ts';
import { mulberry32 } from './rng.ts';

const weather: FunctionTool = {
  name: 'get_weather',
  description: 'Get the current weather for a city',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
};
const files: FunctionTool = { name: 'listFiles', description: 'List the files in a directory', parameters: { type: 'object', properties: { path: { type: 'string' } } } };
const calculator: FunctionTool = { name: 'calculator', description: 'Evaluate an arithmetic expression', parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] } };
const email: FunctionTool = { name: 'send_email', description: 'Send an email message to a recipient' };
const TOOLS = [weather, files, calculator, email];

const pick = (message: string, toolChoice: ToolChoice, parallelToolCalls = false, afterToolResult = false): string[] =>
  chooseTools({ tools: TOOLS, toolChoice, parallelToolCalls, message, afterToolResult }).map((t) => t.name);

test('name words split on _ and camelCase match the message', () => {
  assert.ok(scoreTool(weather, "What's the weather in Paris?") >= 2);
  assert.ok(scoreTool(files, 'show me the files in /tmp') >= 2);
  assert.equal(scoreTool(weather, 'Hello there'), 0);
  assert.equal(stem('files'), 'file');
  assert.equal(stem('searching'), 'search');
});

test('auto calls a tool only when the message asks for what it offers', () => {
  assert.deepEqual(pick("What's the weather in Paris?", 'auto'), ['get_weather']);
  assert.deepEqual(pick('Please send an email to Bob', 'auto'), ['send_email']);
  assert.deepEqual(pick('What is 12 * 7?', 'auto'), ['calculator']); // arithmetic fits a math tool
  assert.deepEqual(pick('Hello, how are you?', 'auto'), []);
  assert.deepEqual(pick("What's the weather in Paris?", 'auto', false, true), [], 'after a tool result, auto answers');
});

test('none never calls; a named choice calls that tool; required always calls one', () => {
  assert.deepEqual(pick("What's the weather in Paris?", 'none'), []);
  assert.deepEqual(pick('Hello', { name: 'send_email' }), ['send_email']);
  assert.deepEqual(pick('Hello', 'required'), ['get_weather'], 'no match: the first tool');
  assert.deepEqual(pick('list the files please', 'required'), ['listFiles'], 'best match, not the first');
});

test('parallel calls: two matching tools, only when allowed', () => {
  const msg = 'Check the weather in Paris and email the result to Bob';
  assert.deepEqual(pick(msg, 'auto', true), ['get_weather', 'send_email']);
  assert.deepEqual(pick(msg, 'auto', false), ['get_weather']);
});

test('planned calls have deterministic random-looking ids and schema-shaped arguments', () => {
  const input = { tools: TOOLS, toolChoice: 'auto' as const, parallelToolCalls: true, message: 'Check the weather in Paris and email Bob', afterToolResult: false };
  const a = planToolCalls(input, mulberry32(7));
  const b = planToolCalls(input, mulberry32(7));
  assert.deepEqual(a, b);
  assert.equal(a.length, 2);
  assert.match(a[0]!.id, /^call_[A-Za-z0-9]{24}$/);
  assert.notEqual(a[0]!.id, a[1]!.id);
  assert.deepEqual(JSON.parse(a[0]!.arguments), { location: 'Paris' });
  assert.equal(a[1]!.arguments, '{}', 'a tool without parameters gets {}');
});

// --- The service's code_interpreter and the shell, driven by the message ---------

const interpreter: FunctionTool = {
  name: 'code_interpreter',
  description: 'Runs Python code in a sandbox and returns what it printed.',
  parameters: { type: 'object', properties: { code: { type: 'string', description: 'The Python program to run.' } }, required: ['code'] },
};
const shell: FunctionTool = {
  name: 'shell',
  description: "Runs shell commands on the user's machine and returns their output.",
  parameters: { type: 'object', properties: { commands: { type: 'array', items: { type: 'string' } }, timeout_ms: { type: 'integer' }, max_output_length: { type: 'integer' } }, required: ['commands'] },
};
const fileSearch: FunctionTool = { name: 'file_search', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } };

const plan = (message: string, tools: FunctionTool[], toolChoice: ToolChoice = 'auto', extra: { parallelToolCalls?: boolean; afterToolResult?: boolean } = {}) =>
  planToolCalls({ tools, toolChoice, parallelToolCalls: extra.parallelToolCalls ?? false, message, afterToolResult: extra.afterToolResult ?? false }, mulberry32(1)).map((c) => ({
    name: c.name,
    args: JSON.parse(c.arguments) as Record<string, unknown>,
  }));

test('fenced python goes to code_interpreter byte for byte, before every other intent', () => {
  const code = 'def f(x):\n    return x * 2  \n\nprint(f(21), "it\'s", \'"q"\')\t';
  const message = `Run \`ls\`, what is 2 + 2, the weather in Paris, create a file a.txt containing "x"?\n\`\`\`python\n${code}\n\`\`\``;
  const patch: FunctionTool = { name: 'apply_patch', parameters: { type: 'object', properties: { type: { type: 'string' }, path: { type: 'string' }, diff: { type: 'string' } } } };
  for (const tools of [[interpreter], [shell, patch, weather, calculator, fileSearch, interpreter]]) {
    assert.deepEqual(plan(message, tools), [{ name: 'code_interpreter', args: { code } }]);
  }
  assert.deepEqual(plan(message, [shell, interpreter], { name: 'shell' }), [{ name: 'shell', args: { commands: ['ls'] } }], 'a named choice still decides');
});

test('python and shell blocks: both calls in the order written when parallel calls are allowed, else the first', () => {
  const message = '```bash\necho "$HOME"\n```\n```py\nprint(1)\n```\n```sh\nexit 3\n```';
  assert.deepEqual(plan(message, [interpreter, shell], 'auto', { parallelToolCalls: true }), [
    { name: 'shell', args: { commands: ['echo "$HOME"', 'exit 3'] } },
    { name: 'code_interpreter', args: { code: 'print(1)' } },
  ]);
  assert.deepEqual(plan(message, [interpreter, shell]), [{ name: 'shell', args: { commands: ['echo "$HOME"', 'exit 3'] } }]);
});

test('code_interpreter for arithmetic and file questions, unless a tool of the caller fits better', () => {
  assert.deepEqual(plan('What is 12 * 7?', [interpreter, weather]), [{ name: 'code_interpreter', args: { code: 'print(12 * 7)' } }]);
  assert.deepEqual(plan('What is 12 * 7?', [interpreter, calculator]).map((c) => c.name), ['calculator']);
  const [data] = plan('What is the total amount in sales.csv?', [fileSearch, interpreter]);
  assert.equal(data?.name, 'code_interpreter');
  assert.match(String(data?.args.code), /^# agent-api offline engine[^\n]*\nDATA = "\/mnt\/data"\nNAME = "sales\.csv"\nWANT = \("sum", "amount"\)\n/);
  assert.deepEqual(plan('What does the uploaded file say about holidays?', [fileSearch, interpreter]).map((c) => c.name), ['file_search'], 'vague: the search answers');
});

test('code_interpreter and tool_choice: nothing asked calls nothing under auto, lists /mnt/data when a call is required', () => {
  assert.deepEqual(plan('Tell me a joke', [interpreter]), []);
  assert.deepEqual(plan('Please write some code for me', [interpreter, email]), [], 'never generated arguments, even when its name matches');
  for (const choice of ['required', { name: 'code_interpreter' }] as ToolChoice[]) {
    const [listing] = plan('Tell me a joke', [weather, interpreter], choice);
    assert.equal(listing?.name, 'code_interpreter');
    assert.match(String(listing?.args.code), /\nLIST = True\n/);
  }
  assert.deepEqual(plan("What's the weather in Paris?", [interpreter, weather], 'required').map((c) => c.name), ['get_weather']);
  assert.deepEqual(plan('```python\nprint(1)\n```', [interpreter], 'none'), []);
  assert.deepEqual(plan('```python\nprint(1)\n```', [interpreter], 'auto', { afterToolResult: true }), [], 'after its result, auto answers');
});
