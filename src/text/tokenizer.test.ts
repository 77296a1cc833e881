import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { chunks, countTokens, countTokensAsync, decodeTokens, encodeLazily, encodePrefix, encodeText, MAX_RUN_BYTES, SYNC_CHARS, TokenCounter, UnknownTokenError } from './tokenizer.ts';

const PLAIN = { disallowedSpecial: new Set<string>() };
const reference = (text: string): number[] => encode(text, PLAIN);

const ORDINARY: Record<string, string> = {
  prose: fs.readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8'),
  code: fs.readFileSync(new URL('./tokenizer.ts', import.meta.url), 'utf8'),
  'compact JSON': JSON.stringify(JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))),
  'pretty JSON': fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  'emoji and CJK': 'Hello, wörld! 日本語のテキストです。中文也可以，对吧？ 🎉🎉 emoji 👩‍👩‍👧 and ’quotes’ — done.\r\n한국어 텍스트 ½ Ⅻ ²',
  'contractions and case': "It's JSONParser's job: they'll say HTTPServer isn't camelCaseWords, O'Neil'S.\n\n\tend.\n",
  'special-token text': 'a <|endoftext|> b <|im_start|>',
};

test('counts and ids equal gpt-tokenizer for ordinary texts', () => {
  for (const [name, text] of Object.entries(ORDINARY)) {
    assert.deepEqual(encodeText(text), reference(text), name);
    assert.equal(countTokens(text), reference(text).length, name);
  }
});

test('cuts only where o200k splits anyway: random tricky strings encode as a whole', () => {
  // Tiny chunks and no forced cut, so every safe cut is taken.
  const alphabet = ['a', 'Z', 'aB', 'HTML', 'É', 'e\u0301', '\u0301', 'ß', 'ǅ', 'ʰ', '日', '🎉', '1', '٣', '½', ' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u3000', '.', ',', '/', "'", "'s", "'LL", '"', '{', '-', '_', '$'];
  let seed = 7;
  const next = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  for (let t = 0; t < 3000; t++) {
    let s = '';
    for (let k = 1 + next(24); k > 0; k--) s += alphabet[next(alphabet.length)];
    const parts = [...chunks(s, 1, Infinity)];
    assert.equal(parts.join(''), s);
    assert.deepEqual(parts.flatMap(reference), reference(s), JSON.stringify(s));
  }
});

test('a run without a safe cut is cut at MAX_RUN_BYTES, never inside a character', () => {
  for (const text of ['A'.repeat(5000), '日'.repeat(3000), '🎉'.repeat(2000)]) {
    const parts = [...chunks(text)];
    assert.equal(parts.join(''), text);
    for (const p of parts) {
      assert.ok(Buffer.byteLength(p) <= MAX_RUN_BYTES + 4);
      assert.ok(!/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(p), 'a surrogate pair was split');
    }
  }
});

test('a 100,000-character run of one letter counts about as the whole would', () => {
  // Forced cuts may each move a token boundary: the count stays within one token a cut.
  const perChar = reference('A'.repeat(2048)).length / 2048;
  const n = countTokens('A'.repeat(100_000));
  assert.ok(Math.abs(n - perChar * 100_000) <= 100_000 / MAX_RUN_BYTES + 1, `${n}`);
});

test('a 10 MB prompt is counted, asynchronously, and the event loop keeps turning meanwhile', async () => {
  const unit = 'The quick brown fox jumps over the lazy dog; AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA 12345 🎉 日本語.\n';
  const text = unit.repeat(Math.ceil(10_000_000 / unit.length));
  let turns = 0;
  let counting = true;
  const tick = (): void => {
    if (!counting) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick); // scheduled before the count starts
  const n = await countTokensAsync(text);
  counting = false;
  assert.ok(turns > 10, `only ${turns} turns of the event loop ran during the count`);
  const copies = text.length / unit.length;
  assert.ok(Math.abs(n - copies * countTokens(unit)) <= copies, `${n}`);
});

test('small texts are counted without a turn of the event loop, larger ones with some', async () => {
  let ran = false;
  setImmediate(() => {
    ran = true;
  });
  await countTokensAsync('x'.repeat(SYNC_CHARS));
  assert.equal(ran, false, 'a small text needs no turn of the event loop');
  await countTokensAsync('word '.repeat(20_000));
  assert.equal(ran, true);
});

test('TokenCounter sums several texts', async () => {
  const counter = new TokenCounter();
  for (const text of Object.values(ORDINARY)) await counter.add(text);
  assert.equal(counter.total, Object.values(ORDINARY).reduce((sum, t) => sum + reference(t).length, 0));
});

test('output is encoded only as far as it is pulled', () => {
  const huge = 'word '.repeat(2_000_000); // 10 MB
  const ids = encodePrefix(huge, 16);
  assert.ok(ids.length > 16 && ids.length < 100, `${ids.length}`);
  assert.deepEqual(ids, reference('word '.repeat(40)).slice(0, ids.length));
  const first = encodeLazily(huge).next();
  assert.ok(!first.done && first.value.length < 100);
  assert.deepEqual(encodePrefix('short', 16), reference('short'));
});

test('TokenCounter stops past a limit; decodeTokens reads ids back and names an unknown one', async () => {
  const text = ORDINARY.prose!;
  const exact = countTokens(text);
  const counter = new TokenCounter();
  const stopped = await counter.add(text, 100);
  assert.ok(stopped > 100 && stopped < exact, `${stopped} of ${exact}`);
  assert.equal(await new TokenCounter().add(text, exact), exact);
  for (const sample of Object.values(ORDINARY)) assert.equal(decodeTokens(encodeText(sample)), sample);
  // The vocabulary has gaps: 199998 is below its size and no token.
  assert.throws(() => decodeTokens([9906, 199998, 1]), (e: unknown) => e instanceof UnknownTokenError && e.token === 199998);
  assert.throws(() => decodeTokens([5_000_000]), (e: unknown) => e instanceof UnknownTokenError && e.token === 5_000_000);
});
