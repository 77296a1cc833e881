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
