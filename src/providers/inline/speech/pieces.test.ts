// The pieces the offline engine reads one after the other: sentences, long ones cut at a
// comma or a space, a run without spaces cut hard; none empty, each within its bound,
// and together every word of the text in order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FIRST_PIECE, MAX_PIECE, speechPieces } from './pieces.ts';

const words = (s: string) => s.split(/\s+/).filter(Boolean);

test('sentences become pieces; the first is short; nothing is lost', () => {
  const text = 'Hello there. How are you today? I am fine!\nA new line; then a clause: and the end';
  const pieces = speechPieces(text);
  assert.deepEqual(pieces, ['Hello there.', 'How are you today?', 'I am fine!', 'A new line;', 'then a clause:', 'and the end']);
  const long = `${'word, '.repeat(200)}end. ${'x'.repeat(1000)} ${'Another sentence follows here. '.repeat(20)}`;
  const got = speechPieces(long);
  assert.ok(got[0]!.length <= FIRST_PIECE);
  for (const p of got) assert.ok(p.length > 0 && p.length <= MAX_PIECE, `${p.length}`);
  assert.deepEqual(words(got.join(' ')).join(''), words(long).join(''));
});

test('whitespace alone has no pieces', () => {
  assert.deepEqual(speechPieces(' \n\t '), []);
});
