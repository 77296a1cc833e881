import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHints } from './hints.ts';

test('mentions: whole words, any case, ASCII or not', () => {
  const h = createHints('Die Einheit ist CELSIUS, in Zürich (ΟΔΟΣ) — x1 and _y.');
  assert.equal(h.mentions('celsius'), true);
  assert.equal(h.mentions('cel'), false, 'part of a word');
  assert.equal(h.mentions('zürich'), true);
  assert.equal(h.mentions('ZÜRICH'), true);
  assert.equal(h.mentions('οδος'), true, 'Greek final sigma folds like the /iu expression');
  assert.equal(h.mentions('x'), false, 'followed by a digit');
  assert.equal(h.mentions('y'), true, 'an underscore is not a letter or digit');
  assert.equal(h.mentions(''), false);
});

test('hints read the start and the end of a long message', () => {
  const long = 'Set the color to blue. ' + 'filler words '.repeat(100_000) + 'The unit is kelvin.';
  const h = createHints(long);
  assert.deepEqual(h.forProperty('color', { type: 'string' })[0], 'blue');
  assert.equal(h.mentions('kelvin'), true);
});
