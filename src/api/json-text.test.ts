// The chunked JSON writer: the same text as JSON.stringify (typed arrays as lists), in
// chunks, without holding the event loop on six million numbers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asJsonList, jsonChunks, jsonText } from './json-text.ts';

const asLists = (_key: string, v: unknown) => (ArrayBuffer.isView(v) && !(v instanceof DataView) ? Array.from(v as Float32Array) : v);

test('writes what JSON.stringify writes', async () => {
  const values: unknown[] = [
    null,
    0,
    -0,
    1e21,
    'text "quoted" \u2028 \ud800',
    true,
    [],
    {},
    [1, 'two', null, undefined, () => 1, { a: undefined, b: [NaN, Infinity, -1.5] }],
    { date: new Date(0), boxed: [new Number(3), new String('s'), new Boolean(false)], fn: () => 1, nested: { deep: [[[]]] } },
    Array.from({ length: 1000 }, (_, i) => (i % 7 === 0 ? { i } : i % 5 === 0 ? `s${i}` : i / 3)),
    { toJSON: (key: string) => `key:${key}` },
  ];
  for (const v of values) assert.equal(await jsonText(v), JSON.stringify(v), JSON.stringify(v)?.slice(0, 80));
  assert.equal(await jsonText(undefined), '');
});

test('typed arrays are lists of numbers, non-finite values null', async () => {
  const f = new Float32Array([0.1, -2.5, Number.NaN, 3e-8]);
  const text = await jsonText({ v: f, list: [f] });
  assert.equal(text, JSON.stringify({ v: f, list: [f] }, asLists));
  const parsed = JSON.parse(text) as { v: (number | null)[] };
  assert.equal(parsed.v[0], Math.fround(0.1));
  assert.equal(parsed.v[2], null);
  // asJsonList makes JSON.stringify agree too.
  assert.equal(JSON.stringify({ v: asJsonList(new Float32Array([0.5, 1])) }), '{"v":[0.5,1]}');
});

test('circular values and BigInt throw as JSON.stringify does', async () => {
  const a: Record<string, unknown> = {};
  a.self = a;
  await assert.rejects(jsonText(a), TypeError);
  await assert.rejects(jsonText({ n: 1n }), TypeError);
});

test('six million numbers: chunks of 64 KB, and turns of the event loop all along (JSON.stringify holds it about a second)', async () => {
  const value = { data: Array.from({ length: 2048 }, (_, i) => ({ object: 'embedding', index: i, embedding: Float32Array.from({ length: 3072 }, () => Math.random() - 0.5) })) };
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  let chunks = 0;
  let length = 0;
  try {
    for await (const chunk of jsonChunks(value)) {
      chunks++;
      length += chunk.length;
      assert.ok(chunk.length < 200_000);
    }
  } finally {
    clearInterval(timer);
  }
  assert.ok(chunks > 100);
  assert.ok(length > 2048 * 3072 * 2);
  // Slices are a few ms; the bound leaves room for garbage collection on a loaded machine.
  assert.ok(longest < 250, `the event loop was held ${longest.toFixed(1)} ms`);
});
