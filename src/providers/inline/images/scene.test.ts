// The offline image engine's reading of a prompt: colours, objects, counts, setting, sides.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COLOURS, MAX_OBJECTS, MAX_PER_KIND, readScene } from './scene.ts';

test('objects with their counts and colours, the setting, loose colours', () => {
  const s = readScene('Three red balloons and a yellow sun over a house with 2 trees at sunset');
  assert.equal(s.setting, 'sunset');
  assert.deepEqual(
    s.objects.map((o) => [o.kind, o.count, o.colour]),
    [['balloon', 3, COLOURS.red], ['sun', 1, COLOURS.yellow], ['house', 1, undefined], ['tree', 2, undefined]],
  );
  assert.deepEqual(s.colours, []);
  const edit = readScene('make it purple with three cats on the left');
  assert.deepEqual(edit.colours, [COLOURS.purple]);
  assert.deepEqual(edit.objects.map((o) => [o.kind, o.count, o.colour, o.side]), [['cat', 3, undefined, 'left']]);
  assert.equal(readScene('a cat on a pink background').background, COLOURS.pink);
  assert.equal(readScene('boats on the ocean at night').setting, 'ocean');
  assert.equal(readScene('cats').objects[0]!.count, 3);
});

test('bounded: counts capped per kind and in all; a prompt of 4000 characters reads in one pass', () => {
  assert.equal(readScene('999 stars').objects[0]!.count, MAX_PER_KIND);
  const many = readScene('twelve cats twelve dogs twelve trees twelve houses twelve cars twelve boats');
  assert.ok(many.objects.reduce((n, o) => n + o.count, 0) <= MAX_OBJECTS);
  const long = readScene('a red star and '.repeat(300));
  assert.equal(long.objects.length, 1);
  assert.equal(long.objects[0]!.count, MAX_PER_KIND);
});
