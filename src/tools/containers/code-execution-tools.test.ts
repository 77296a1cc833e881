// The text editor of the later code execution versions, its program run by python3 in a
// scratch directory standing in for a container's /mnt/data (the sandbox itself is
// code-execution.test.ts's, in api/messages): view (a range, a directory, a missing
// file), create (new, then an update), str_replace (its lines and place; a text found
// twice or not at all is refused and leaves the file alone); bash's empty command.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { RunResult } from '../../sandbox/types.ts';
import type { ContainersTable } from '../../store/schema.ts';
import { bashCodeExecutionTool, textEditorCodeExecutionTool, type BashRunData, type TextEditorData } from './code-execution-tools.ts';
import type { ContainerLease, ContainerRunner } from './container-tool.ts';

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'text-editor-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs the program here, in the scratch directory. */
const runner: ContainerRunner = {
  run: (_row, options) =>
    new Promise((resolve) => {
      const child = execFile(options.argv[0]!, options.argv.slice(1), { cwd: dir, timeout: 30_000 }, (err, stdout, stderr) => {
        const result: RunResult = { stdout, stderr, exitCode: err ? 1 : 0, signal: null, timedOut: false, outputTruncated: false, durationMs: 0 };
        resolve({ result, written: [] });
      });
      child.stdin!.end(options.stdin ?? '');
    }),
};
const lease: ContainerLease = { id: 'cntr_test', get: async () => ({ id: 'cntr_test' }) as ContainersTable };
const editor = textEditorCodeExecutionTool(runner, lease, 30_000);
const edit = async (args: Record<string, unknown>) => {
  const out = await editor.run(JSON.stringify(args), new AbortController().signal);
  assert.ok(typeof out !== 'string');
  return { text: out.text, result: (out.data as TextEditorData).result };
};

test('create, then create again: a new file, then an update', async () => {
  assert.deepEqual((await edit({ command: 'create', path: 'sub/a.txt', file_text: 'one\ntwo\nthree\nfour\n' })).result, { type: 'create', isFileUpdate: false });
  assert.equal(fs.readFileSync(path.join(dir, 'sub/a.txt'), 'utf8'), 'one\ntwo\nthree\nfour\n');
  const again = await edit({ command: 'create', path: 'sub/b.txt', file_text: 'x' });
  assert.deepEqual(again.result, { type: 'create', isFileUpdate: false });
  assert.deepEqual((await edit({ command: 'create', path: 'sub/b.txt', file_text: 'y' })).result, { type: 'create', isFileUpdate: true });
});

test('view: the whole file, a range of its lines, a directory; a missing file', async () => {
  const whole = await edit({ command: 'view', path: 'sub/a.txt' });
  assert.deepEqual(whole.result, { type: 'view', fileType: 'text', content: 'one\ntwo\nthree\nfour', numLines: 4, startLine: 1, totalLines: 4 });
  assert.equal(whole.text, 'one\ntwo\nthree\nfour', 'the model reads the content');
  assert.deepEqual((await edit({ command: 'view', path: 'sub/a.txt', view_range: [2, 3] })).result, { type: 'view', fileType: 'text', content: 'two\nthree', numLines: 2, startLine: 2, totalLines: 4 });
  assert.deepEqual((await edit({ command: 'view', path: 'sub/a.txt', view_range: [3, -1] })).result, { type: 'view', fileType: 'text', content: 'three\nfour', numLines: 2, startLine: 3, totalLines: 4 });
  const listing = (await edit({ command: 'view', path: 'sub' })).result;
  assert.equal(listing.type === 'view' && listing.content, 'sub/a.txt\nsub/b.txt');
  const missing = (await edit({ command: 'view', path: 'nope.txt' })).result;
  assert.equal(missing.type, 'error');
  assert.equal(missing.type === 'error' && missing.code, 'file_not_found');
});

test('str_replace: the lines replaced and where; a text found twice or not at all is refused and the file left alone', async () => {
  const done = await edit({ command: 'str_replace', path: 'sub/a.txt', old_str: 'two\nthree', new_str: 'TWO' });
  assert.deepEqual(done.result, { type: 'str_replace', oldStart: 2, oldLines: 2, newStart: 2, newLines: 1, lines: ['-two', '-three', '+TWO'] });
  assert.equal(fs.readFileSync(path.join(dir, 'sub/a.txt'), 'utf8'), 'one\nTWO\nfour\n');
  fs.writeFileSync(path.join(dir, 'twice.txt'), 'ab ab');
  for (const old of ['ab', 'zz']) {
    const refused = (await edit({ command: 'str_replace', path: 'twice.txt', old_str: old, new_str: 'c' })).result;
    assert.equal(refused.type === 'error' && refused.code, 'invalid_tool_input');
  }
  assert.equal(fs.readFileSync(path.join(dir, 'twice.txt'), 'utf8'), 'ab ab');
  const unknown = (await edit({ command: 'insert', path: 'twice.txt' })).result;
  assert.equal(unknown.type === 'error' && unknown.code, 'invalid_tool_input');
});

test('bash: an empty command is invalid input and runs nothing', async () => {
  let ran = 0;
  const bash = bashCodeExecutionTool({ run: async () => (ran++, { result: {} as RunResult, written: [] }) }, lease, 30_000);
  const out = await bash.run('{"command":"  "}', new AbortController().signal);
  assert.ok(typeof out !== 'string');
  assert.equal((out.data as BashRunData).status, 'invalid');
  assert.equal(ran, 0);
});
