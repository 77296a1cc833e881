import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate } from 'node:timers/promises';
import { normalizeText, NORMALIZE_SLICE_CHARS } from './plain-text.ts';

/** The same rules in one pass, for comparison. */
function reference(text: string): string {
  const lines = text
    .replace(/\r\n?|[\f\v]/g, '\n')
    .replace(/[\0-\x08\x0e-\x1f\x7f]/g, '')
    .split('\n')
    .map((l) => l.trimEnd());
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').replace(/^\n+|\n+$/g, '');
}

test('normalising in slices gives what one pass gives, whatever falls on a slice boundary', async () => {
  const pieces = ['word', ' ', '\t', '\n', '\r\n', '\r', '\n\n\n', '  \n', '\f', '\x07', 'é', '😀', '\u00a0'];
  let seed = 1;
  const next = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  for (let round = 0; round < 4; round++) {
    const parts: string[] = [];
    let length = 0;
    while (length < NORMALIZE_SLICE_CHARS * 2.5) {
      const p = pieces[next(pieces.length)]!;
      parts.push(p);
      length += p.length;
    }
    const text = parts.join('');
    assert.equal(await normalizeText(text), reference(text), `round ${round}`);
  }
  // A \r\n pair, blank lines and a surrogate pair right at the first boundary.
  const at = NORMALIZE_SLICE_CHARS;
  const edge = 'a'.repeat(at - 2) + '  \r\n\r\n\r\n😀x\n' + 'b'.repeat(10);
  assert.equal(await normalizeText(edge), reference(edge));
});

test('lone surrogates become U+FFFD', async () => {
  assert.equal(await normalizeText('a\ud800b\udc00c'), 'a\ufffdb\ufffdc');
});

test('yields to the event loop between slices and stops on abort', async () => {
  const text = ('line of text\n'.repeat(10) + '\n\n').repeat((NORMALIZE_SLICE_CHARS * 3) / 140);
  let turns = 0;
  let running = true;
  void (async () => {
    while (running) {
      turns++;
      await setImmediate();
    }
  })();
  await normalizeText(text);
  running = false;
  assert.ok(turns >= 3, `${turns} turns`);
  const controller = new AbortController();
  const pending = normalizeText(text, controller.signal);
  controller.abort(new Error('stop'));
  await assert.rejects(pending, /stop/);
});
