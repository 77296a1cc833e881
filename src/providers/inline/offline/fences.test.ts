import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fencedBlocks, proseOnly } from './fences.ts';

test('fenced blocks are read exactly as written: indentation, quotes, trailing spaces, blank lines', () => {
  const code = 'for i in range(2):\n    print("a\'b", i)   \n\n\tx = """\n  y\n"""  ';
  assert.deepEqual(fencedBlocks(`Please run:\n\`\`\`python\n${code}\n\`\`\`\nThanks.`), [{ lang: 'python', code }]);
});

test('the info string is read by its first word, in any case; ~~~ and longer fences close only their own kind', () => {
  const text = ['```Python3 title="x"', 'a', '```', '~~~~SH', 'b', '```', 'still b', '~~~~', '````', 'plain ``` inside', '````'].join('\n');
  assert.deepEqual(fencedBlocks(text), [
    { lang: 'python3', code: 'a' },
    { lang: 'sh', code: 'b\n```\nstill b' },
    { lang: '', code: 'plain ``` inside' },
  ]);
});

test('CRLF line breaks are kept inside a block but not before its closing fence; an indented fence unindents its lines', () => {
  assert.deepEqual(fencedBlocks('```py\r\na\r\nb  \r\n```\r\n'), [{ lang: 'py', code: 'a\r\nb  ' }]);
  assert.deepEqual(fencedBlocks('  ```bash\n  echo 1\n echo 2\n    echo 3\n  ```'), [{ lang: 'bash', code: 'echo 1\necho 2\n  echo 3' }]);
  assert.deepEqual(fencedBlocks('```python\n```'), [{ lang: 'python', code: '' }]);
});

test('inline code is no block; an open block runs to the end unless the text was cut', () => {
  assert.deepEqual(fencedBlocks('run ```python print(1)``` now'), []);
  assert.deepEqual(fencedBlocks('```python\nprint(1)\n'), [{ lang: 'python', code: 'print(1)' }]);
  const long = '```python\nprint(1)\n' + '#'.repeat(100);
  assert.deepEqual(fencedBlocks(long, 50), [], 'its end is unseen: not run cut short');
});

test('a hostile long message is read in one pass (a quadratic scan would not end within the test timeout)', () => {
  const hostile = '```' + '`'.repeat(200_000) + '\n' + ' ~~~\n'.repeat(100_000) + 'x'.repeat(500_000);
  assert.deepEqual(fencedBlocks(hostile), [], 'its block is still open when the read stops');
  assert.equal(proseOnly(hostile).length, hostile.length);
});

test('prose leaves out code, keeping every index', () => {
  const text = 'Run `timeout 5s x` now\n```bash\ntimeout 9s y\n```\ndone';
  const prose = proseOnly(text);
  assert.equal(prose.length, text.length);
  assert.doesNotMatch(prose, /timeout/);
  assert.equal(prose.indexOf('done'), text.indexOf('done'));
});
