// Answers after code_interpreter and shell runs, from what the runs really printed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatMessage } from '../../types.ts';
import { composeAnswer } from './answer.ts';
import { readConversation, SANDBOX_READ_CHARS } from './conversation.ts';
import { dataProgram } from './data-program.ts';
import { mulberry32 } from './rng.ts';
import { codeBlock, codeInterpreterAnswer, figureSentence, shellAnswer } from './sandbox-answer.ts';

const run = (fields: Record<string, unknown>) => JSON.stringify({ status: 'completed', exit_code: 0, timed_out: false, stdout: '', stderr: '', files: [], ...fields });
const code = (program: string) => JSON.stringify({ code: program });
const ci = (content: string, program = 'print("hi")', max = 1000) => codeInterpreterAnswer({ name: 'code_interpreter', content, arguments: code(program) }, max);

/** The answer to a conversation that ends with one tool result for `name` called with `args`. */
function answerAfter(name: string, args: string, content: string): string {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name, arguments: args }] },
    { role: 'tool', tool_call_id: 'c1', content },
  ];
  return composeAnswer(readConversation(messages), 'medium', mulberry32(1)).text;
}

test('after the summary program: the figure it printed first leads, then its output', () => {
  const stdout = 'total amount: 60\nfile: sales.csv\nrows: 3\ncolumns: region, amount\namount: sum=60 mean=20 min=10 max=30\n';
  const program = dataProgram({ file: 'sales.csv', figure: { aggregate: 'sum', column: 'amount' } });
  assert.equal(answerAfter('code_interpreter', code(program), run({ stdout })), `The total amount is 60.\n\nThe code printed:\n\`\`\`\n${stdout.trimEnd()}\n\`\`\``);
  assert.equal(figureSentence('row count: 3'), 'The row count is 3.');
  assert.equal(figureSentence('average unit price: 2.5'), 'The average unit price is 2.5.');
  assert.equal(figureSentence('no column matches "x"'), undefined);
  // The same line printed by the user's own code is just output.
  assert.equal(ci(run({ stdout: 'total amount: 60\n' })), 'The code printed:\n```\ntotal amount: 60\n```');
});

test('after fenced code: what it printed, or that it printed nothing', () => {
  assert.equal(ci(run({ stdout: 'hello\nworld\n' })), 'The code printed:\n```\nhello\nworld\n```');
  assert.equal(ci(run({})), 'The code ran and printed nothing.');
  assert.equal(ci(run({ stdout: 'a\n```\nb' })), 'The code printed:\n````\na\n```\nb\n````', 'output cannot close the block');
});

test('after arithmetic: the expression and the value Python printed', () => {
  assert.equal(ci(run({ stdout: '84\n' }), 'print(12 * 7)'), '12 * 7 = 84.');
  assert.equal(ci(run({ stdout: '3.5\n' }), "print(format(7 / 2, '.12g'))"), '7 / 2 = 3.5.');
  assert.match(ci(run({ exit_code: 1, stderr: 'ZeroDivisionError: division by zero\n' }), 'print(1 / 0)'), /exited with code 1/);
});

test('a failing run: its exit code and the end of its error output, bounded', () => {
  const stderr = 'Traceback (most recent call last):\n' + '  frame\n'.repeat(500) + 'ValueError: bad\n';
  const text = ci(run({ exit_code: 3, stdout: 'partial\n', stderr }), 'x', 200);
  assert.match(text, /^The code printed:\n```\npartial\n```\n\nIt exited with code 3\. Its error output ends:\n```\n…/);
  assert.match(text, /ValueError: bad\n```$/);
  assert.ok(text.length < 400, String(text.length));
  assert.equal(ci(run({ exit_code: 2 })), 'The code ran and printed nothing.\n\nIt exited with code 2.');
});

test('a run stopped at the time limit, and one that could not run', () => {
  assert.equal(ci(run({ status: 'timed_out', exit_code: null, timed_out: true })), 'The code was stopped at the time limit.');
  assert.equal(ci(run({ status: 'timed_out', exit_code: null, timed_out: true, stdout: 'tick\n' })), 'The code was stopped at the time limit.\n\nBefore that it printed:\n```\ntick\n```');
  assert.equal(ci(run({ status: 'failed', exit_code: null, stderr: 'the sandbox is not available' })), 'The code could not run: the sandbox is not available');
  assert.equal(ci('not json'), 'The tool returned: not json');
});

test('files the run wrote are linked with their sandbox: links', () => {
  const files = [
    { path: '/mnt/data/out.csv', link: 'sandbox:/mnt/data/out.csv', bytes: 42 },
    { path: '/mnt/data/my plot (1).png', link: 'sandbox:/mnt/data/my plot (1).png', bytes: 9 },
    { path: '/mnt/data/[x]*.txt', link: 'sandbox:/mnt/data/[x]*.txt', bytes: 1 },
  ];
  assert.equal(
    ci(run({ stdout: 'done\n', files })),
    'The code printed:\n```\ndone\n```\n\nFiles it wrote: [out.csv](sandbox:/mnt/data/out.csv), [my plot (1).png](<sandbox:/mnt/data/my plot (1).png>), [\\[x\\]\\*.txt](sandbox:/mnt/data/[x]*.txt).',
  );
  const many = Array.from({ length: 13 }, (_, i) => ({ path: `/mnt/data/f${i}`, link: `sandbox:/mnt/data/f${i}`, bytes: 1 }));
  assert.match(ci(run({ files: many })), /\[f9\]\(sandbox:\/mnt\/data\/f9\) and 3 more\.$/);
});

test('a long output is clipped, and a result longer than the read excerpt is still parsed', () => {
  const stdout = 'x'.repeat(100_000);
  const text = answerAfter('code_interpreter', code('print("x" * 100000)'), run({ stdout }));
  assert.ok(text.startsWith('The code printed:\n```\nxxx') && text.length < 1100, String(text.length));
  assert.ok(run({ stdout }).length < SANDBOX_READ_CHARS);
});

const entry = (stdout: string, outcome: Record<string, unknown>, stderr = '') => ({ stdout, stderr, outcome });
const shell = (entries: unknown[], commands: string[]) => shellAnswer({ name: 'shell', content: JSON.stringify(entries), arguments: JSON.stringify({ commands }) }, 1000);

test('after one shell command: its output, its exit code when not 0, or that it timed out', () => {
  assert.equal(shell([entry('hi\n', { type: 'exit', exit_code: 0 })], ['echo hi']), 'The command printed: hi');
  assert.equal(shell([entry('', { type: 'exit', exit_code: 0 })], ['true']), 'The command ran and printed nothing.');
  assert.equal(shell([entry('', { type: 'exit', exit_code: 3 }, 'oops\n')], ['x']), 'The command exited with code 3 and printed: oops');
  assert.equal(shell([entry('out\n', { type: 'exit', exit_code: 1 }, 'err\n')], ['x']), 'The command exited with code 1 and printed: out\nerr');
  assert.equal(shell([entry('', { type: 'timeout' })], ['sleep 9']), 'The command timed out and printed nothing.');
  assert.equal(shell([entry('tick\n', { type: 'timeout' })], ['x']), 'The command timed out after printing: tick');
});

test('after several shell commands: each one, in order, with what it printed and how it ended', () => {
  const text = shell(
    [entry('a\n', { type: 'exit', exit_code: 0 }), entry('', { type: 'exit', exit_code: 3 }), entry('', { type: 'timeout' })],
    ['echo a', 'exit 3', 'sleep `echo 9`'],
  );
  assert.equal(text, 'The commands ran in order:\n1. `echo a` printed: a\n2. `exit 3` exited with code 3 and printed nothing.\n3. `` sleep `echo 9` `` timed out and printed nothing.');
  const many = Array.from({ length: 25 }, (_, i) => entry(`${i}\n`, { type: 'exit', exit_code: 0 }));
  assert.match(shell(many, []), /^The commands ran in order:\n1\. Command 1 printed: 0\n[\s\S]*\n20\. Command 20 printed: 19\n\(5 more commands are not shown\.\)$/);
});

test('the shell answer through the conversation, and Codex exec_command text with its exit code', () => {
  const entries = JSON.stringify([entry('', { type: 'exit', exit_code: 2 }, 'ls: cannot access x\n')]);
  assert.equal(answerAfter('shell', '{"commands":["ls x"]}', entries), 'The command exited with code 2 and printed: ls: cannot access x');
  const codex = 'Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOriginal token count: 2\nOutput:\nnope\n';
  assert.equal(answerAfter('exec_command', '{"cmd":"false"}', codex), 'The command exited with code 1 and printed: nope');
});

test('code blocks and the two kinds of run answered together', () => {
  assert.equal(codeBlock('a'), '```\na\n```');
  const messages: ChatMessage[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'a', name: 'code_interpreter', arguments: code('print(1 + 1)') }, { id: 'b', name: 'shell', arguments: '{"commands":["echo 1"]}' }] },
    { role: 'tool', tool_call_id: 'a', content: run({ stdout: '2\n' }) },
    { role: 'tool', tool_call_id: 'b', content: JSON.stringify([entry('1\n', { type: 'exit', exit_code: 0 })]) },
  ];
  assert.equal(composeAnswer(readConversation(messages), 'medium', mulberry32(1)).text, '1 + 1 = 2.\n\nThe command printed: 1');
});

test('output with long runs of whitespace is read in one pass (a quadratic trim would not end within the test timeout)', () => {
  const spaced = 'a' + ' '.repeat(300_000) + 'b';
  assert.match(ci(run({ exit_code: 1, stdout: spaced, stderr: spaced })), /^The code printed:\n```\na {999}…\n```\n\nIt exited with code 1\./);
  assert.match(shell([entry(spaced, { type: 'exit', exit_code: 1 }, spaced)], ['x']), /^The command exited with code 1 and printed: a {999}…$/);
});
