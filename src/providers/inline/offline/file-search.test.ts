// The offline engine with the service's file_search tool: it searches with the user's
// words, then quotes the best passages of the results (as the tool writes them) with
// their [n] markers; deterministic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resultsText } from '../../../tools/file-search/file-search-tool.ts';
import type { ChatMessage, FunctionTool, StreamPart } from '../../types.ts';
import { fileSearchAnswer } from './answer.ts';
import { readPassages } from './file-search.ts';
import { createOfflineEngine } from './index.ts';
import { mulberry32 } from './rng.ts';
import { planToolCalls } from './tool-selection.ts';

const fileSearch: FunctionTool = {
  name: 'file_search',
  description: "Searches the user's uploaded files for passages relevant to a query.",
  parameters: { type: 'object', properties: { query: { type: 'string' }, queries: { type: 'array', items: { type: 'string' } } }, required: ['query'] },
};
const weather: FunctionTool = { name: 'get_weather', description: 'Current weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

const passage = (file_id: string, filename: string, text: string, score = 0.8) => ({ file_id, filename, score, attributes: null, text });
const RESULTS = resultsText(
  ['refund policy'],
  [
    passage('f1', 'policy.md', 'Refunds are accepted within 30 days. Items must be unused. Contact support by email.', 0.91),
    passage('f2', 'faq.txt', 'Shipping takes 5 days.\n\nA refund covers shipping too.', 0.62),
    passage('f3', 'notes.md', '"Quoted" words stay readable.', 0.5),
    passage('f4', 'extra.md', 'The fourth passage is never quoted.', 0.4),
  ],
  4,
);

const plan = (message: string, tools: FunctionTool[], toolChoice: 'auto' | 'required' | 'none' | { name: string } = 'auto', afterToolResult = false) =>
  planToolCalls({ tools, toolChoice, parallelToolCalls: true, message, afterToolResult }, mulberry32(1)).map((c) => [c.name, c.arguments]);

test('readPassages reads back what the tool writes: numbers, file names, texts (blank lines inside a passage kept)', () => {
  assert.deepEqual(
    readPassages(RESULTS).map((p) => [p.n, p.filename, p.text]),
    [
      [4, 'policy.md', 'Refunds are accepted within 30 days. Items must be unused. Contact support by email.'],
      [5, 'faq.txt', 'Shipping takes 5 days.\n\nA refund covers shipping too.'],
      [6, 'notes.md', '"Quoted" words stay readable.'],
      [7, 'extra.md', 'The fourth passage is never quoted.'],
    ],
  );
  assert.deepEqual(readPassages(resultsText(['x'], [], 1)), []);
});

test('the question is searched with the user’s words, unless it is a greeting, another tool fits, or the choice says otherwise', () => {
  assert.deepEqual(plan('  What is the\nrefund policy? ', [fileSearch]), [['file_search', '{"query":"What is the refund policy?"}']]);
  assert.deepEqual(plan('Hello!', [fileSearch]), []);
  assert.deepEqual(plan('What is the weather in Paris?', [fileSearch, weather]).map(([n]) => n), ['get_weather']);
  assert.deepEqual(plan('What is the refund policy?', [weather, fileSearch]), [['file_search', '{"query":"What is the refund policy?"}']]);
  assert.deepEqual(plan('What is the weather?', [fileSearch, weather], { name: 'file_search' }), [['file_search', '{"query":"What is the weather?"}']]);
  assert.deepEqual(plan('What is the refund policy?', [fileSearch], 'none'), []);
  assert.deepEqual(plan('What is the refund policy?', [fileSearch], 'auto', true), [], 'after the results, it answers');
  assert.deepEqual(plan('What is the refund policy?', [{ ...fileSearch, parameters: { type: 'object', properties: {} } }]), [], 'a file_search without query is just a function');
});

test('the answer quotes the best passages (at least half the best score), a sentence or two each without headings, each with its marker; nothing found or a failure is said plainly', () => {
  assert.equal(
    fileSearchAnswer([RESULTS], 'refund policy?', 'medium'),
    [
      'From policy.md: "Refunds are accepted within 30 days. Items must be unused." [4]',
      'From faq.txt: "Shipping takes 5 days. A refund covers shipping too." [5]',
      'From notes.md: "\'Quoted\' words stay readable." [6]',
    ].join('\n'),
  );
  assert.equal(fileSearchAnswer([RESULTS], 'refund policy?', 'low'), 'From policy.md: "Refunds are accepted within 30 days." [4]');
  const weak = resultsText(['tomatoes'], [passage('g', 'garden.md', '# Growing tomatoes\n\nTomatoes need sun. Water them often.', 0.6), passage('h', 'harbour.txt', 'Ships enter at high water.', 0.1)], 1);
  assert.equal(fileSearchAnswer([weak], 'tomatoes?', 'medium'), 'From garden.md: "Tomatoes need sun. Water them often." [1]', 'headings left out; a passage under half the best score not quoted');
  assert.equal(fileSearchAnswer([resultsText(['refunds'], [], 1)], 'What about  refunds?', 'medium'), 'Nothing was found in the files for "What about refunds?".');
  assert.equal(fileSearchAnswer(['The file search failed: nothing could be searched.'], 'x', 'medium'), 'The file search failed, so I could not look in the files.');
});

test('through the engine: a file_search call, then, with its result, the cited answer; the same every time', async () => {
  const engine = createOfflineEngine();
  const run = async (messages: ChatMessage[]) => {
    const parts: StreamPart[] = [];
    for await (const p of engine.chat({ model: 'agent', messages, tools: [fileSearch], toolChoice: 'auto' }, new AbortController().signal)) parts.push(p);
    return parts;
  };
  const question: ChatMessage = { role: 'user', content: 'What is the refund policy?' };
  const first = await run([question]);
  const start = first.find((p) => p.type === 'tool-input-start');
  assert.equal(start?.type === 'tool-input-start' && start.toolName, 'file_search');
  const args = first.flatMap((p) => (p.type === 'tool-input-delta' ? [p.delta] : [])).join('');
  assert.deepEqual(JSON.parse(args), { query: 'What is the refund policy?' });

  const id = start?.type === 'tool-input-start' ? start.id : '';
  const answer = async () =>
    (await run([question, { role: 'assistant', content: null, tool_calls: [{ id, name: 'file_search', arguments: args }] }, { role: 'tool', tool_call_id: id, content: RESULTS }]))
      .flatMap((p) => (p.type === 'text-delta' ? [p.delta] : []))
      .join('');
  const text = await answer();
  assert.match(text, /^From policy\.md: ".*" \[4\]$/m);
  assert.equal(text.split('\n').length, 3);
  assert.equal(await answer(), text);
});
