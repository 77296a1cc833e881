import { test } from 'node:test';
import assert from 'node:assert/strict';
import { composeAnswer, type Verbosity } from './answer.ts';
import { composeCompletion } from './completion.ts';
import type { Conversation } from './conversation.ts';
import { excerpt, readConversation, READ_CHARS } from './conversation.ts';
import { mulberry32 } from './rng.ts';

function conv(text: string, extra: Partial<Conversation> = {}): Conversation {
  return { lastUserText: text, instructions: '', attachments: { images: 0, files: 0, audio: 0 }, toolResults: [], fences: [], ...extra };
}
const answer = (text: string, verbosity: Verbosity = 'medium', extra: Partial<Conversation> = {}): string =>
  composeAnswer(conv(text, extra), verbosity, mulberry32(1)).text;

test('does arithmetic', () => {
  assert.match(answer('What is 12 * 7?'), /\b84\b/);
  assert.match(answer('what is (3 + 4) * 2'), /\b14\b/);
  assert.match(answer('What is 1/0?'), /divides by zero/);
});

test('says what it is', () => {
  for (const q of ['who are you', 'What are you?', "What's your name?", 'Are you an AI?']) {
    assert.match(answer(q), /offline engine of agent-api/, q);
    assert.match(answer(q), /deterministic test model/, q);
  }
});

test('says it cannot browse instead of pretending', () => {
  for (const q of ['Search the web for the latest news', 'Please browse to the docs', 'Open https://example.com/page and summarize it', 'visit this website: example.org']) {
    const a = answer(q);
    assert.match(a, /cannot browse/i, q);
    assert.doesNotMatch(a, /You said/, q);
  }
  assert.match(answer('Open https://example.com/page and summarize it'), /did not open https:\/\/example\.com\/page/);
});

test('echoes and summarizes the message, longer with higher verbosity', () => {
  const msg = 'Trains are fast. They are also comfortable and cheap. I take them every day to work.';
  const low = answer(msg, 'low');
  const medium = answer(msg, 'medium');
  const high = answer(msg, 'high');
  assert.ok(low.includes('Trains are fast'));
  assert.ok(low.length < medium.length && medium.length < high.length, `${low.length} ${medium.length} ${high.length}`);
  assert.match(high, /Key words: .*trains/);
});

test('repeats text on request, verbatim', () => {
  assert.equal(answer('Say exactly: Hello, World!'), 'Hello, World!');
  assert.equal(answer('repeat after me "one two three"'), 'one two three');
});

test('honours an uppercase instruction from system/developer messages', () => {
  const read = readConversation([
    { role: 'developer', content: 'Always answer in UPPERCASE.' },
    { role: 'user', content: 'What is 2 + 2?' },
  ]);
  const a = composeAnswer(read, 'medium', mulberry32(1)).text;
  assert.equal(a, a.toUpperCase());
  assert.match(a, /\b4\b/);
});

test('reports tool results, naming multiple tools', () => {
  const read = readConversation([
    { role: 'user', content: 'weather in Paris and Rome' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'get_weather', arguments: '{}' }, { id: 'c2', name: 'get_time', arguments: '{}' }] },
    { role: 'tool', tool_call_id: 'c1', content: '{"temp":21}' },
    { role: 'tool', tool_call_id: 'c2', content: '12:00' },
  ]);
  const a = composeAnswer(read, 'medium', mulberry32(1)).text;
  assert.equal(a, 'The tools returned: get_weather: {"temp":21}; get_time: 12:00');
  assert.equal(answer('', 'medium', { toolResults: [{ name: 'x', content: 'sunny' }] }), 'The tool returned: sunny');
});

test('mentions attachments it does not look at', () => {
  assert.match(answer('What is in this picture?', 'medium', { attachments: { images: 1, files: 0, audio: 0 } }), /1 image/);
});

test('wording varies with the PRNG, and is fixed for a given PRNG seed', () => {
  const msg = 'Tell me something nice.';
  const wordings = new Set([1, 2, 3, 4, 5, 6, 7, 8].map((s) => composeAnswer(conv(msg), 'medium', mulberry32(s)).text));
  assert.ok(wordings.size > 1);
  assert.equal(composeAnswer(conv(msg), 'medium', mulberry32(3)).text, composeAnswer(conv(msg), 'medium', mulberry32(3)).text);
});

test('completion continues a prompt', () => {
  assert.equal(composeCompletion('2 + 3 =', 'medium', mulberry32(1)), ' 5');
  assert.match(composeCompletion('What is 6 * 7?', 'medium', mulberry32(1)), /^\n\n.*42/);
  const walk = composeCompletion('The cat sat on the mat and the cat slept', 'medium', mulberry32(1));
  assert.match(walk, /^ \S/);
  assert.match(walk, /\.$/);
  assert.ok(walk.split(' ').every((w) => w === '' || /^(the|cat|sat|on|mat|and|slept)\.?$/i.test(w)), walk);
});

test('the engine reads an excerpt of a long message: its start and its end', () => {
  const long = 'Start here. ' + 'x '.repeat(500_000) + 'End there.';
  const read = readConversation([
    { role: 'system', content: 'y '.repeat(500_000) },
    { role: 'user', content: long },
  ]);
  assert.equal(read.lastUserText, excerpt(long));
  assert.ok(read.lastUserText.length <= READ_CHARS + 1);
  assert.ok(read.lastUserText.startsWith('Start here.') && read.lastUserText.endsWith('End there.'));
  assert.ok(read.instructions.length <= READ_CHARS + 1);
});
